/**
 * The widening rule for columns whose type was inferred (schema evolution), where a later value may not fit.
 *
 * Declared columns are the normalizer's business: it rejects a value its column cannot hold. A column added by
 * schema evolution got its type from the first values seen, so a later value may disagree. Such a value is never
 * truncated, rounded or dropped: the column is widened (ALTER COLUMN ... TYPE, existing values cast without loss)
 * to the narrowest type that holds both, and the change is recorded in `_evsync.schema_changes`.
 *
 *   integer  -> bigint    an integer beyond INTEGER's range
 *   integer, bigint -> double   a fractional number
 *   decimal(p,s) -> decimal(p',s')   a decimal with more digits (up to 38), else text
 *   date -> timestamp     a timestamp
 *   bigint[] -> text[]    a list with non-integer items (strings, fractions)
 *   bigint[], text[] -> json   a list holding objects or lists, or a scalar
 *   json -> text          a string that is not JSON text
 *   any other scalar -> text   anything else (a string in a number column, a list in a scalar column; lists and
 *                         objects are stored as their JSON text, numbers and booleans as their text)
 *
 * `text` holds every value (its JSON or plain text), so widening always ends.
 */
import type { NormalizedValue, ScalarType } from '../../../connectors/types.js';
import { decimalParams, duckdbType } from '../../../schemas/columns.js';

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const DECIMAL_RE = /^-?(\d+)(?:\.(\d+))?$/;
const TIMESTAMP_RE = /^\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)?$/;
const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const TIME_RE = /^\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?$/;

function isJsonText(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

/** Integer and fraction digit counts of a plain decimal (no exponent), or null. */
function decimalDigits(value: string | number): { int: number; frac: number } | null {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value;
  const m = DECIMAL_RE.exec(text);
  if (!m) return null;
  const int = (m[1] ?? '').replace(/^0+(?=\d)/, '').length;
  return { int: m[1] === '0' ? 0 : int, frac: (m[2] ?? '').length };
}

/** Whether `value` lands in a column of `type` exactly as it is (through the JSON staging path). */
export function fits(type: ScalarType, value: NormalizedValue): boolean {
  if (value === null) return true;
  switch (type) {
    case 'text':
      return true;
    case 'json':
      return typeof value !== 'string' || isJsonText(value);
    case 'bigint':
      return typeof value === 'number' && Number.isSafeInteger(value);
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value) && value >= INT32_MIN && value <= INT32_MAX;
    case 'double':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'timestamp':
      return typeof value === 'string' && TIMESTAMP_RE.test(value);
    case 'date':
      return typeof value === 'string' && DATE_RE.test(value);
    case 'time':
      return typeof value === 'string' && TIME_RE.test(value);
    case 'bigint[]':
      return Array.isArray(value) && value.every((x) => typeof x === 'number' && Number.isSafeInteger(x));
    case 'text[]':
      return Array.isArray(value) && value.every((x) => typeof x === 'string' || typeof x === 'number');
    default: {
      const decimal = decimalParams(type);
      if (!decimal || (typeof value !== 'string' && typeof value !== 'number')) return false;
      const digits = decimalDigits(value);
      return digits !== null && digits.int <= decimal.precision - decimal.scale && digits.frac <= decimal.scale;
    }
  }
}

function isList(type: ScalarType): boolean {
  return type === 'bigint[]' || type === 'text[]';
}

/** The narrowest type holding what a `type` column holds and `value` (see the table above). */
export function widen(type: ScalarType, value: NormalizedValue): ScalarType {
  if (fits(type, value)) return type;
  if (Array.isArray(value)) {
    if (type === 'bigint[]' && value.every((x) => typeof x === 'string' || typeof x === 'number')) return 'text[]';
    // A list in a scalar column: its JSON text; a nested list in a list column: JSON.
    return isList(type) ? 'json' : 'text';
  }
  if (isList(type)) return 'json';
  if (typeof value === 'number') {
    if ((type === 'integer' || type === 'bigint') && Number.isSafeInteger(value)) return 'bigint';
    if (type === 'integer' || type === 'bigint') return 'double';
  }
  const p = decimalParams(type);
  if (p && (typeof value === 'string' || typeof value === 'number')) {
    const d = decimalDigits(value);
    if (d) {
      const scale = Math.max(p.scale, d.frac);
      const int = Math.max(p.precision - p.scale, d.int);
      if (int + scale <= 38) return `decimal(${int + scale},${scale})`;
    }
  }
  if (type === 'date' && typeof value === 'string' && TIMESTAMP_RE.test(value)) return 'timestamp';
  return 'text';
}

/** Whether changing a column from `from` to `to` keeps every value (so ensureTable may do it unasked). */
export function isWidening(from: ScalarType, to: ScalarType): boolean {
  if (from === to) return true;
  if (to === 'text') return true;
  if (to === 'json') return isList(from) || from === 'json';
  if (from === 'integer') return to === 'bigint' || to === 'double';
  if (from === 'bigint') return to === 'double';
  if (from === 'date') return to === 'timestamp';
  if (from === 'bigint[]') return to === 'text[]';
  const a = decimalParams(from);
  const b = decimalParams(to);
  return a !== null && b !== null && b.scale >= a.scale && b.precision - b.scale >= a.precision - a.scale;
}

/** The `USING` expression that converts a column's values from `from` to `to` without loss. */
export function conversionSql(column: string, from: ScalarType, to: ScalarType): string {
  // Lists and JSON become their JSON text (DuckDB's own list-to-text form is not JSON: ['a'] prints as [a]).
  if (to === 'text' && (isList(from) || from === 'json')) return `CAST(to_json(${column}) AS VARCHAR)`;
  if (to === 'json' && isList(from)) return `to_json(${column})`;
  return `CAST(${column} AS ${duckdbType(to)})`;
}

/** The evsync column type of a DuckDB type name as `duckdb_columns()` reports it, or null for others. */
export function scalarTypeOf(duckdb: string): ScalarType | null {
  const upper = duckdb.toUpperCase();
  switch (upper) {
    case 'BIGINT':
      return 'bigint';
    case 'INTEGER':
      return 'integer';
    case 'DOUBLE':
      return 'double';
    case 'VARCHAR':
      return 'text';
    case 'BOOLEAN':
      return 'boolean';
    case 'TIMESTAMP':
      return 'timestamp';
    case 'DATE':
      return 'date';
    case 'TIME':
      return 'time';
    case 'BIGINT[]':
      return 'bigint[]';
    case 'VARCHAR[]':
      return 'text[]';
    case 'JSON':
      return 'json';
    default: {
      const decimal = /^DECIMAL\((\d+),\s*(\d+)\)$/.exec(upper);
      return decimal ? `decimal(${Number(decimal[1])},${Number(decimal[2])})` : null;
    }
  }
}
