/**
 * Record normalization: one API record in, one row of physical column values out (the forms `ColumnSpec` fixes).
 *
 * The hot path is compiled once per stream: `physicalColumns` gives every column, each column gets a converter
 * function chosen by its type, and a generated straight-line function (field names as literals) reads the fields,
 * runs the converters and builds the row as one object literal. No zod parse runs per record: on realistic
 * registrants (`npx tsx test/unit/normalize-throughput.ts` measures) the zod record schema of `records.ts` (same
 * converters as per-field transforms) is an order of magnitude slower than this path, and even a zod `looseObject`
 * that checks nothing but `id` is slower than `JSON.parse` of the pages themselves. So zod
 * states and checks the record structure (records.ts, held to agree with this module by tests) but stays off the
 * hot path, where it would make normalization slower than the download it follows.
 *
 * Value rules are in converters.ts. Record rules (each is tested):
 * - Unknown fields never fail a record. Those that may be columns come back in `extras` with an inferred type and
 *   their normalized value in the row (schema evolution). `_`-prefixed members (`_links`, `_meta`) are ignored, and
 *   so is a field whose value gives no type (null, `""`). Any other field that cannot be a column (a name equal to a
 *   column, system, key or scope column in any case, an odd name, a value that cannot be stored) is kept out of the
 *   row and reported in `skipped` (field-names.ts says which and why): never dropped silently.
 * - A stream with custom fields has one custom-fields column holding the record's `c_<id>` answers as JSON
 *   (custom-values.ts), whatever fields are listed: `c_<id>` members are never columns and never extras. Answers of
 *   fields with a configured type (`customFieldTypes`) are converted to it; one that does not convert is left out
 *   of the value and reported in `skipped`, the record kept (custom-types.ts).
 * - With a secret scrubber, every text value stored (text, JSON, text lists, extras) and the raw JSON of a rejected
 *   record (`raw`, see storable.ts) are scrubbed of the credentials evsync holds.
 * - `keyId` reads a record's id with the key column's own converter, so an id sweep accepts exactly the ids a walk
 *   accepts (0 and negative ids included).
 */
import { isCustomFieldName, type NormalizedRow, type ResolvedStream, type ScalarType } from '../connectors/types.js';
import { type ColumnSpec, physicalColumns } from '../schemas/columns.js';
import {
  type Converter,
  capReason,
  clearFailureDetail,
  columnConverter,
  columnFailureReason,
  converterFor,
  describeValue,
  INVALID,
  inferType,
  strictColumnNames,
} from './converters.js';
import { customFieldsValue } from './custom-values.js';
import { ExtraFieldNames } from './field-names.js';
import { generatedRowBuilder, loopRowBuilder } from './row-builder.js';
import type { SecretScrubber } from './secrets.js';
import { storableRaw } from './storable.js';

// What tests and callers outside this folder use of the converters.
export { canonicalDecimal, converterFor, INVALID, inferType } from './converters.js';

/** An undeclared field kept out of a row, and why (a name DuckDB would confuse with a column, a value not storable). */
interface SkippedField {
  readonly field: string;
  readonly reason: string;
}

export type NormalizeResult =
  | {
      readonly ok: true;
      readonly row: NormalizedRow;
      readonly extras: Record<string, ScalarType>;
      /** Fields of this record left out of the row; absent when none (the usual case allocates nothing). */
      readonly skipped?: readonly SkippedField[];
    }
  | {
      readonly ok: false;
      readonly reason: string;
      /** What `_evsync.rejected.raw` may hold of the record: envelope members out, secrets scrubbed (storable.ts). */
      readonly raw: unknown;
    };

/** The id a record's key field gives, by the same converter the row's key column uses. */
type KeyIdResult = { readonly ok: true; readonly id: number } | { readonly ok: false; readonly reason: string };

/** One kind of skipped field over the normalizer's life (a run's stream), for recording once instead of per row. */
export interface SkippedFieldSummary extends SkippedField {
  readonly count: number;
}

export interface Normalizer {
  readonly stream: ResolvedStream;
  readonly columns: readonly ColumnSpec[];
  normalize(raw: unknown): NormalizeResult;
  /**
   * The id of a record for an id sweep: accepted exactly when a walk's normalize would accept the record's key
   * (any integer, 0 and negatives included), so a row a walk loaded is never missing from the sweep's seen ids.
   */
  keyId(raw: unknown): KeyIdResult;
  /** Every distinct (field, reason) skipped so far, with how many records carried it. */
  skippedFields(): readonly SkippedFieldSummary[];
}

interface NormalizerOptions {
  /** Use the generic loop instead of generated code (tests compare the two). */
  readonly interpreted?: boolean;
  /** Scrubs held credentials from every stored text value and from rejected raw JSON (see secrets.ts). */
  readonly scrub?: SecretScrubber;
}

