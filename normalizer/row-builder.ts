/**
 * The row builders of the normalizer: given a stream's columns and their converters, a function from a record to
 * its row. Generated straight-line code on the hot path, a loop as fallback and as the reference.
 */
import type { NormalizedRow } from '../connectors/types.js';
import type { ColumnSpec } from '../schemas/columns.js';
import { type Converter, INVALID } from './converters.js';

/**
 * Builds the row of one record: returns the row, or the index of the column whose converter failed. Sets
 * `counts.present` to how many distinct source fields the record carries (to detect unknown fields cheaply). The
 * custom-fields column is left null: the normalizer fills it (and counts its members).
 */
type RowBuilder = (record: Record<string, unknown>, counts: { present: number }) => NormalizedRow | number;

/**
 * The row builder as generated code: one straight-line function per stream with the field names as literals, so
 * every property read is monomorphic and the row is one object literal of a fixed shape: several times faster than
 * the generic loop below on registrants (test/unit/normalize-throughput.ts measures both). Names only appear as `JSON.stringify`d string literals, and
 * they are identifiers validated by the catalogue and `resolveStream`.
 */
export function generatedRowBuilder(
  columns: readonly ColumnSpec[],
  converters: readonly Converter[],
): RowBuilder | null {
  // `"__proto__": x` in an object literal would set the prototype instead of a property.
  if (columns.some((c) => c.name === '__proto__' || c.source === '__proto__')) return null;
  const quote = JSON.stringify;
  const varOfSource = new Map<string, string>();
  const lines: string[] = ['return function buildRow(r, counts) {', 'let p = 0;'];
  for (const column of columns) {
    if (column.part === 'custom' || varOfSource.has(column.source)) continue;
    const variable = `v${varOfSource.size}`;
    varOfSource.set(column.source, variable);
    lines.push(`const ${variable} = r[${quote(column.source)}]; if (${variable} !== undefined) p++;`);
  }
  columns.forEach((column, i) => {
    // The custom-fields column is filled by the normalizer from the record's `c_<id>` members (custom-values.ts).
    if (column.part === 'custom') lines.push(`const o${i} = null;`);
    else lines.push(`const o${i} = c[${i}](${varOfSource.get(column.source)}); if (o${i} === INVALID) return ${i};`);
  });
  lines.push('counts.present = p;');
  lines.push(`return { ${columns.map((column, i) => `${quote(column.name)}: o${i}`).join(', ')} };`, '};');
  try {
    const factory = new Function('c', 'INVALID', lines.join('\n')) as (
      c: readonly Converter[],
      invalid: typeof INVALID,
    ) => RowBuilder;
    return factory(Object.freeze([...converters]), INVALID);
  } catch {
    // Code generation disallowed (--disallow-code-generation-from-strings): use the loop.
    return null;
  }
}

/** The same row builder as a loop (fallback, and the reference the generated one is tested against). */
export function loopRowBuilder(columns: readonly ColumnSpec[], converters: readonly Converter[]): RowBuilder {
  const n = columns.length;
  const names = columns.map((c) => c.name);
  const sources = columns.map((c) => c.source);
  const firstOfSource = sources.map((s, i) => sources.indexOf(s) === i);
  const custom = columns.map((c) => c.part === 'custom');
  return (record, counts) => {
    const row: NormalizedRow = {};
    let present = 0;
    for (let i = 0; i < n; i++) {
      if (custom[i]) {
        row[names[i]!] = null;
        continue;
      }
      const value = record[sources[i]!];
      if (value !== undefined && firstOfSource[i]) present++;
      const out = converters[i]!(value);
      if (out === INVALID) return i;
      row[names[i]!] = out;
    }
    counts.present = present;
    return row;
  };
}
