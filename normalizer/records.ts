/**
 * Zod record schemas, generated from the stream definitions so that the catalogue stays the one place a field's
 * type is written down. A schema accepts any object (unknown fields are tolerated: the spec leaves most fields
 * "not shown"), requires the key fields, converts every declared field with the same converters the normalizer
 * uses, and outputs the row of physical columns.
 *
 * The sync's hot path does not parse records with these: `createNormalizer` (normalize.ts) runs the same
 * converters in generated code, 15-20x faster (numbers in normalize.ts; script test/unit/normalize-throughput.ts).
 * These schemas are the structural statement of each record type, for code where speed does not matter (single
 * records, webhook payloads, simulator checks), and tests hold them to the normalizer's results.
 */
import { z } from 'zod';
import { catalogue, resolveStream } from '../connectors/index.js';
import type { NormalizedRow, NormalizedValue, ResolvedStream } from '../connectors/types.js';
import { type ColumnSpec, physicalColumns } from '../schemas/columns.js';
import { type Converter, columnConverter, columnFailureReason, INVALID, strictColumnNames } from './converters.js';
import { customFieldsValue } from './custom-values.js';

type RecordSchema = z.ZodType<NormalizedRow, unknown>;

/** The schema of one field on the wire: converts its raw value to the values of the columns it feeds. */
function fieldSchema(specs: readonly ColumnSpec[], isKey: readonly boolean[], strict: readonly boolean[]) {
  const converters: Converter[] = specs.map((spec, i) => columnConverter(spec, strict[i]));
  return z
    .unknown()
    .optional()
    .transform((value, ctx): NormalizedValue[] => {
      const out: NormalizedValue[] = [];
      for (let i = 0; i < specs.length; i++) {
        const converted = converters[i]!(value);
        if (converted === INVALID) {
          ctx.addIssue({ code: 'custom', message: columnFailureReason(specs[i]!, value) });
          return z.NEVER;
        }
        if (isKey[i] && (converted === null || converted === '')) {
          ctx.addIssue({ code: 'custom', message: `key field "${specs[i]!.name}" is missing or empty` });
          return z.NEVER;
        }
        out.push(converted);
      }
      return out;
    });
}

/** The zod schema of a resolved stream's records; output: the row of its physical columns. */
export function recordSchema(stream: ResolvedStream): RecordSchema {
  const columns = physicalColumns(stream);
  const bySource = new Map<string, ColumnSpec[]>();
  // The custom-fields column reads every `c_<id>` member of the record, not a field of its own.
  const custom = columns.find((c) => c.part === 'custom');
  for (const column of columns) {
    if (column === custom) continue;
    const list = bySource.get(column.source);
    if (list) list.push(column);
    else bySource.set(column.source, [column]);
  }
  const shape: Record<string, ReturnType<typeof fieldSchema>> = {};
  const strict = strictColumnNames(stream);
  for (const [source, specs] of bySource) {
    shape[source] = fieldSchema(
      specs,
      specs.map((s) => stream.key.includes(s.name)),
      specs.map((s) => strict.has(s.name)),
    );
  }
  return z.looseObject(shape).transform((parsed, ctx) => {
    const row: NormalizedRow = {};
    const values = parsed as Record<string, NormalizedValue[]>;
    for (const [source, specs] of bySource) {
      const converted = values[source]!;
      for (let i = 0; i < specs.length; i++) row[specs[i]!.name] = converted[i]!;
    }
    if (custom) {
      // Answers that do not convert to their configured type are left out, as the normalizer leaves them.
      const value = customFieldsValue(parsed as Record<string, unknown>, undefined, stream.customFieldTypes).value;
      if (value === INVALID) {
        ctx.addIssue({ code: 'custom', message: 'custom-field values cannot be stored as JSON text' });
        return z.NEVER;
      }
      row[custom.name] = value;
    }
    return row;
  });
}

let defaults: ReadonlyMap<string, RecordSchema> | undefined;

/**
 * The record schema of every catalogue stream as documented (no expansions, no custom fields), by stream name.
 * Built on first use.
 */
export function catalogueRecordSchemas(): ReadonlyMap<string, RecordSchema> {
  defaults ??= new Map(catalogue.map((def) => [def.name, recordSchema(resolveStream(def))]));
  return defaults;
}