/** Distinct skipped (field, reason) pairs a normalizer lists; the rest are counted together. */
const MAX_SUMMARY = 1000;

/** Types whose values are free text (other types are validated formats that cannot hold a credential). */
const FREE_TEXT: ReadonlySet<ScalarType> = new Set<ScalarType>(['text', 'json']);

/** `value` with its strings scrubbed (a string, or the strings of a list). */
function scrubValue<T>(value: T, scrub: SecretScrubber): T {
  if (typeof value === 'string') return scrub.text(value) as T;
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item !== 'string') continue;
      const clean = scrub.text(item);
      if (clean === item) continue;
      out ??= [...value];
      out[i] = clean;
    }
    return (out ?? value) as T;
  }
  return value;
}

/** Compile the normalizer of one resolved stream (once per run and stream; reuse it for every record). */
/** The columns' converters, each wrapped to scrub its output when a scrubber is given. */
function scrubbedConverters(
  columns: readonly ColumnSpec[],
  strict: ReadonlySet<string>,
  scrub: SecretScrubber | undefined,
): Converter[] {
  return columns.map((c) => {
    const convert = columnConverter(c, strict.has(c.name));
    // Wrapped only when scrubbing: without a scrubber the hot path runs the bare converters.
    if (!scrub) return convert;
    // Text values shorter than the shortest secret (most of them) cost one comparison.
    if (FREE_TEXT.has(c.type)) {
      return (v: unknown) => {
        const out = convert(v);
        return typeof out === 'string' && out.length >= scrub.shortest ? scrub.text(out) : out;
      };
    }
    return c.type === 'text[]' ? (v: unknown) => scrubValue(convert(v), scrub) : convert;
  });
}

/** Skipped fields: each record's list, and a bounded summary of every distinct (field, reason) with its count. */
function skippedFieldLog(text: (s: string) => string) {
  const summary = new Map<string, { field: string; reason: string; count: number }>();
  // A service inventing a new field name per record must not grow the summary without bound.
  const overflow = { field: '*', reason: `more kinds of skipped fields than the ${MAX_SUMMARY} listed`, count: 0 };
  return {
    skip(list: SkippedField[] | undefined, field: string, reason: string): SkippedField[] {
      const entry = { field: text(field), reason: text(reason) };
      const id = `${entry.field}\u0000${entry.reason}`;
      const seen = summary.get(id) ?? (summary.size < MAX_SUMMARY ? undefined : overflow);
      if (seen) seen.count++;
      else summary.set(id, { ...entry, count: 1 });
      const out = list ?? [];
      out.push(entry);
      return out;
    },
    summary: (): SkippedFieldSummary[] =>
      [...summary.values(), ...(overflow.count > 0 ? [overflow] : [])].map((s) => ({ ...s })),
  };
}

/** The undeclared fields of a record: extras into the row, the others reported. Only runs when the record has any. */
function undeclaredFields(
  stream: ResolvedStream,
  columns: readonly ColumnSpec[],
  scrub: SecretScrubber | undefined,
  log: ReturnType<typeof skippedFieldLog>,
) {
  // The custom-fields column is not read from a field of its name: a member `custom_fields` is an undeclared field.
  const hasCustom = columns.some((c) => c.part === 'custom');
  const sources = new Set(columns.filter((c) => c.part !== 'custom').map((c) => c.source));
  const fieldNames = new ExtraFieldNames(stream, columns);
  return (record: Record<string, unknown>, row: NormalizedRow, extras: Record<string, ScalarType>) => {
    let skipped: SkippedField[] | undefined;
    for (const key of Object.keys(record)) {
      if (sources.has(key) || (hasCustom && isCustomFieldName(key))) continue;
      const verdict = fieldNames.classify(key);
      if (verdict === 'ignore') continue;
      const value = record[key];
      const type = inferType(value);
      // A field without a value (null, "") carries nothing to lose, whatever its name.
      if (type === null) continue;
      if (verdict !== 'extra') {
        skipped = log.skip(skipped, key, `field "${key}" not stored: ${verdict.reason}`);
        continue;
      }
      clearFailureDetail();
      const out = converterFor(type)(value);
      if (out === INVALID) {
        skipped = log.skip(skipped, key, columnFailureReason({ name: key, source: key, type }, value));
        continue;
      }
      fieldNames.adopt(key);
      row[key] = scrub ? scrubValue(out, scrub) : out;
      extras[key] = type;
    }
    return skipped;
  };
}

