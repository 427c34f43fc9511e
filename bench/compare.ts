/**
 * Comparing the warehouse with the simulator's source, shared by the benchmarks (freshness-measure.ts,
 * catch-up-value.ts) and the engine tests (test/helpers/harness.ts): the stream resolved as the engine resolves it,
 * one comparable form for a value from either side, and a stream's rows against the source's records.
 */
import { customFieldsFromDefinitions, getStream, resolveStream } from '../connectors/index.js';
import type { NormalizedRow, ResolvedStream } from '../connectors/types.js';
import { createNormalizer } from '../normalizer/normalize.js';
import { physicalColumns } from '../schemas/columns.js';
import type { Simulator } from '../src/simulator/index.js';
import type { Warehouse } from '../src/warehouse/index.js';

/** The stream resolved the way the engine resolves it, custom fields from the source's definitions. */
export function resolvedFromTruth(sim: Simulator, name: string): ResolvedStream {
  const def = getStream(name);
  const customs = def.customFields ? customFieldsFromDefinitions(sim.truth(def.customFields.definitions).records) : [];
  return resolveStream(def, { customFields: customs });
}

/** One comparable form for a value from either side (warehouse JSON output or normalized source). */
export function canon(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  // Lists come back from DuckDB's JSON output as JSON text with string items; compare items as text.
  if (Array.isArray(value))
    return JSON.stringify(value.map((v) => (v !== null && typeof v === 'object' ? v : String(v))));
  if (typeof value === 'object') return JSON.stringify(value);
  if (typeof value === 'string' && /^[[{]/.test(value)) {
    try {
      return canon(JSON.parse(value));
    } catch {
      return value;
    }
  }
  return String(value);
}

function keyOf(row: Record<string, unknown>, key: readonly string[]): string {
  return key.map((k) => canon(row[k])).join('|');
}

export interface Difference {
  missing: string[];
  extra: string[];
  changed: { key: string; column: string; source: string | null; warehouse: string | null }[];
}

/**
 * The current rows of a stream's table against the source's current records, column by column. Empty lists mean
 * the warehouse equals the source exactly.
 */
export async function compareStream(sim: Simulator, warehouse: Warehouse, name: string): Promise<Difference> {
  const stream = resolvedFromTruth(sim, name);
  const normalizer = createNormalizer(stream);
  const source = new Map<string, NormalizedRow>();
  for (const raw of sim.truth(name).records) {
    const r = normalizer.normalize(raw);
    if (!r.ok) throw new Error(`source record of ${name} does not normalize: ${r.reason}`);
    source.set(keyOf(r.row, stream.key), r.row);
  }
  const columns = physicalColumns(stream).map((c) => c.name);
  const { rows } = await warehouse.query(`SELECT * FROM "${name}" WHERE _deleted_at IS NULL`);
  const stored = new Map(rows.map((row) => [keyOf(row, stream.key), row]));
  // A run without custom fields (customFields: false) stores none: its custom-fields column is null throughout.
  const noCustomFields = rows.every((row) => row.custom_fields === null || row.custom_fields === undefined);
  const diff: Difference = { missing: [], extra: [], changed: [] };
  for (const [key, row] of source) {
    const got = stored.get(key);
    if (!got) {
      diff.missing.push(key);
      continue;
    }
    for (const column of columns) {
      // The scope column is filled from the scope when the endpoint does not return it.
      if (!(column in row) || (row[column] === null && column === 'event_id')) continue;
      if (column === 'custom_fields' && noCustomFields) continue;
      const a = canon(row[column]);
      const b = canon(got[column]);
      if (a !== b) diff.changed.push({ key, column, source: a, warehouse: b });
    }
  }
  for (const key of stored.keys()) if (!source.has(key)) diff.extra.push(key);
  return diff;
}