/** The id of a record for an id sweep (Normalizer.keyId). */
function keyIdReader(
  stream: ResolvedStream,
  columns: readonly ColumnSpec[],
  converters: readonly Converter[],
  scrub: SecretScrubber | undefined,
  text: (s: string) => string,
): (raw: unknown) => KeyIdResult {
  const keyIndex = stream.key.length === 1 ? columns.findIndex((c) => c.name === stream.key[0]) : -1;
  return (raw) => {
    scrub?.refresh();
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      return { ok: false, reason: `record is ${describeValue(raw)}, not an object` };
    }
    if (keyIndex < 0) return { ok: false, reason: `stream "${stream.name}" has no single id key` };
    const column = columns[keyIndex]!;
    const value = (raw as Record<string, unknown>)[column.source];
    clearFailureDetail();
    const id = converters[keyIndex]!(value);
    if (id === INVALID) return { ok: false, reason: text(columnFailureReason(column, value)) };
    if (id === null || id === '') return { ok: false, reason: `key field "${column.name}" is missing or empty` };
    if (typeof id !== 'number') return { ok: false, reason: `key field "${column.name}" is not an integer id` };
    return { ok: true, id };
  };
}

function assertKeyColumns(stream: ResolvedStream, columns: readonly ColumnSpec[]): void {
  const names = new Set(columns.map((c) => c.name));
  const missingKeys = stream.key.filter((k) => !names.has(k));
  if (missingKeys.length > 0) {
    throw new Error(`stream "${stream.name}": key column(s) ${missingKeys.join(', ')} are not among its columns`);
  }
}

export function createNormalizer(stream: ResolvedStream, options: NormalizerOptions = {}): Normalizer {
  const columns = physicalColumns(stream);
  const { scrub } = options;
  const converters = scrubbedConverters(columns, strictColumnNames(stream), scrub);
  const build =
    (options.interpreted ? null : generatedRowBuilder(columns, converters)) ?? loopRowBuilder(columns, converters);
  const customIndex = columns.findIndex((c) => c.part === 'custom');
  const customName = customIndex < 0 ? null : columns[customIndex]!.name;
  assertKeyColumns(stream, columns);
  const keyColumns = [...stream.key];
  const counts = { present: 0 };
  const text = (s: string) => (scrub ? scrub.text(s) : s);
  // Answers shorter than the shortest secret (most of them) cost one comparison.
  const scrubAnswer = scrub ? (s: string) => (s.length >= scrub.shortest ? scrub.text(s) : s) : undefined;
  const log = skippedFieldLog(text);
  const undeclared = undeclaredFields(stream, columns, scrub, log);
  const reject = (raw: unknown, reason: string): NormalizeResult => ({
    ok: false,
    reason: text(reason),
    raw: storableRaw(raw, scrub?.text),
  });

  function normalize(raw: unknown): NormalizeResult {
    scrub?.refresh();
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      return reject(raw, `record is ${describeValue(raw)}, not an object`);
    }
    const record = raw as Record<string, unknown>;
    clearFailureDetail();
    const row = build(record, counts);
    if (typeof row === 'number') {
      const column = columns[row]!;
      return reject(raw, columnFailureReason(column, record[column.source]));
    }
    for (const k of keyColumns) {
      const keyValue = row[k];
      if (keyValue === null || keyValue === '') return reject(raw, `key field "${k}" is missing or empty`);
    }
    let skipped: SkippedField[] | undefined;
    if (customName !== null) {
      const custom = customFieldsValue(record, scrubAnswer, stream.customFieldTypes);
      if (custom.value === INVALID) {
        return reject(raw, columnFailureReason(columns[customIndex]!, {}).replace('"custom_fields"', 'c_<id>'));
      }
      counts.present += custom.count;
      row[customName] = custom.value;
      // Answers that do not convert to their configured type: left out of the value, reported (custom-types.ts).
      for (const failure of custom.failures ?? []) skipped = log.skip(skipped, failure.field, failure.reason);
    }
    const extras: Record<string, ScalarType> = {};
    // Counting keys allocates nothing; the name-by-name scan only runs when the record has more than the known.
    let total = 0;
    for (const _ in record) total++;
    if (total > counts.present) {
      const more = undeclared(record, row, extras);
      if (more) skipped = skipped ? [...skipped, ...more] : more;
    }
    return skipped ? { ok: true, row, extras, skipped } : { ok: true, row, extras };
  }

  return {
    stream,
    columns,
    normalize(raw: unknown): NormalizeResult {
      try {
        return normalize(raw);
      } catch (err) {
        // Converters do not throw on JSON input; this guards the sync against anything else (e.g. getters).
        const message = err instanceof Error ? err.message : String(err);
        try {
          return reject(raw, capReason(`normalization failed: ${message}`));
        } catch {
          return { ok: false, reason: text(capReason(`normalization failed: ${message}`)), raw: null };
        }
      }
    },
    keyId: keyIdReader(stream, columns, converters, scrub, text),
    skippedFields: log.summary,
  };
}
