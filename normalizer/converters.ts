/**
 * `normalizer/`: a record as the service sent it to a typed row (exact JSON, converters, field names, custom values,
 * secret scrubbing, the storable raw form, the one type inference for fields no definition declares).
 *
 * The converters of record normalization: each takes a raw field value and returns the value of one physical
 * column in the form `ColumnSpec` fixes, or INVALID. normalize.ts runs them on the hot path.
 *
 * Rules (each is tested):
 * - A missing field, and the scope column when the record lacks it, is null (the warehouse fills the scope column).
 * - `""` is null for every column that is not text; a text column keeps `""` as `""` (the API sends `""` for empty
 *   text and the distinction costs nothing to keep). Exception: `""` in a `bigint[]` column is `[]` (an empty
 *   comma-separated list, e.g. a registrant without sessions).
 * - bigint/integer: safe integers, or strings of digits; fractions and values out of INTEGER's range are rejected.
 *   Beyond 2^53 a number has already lost digits (rejected); a digit string (what `parseJsonExact` makes of a long
 *   integer literal) is kept exactly as canonical digit text within BIGINT's range, except in key and scope columns,
 *   which stay JavaScript numbers (ids are compared and swept as numbers). An `{id, ...}` object gives its id
 *   (single records send `reg_type_id` that way).
 * - decimal(p,s): strings are converted digit by digit, never through a float; numbers through their shortest
 *   round-trip form. Rounded half away from zero to s places (as DuckDB's cast does); more than p-s integer digits
 *   is rejected.
 * - timestamp: `YYYY-MM-DD HH:MM:SS`, also with `T`, fractional seconds (dropped), `Z` or `+00:00`, or a bare date
 *   (midnight). Other offsets and impossible dates are rejected; MySQL's zero date `0000-00-00 ...` is null.
 * - date: `YYYY-MM-DD`, or a timestamp at exactly midnight. time: `HH:MM:SS` (or `H:MM`, `HH:MM`).
 * - boolean: true/false, 0/1, "0"/"1", "true"/"false".
 * - choice: `{id, value}` -> `<f>_id`, `<f>`; a bare integer (or digit string) is the id, other text the value.
 * - bigint[]: arrays, comma-separated strings, a JSON array string, or a single id. Null items are skipped.
 * - text: strings as they are, numbers and booleans as their text, objects and arrays as JSON text.
 * - json: JSON text; a string that already holds valid JSON is kept as it is, any other string becomes a JSON string.
 * - address: the expanded object's parts into prefixed text columns, missing parts null; `[]` (PHP's empty object)
 *   and null give all-null columns.
 */
import type { NormalizedValue, ResolvedStream, ScalarType } from '../connectors/types.js';
import { type ColumnSpec, decimalParams } from '../schemas/columns.js';

// Converters return this instead of throwing: the failure path stays cheap and the caller builds one reason.
export const INVALID: unique symbol = Symbol('invalid');
export type Converted = NormalizedValue | typeof INVALID;
export type Converter = (value: unknown) => Converted;

// Detail of the last failure, set just before a converter returns INVALID (single-threaded, read immediately).
let failureDetail = '';
/** Forget the last failure's detail (before running converters whose failure will be described). */
export function clearFailureDetail(): void {
  failureDetail = '';
}
function fail(detail: string): typeof INVALID {
  failureDetail = detail;
  return INVALID;
}

const INT_RE = /^\s*[+-]?\d+\s*$/;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/**
 * An integer: a number JavaScript holds exactly, a digit string, or an `{id, value}` choice's id. `beyondSafe` decides
 * what a digit string beyond 2^53 becomes.
 */
function integerOf(v: unknown, beyondSafe: (digits: string) => Converted): Converted {
  if (typeof v === 'number') {
    if (Number.isSafeInteger(v)) return v === 0 ? 0 : v;
    return fail(Number.isInteger(v) ? 'unsafe integer beyond 2^53' : 'not an integer');
  }
  if (v === undefined || v === null || v === '') return null;
  if (typeof v === 'string') {
    if (!INT_RE.test(v)) return fail('not an integer');
    // Number() of a digit string at or beyond 2^53 rounds to an unsafe value, so this check is exact.
    const n = Number(v);
    return Number.isSafeInteger(n) ? (n === 0 ? 0 : n) : beyondSafe(v);
  }
  if (typeof v === 'object' && !Array.isArray(v) && 'id' in v) return integerOf((v as { id: unknown }).id, beyondSafe);
  return fail('');
}

function unsafeInteger(): Converted {
  return fail('unsafe integer beyond 2^53');
}

/** Key and scope columns: integers JavaScript holds exactly, as numbers. */
function toSafeBigint(v: unknown): Converted {
  return integerOf(v, unsafeInteger);
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A digit string beyond 2^53 as canonical digit text (DuckDB casts it to BIGINT exactly), or a failure. */
function bigintText(v: string): Converted {
  const t = v.trim();
  const negative = t.charCodeAt(0) === 45;
  const digits = t.replace(/^[+-]?0*/, '') || '0';
  const text = negative && digits !== '0' ? `-${digits}` : digits;
  const n = BigInt(text);
  return n < INT64_MIN || n > INT64_MAX ? fail('out of BIGINT range') : text;
}

/** Other bigint columns: also digit strings beyond 2^53, kept exactly (see the rules above). */
function toBigint(v: unknown): Converted {
  return integerOf(v, bigintText);
}

function toInteger(v: unknown): Converted {
  const n = toSafeBigint(v);
  if (typeof n === 'number' && (n < INT32_MIN || n > INT32_MAX)) return fail('out of INTEGER range');
  return n;
}

const FLOAT_RE = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

function toDouble(v: unknown): Converted {
  if (typeof v === 'number') return Number.isFinite(v) ? v : fail('not finite');
  if (v === undefined || v === null || v === '') return null;
  if (typeof v === 'string') {
    if (!FLOAT_RE.test(v)) return fail('not a number');
    // `"1e400"` (how parseJsonExact keeps that literal) must not become Infinity, which staging writes as null.
    const n = Number(v);
    return Number.isFinite(n) ? n : fail('not finite');
  }
  return fail('');
}

const DECIMAL_RE = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,4}))?$/;

/** `digits` (a string of decimal digits) plus one unit in the last place. */
function incrementDigits(digits: string): string {
  const chars = digits.split('');
  let i = chars.length - 1;
  while (i >= 0) {
    if (chars[i] === '9') {
      chars[i] = '0';
      i--;
    } else {
      chars[i] = String.fromCharCode(chars[i]!.charCodeAt(0) + 1);
      return chars.join('');
    }
  }
  return '1' + chars.join('');
}

/** Canonical `decimal(precision,scale)` text of a decimal literal, computed on digits only. */
export function canonicalDecimal(text: string, precision: number, scale: number): string | typeof INVALID {
  const match = DECIMAL_RE.exec(text.trim());
  if (!match) return fail('not a decimal');
  const sign = match[1] ?? '';
  const intDigits = match[2] ?? '';
  const fracDigits = match[3] ?? '';
  if (intDigits === '' && fracDigits === '') return fail('not a decimal');
  const exp = match[4] === undefined ? 0 : Number(match[4]);
  let digits = intDigits + fracDigits;
  // Position of the decimal point within `digits`, moved by the exponent.
  let point = intDigits.length + exp;
  if (point < 0) {
    digits = '0'.repeat(-point) + digits;
    point = 0;
  } else if (point > digits.length) {
    digits = digits + '0'.repeat(point - digits.length);
  }
  let whole = digits.slice(0, point);
  const frac = digits.slice(point);
  let kept = frac.slice(0, scale).padEnd(scale, '0');
  const next = frac.charCodeAt(scale);
  if (next >= 53 /* '5' */) {
    const bumped = incrementDigits(whole + kept);
    whole = bumped.slice(0, bumped.length - scale);
    kept = bumped.slice(bumped.length - scale);
  }
  whole = whole.replace(/^0+/, '');
  if (whole.length > precision - scale) return fail(`overflows decimal(${precision},${scale})`);
  const isZero = whole === '' && !/[1-9]/.test(kept);
  return (sign === '-' && !isZero ? '-' : '') + (whole === '' ? '0' : whole) + (scale > 0 ? '.' + kept : '');
}

function decimalConverter(precision: number, scale: number): Converter {
  const intMax = precision - scale;
  // Values already in canonical form (the usual `"-166.00"`) skip the digit arithmetic.
  const whole = intMax === 0 ? '0' : `(?:0|[1-9]\\d{0,${intMax - 1}})`;
  const zeros = '.' + '0'.repeat(scale);
  const canonical = new RegExp(`^-?${whole}${scale > 0 ? `\\.\\d{${scale}}` : ''}$`);
  return (v) => {
    if (typeof v === 'string') {
      if (v === '') return null;
      if (canonical.test(v) && !(v.charCodeAt(0) === 45 && !/[1-9]/.test(v))) return v;
      return canonicalDecimal(v, precision, scale);
    }
    if (typeof v === 'number') {
      // Whole amounts (`group_balance_due: 0`) need no digit arithmetic.
      if (Number.isSafeInteger(v) && Math.abs(v) < 10 ** intMax) {
        return (v === 0 ? '0' : String(v)) + (scale > 0 ? zeros : '');
      }
      if (!Number.isFinite(v)) return fail('not finite');
      // String(n) is the shortest text that round-trips to n: `5` -> "5", 0.1 -> "0.1", no float noise.
      return canonicalDecimal(String(v), precision, scale);
    }
    if (v === undefined || v === null) return null;
    return fail('');
  };
}

function toText(v: unknown): Converted {
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) return null;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'object') return stringifyJson(v);
  return fail('');
}

function stringifyJson(v: unknown): Converted {
  try {
    const text = JSON.stringify(v);
    return text === undefined ? fail('not representable as JSON') : text;
  } catch (err) {
    // JSON.stringify recurses: a value nested a few thousand levels deep exhausts the stack (JSON.parse does not).
    return fail(err instanceof RangeError ? 'nested too deep to store as JSON' : 'not representable as JSON');
  }
}

function toBoolean(v: unknown): Converted {
  if (typeof v === 'boolean') return v;
  if (v === 1 || v === '1' || v === 'true') return true;
  if (v === 0 || v === '0' || v === 'false') return false;
  if (v === undefined || v === null || v === '') return null;
  return fail('not a boolean');
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

const pad2 = (n: number) => (n < 10 ? '0' + n : String(n));

/** Parsed date-time parts, or a failure. `null` stands for MySQL's zero date. */
type DateTimeParts = { date: string; h: number; mi: number; s: number; hasTime: boolean } | null;

const DATETIME_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

function parseDateTime(v: string): DateTimeParts | typeof INVALID {
  const m = DATETIME_RE.exec(v.trim());
  if (!m) return fail('not a YYYY-MM-DD[ HH:MM:SS] date-time');
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const h = m[4] === undefined ? 0 : Number(m[4]);
  const mi = m[5] === undefined ? 0 : Number(m[5]);
  const s = m[6] === undefined ? 0 : Number(m[6]);
  if (year === 0 && month === 0 && day === 0) return null;
  const zone = m[7];
  // The API's timestamps carry no zone; only UTC markers can be dropped without changing the instant's text.
  if (zone !== undefined && zone !== 'Z' && !/^[+-]00:?00$/.test(zone)) return fail('time zone offset not supported');
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return fail('impossible date');
  if (h > 23 || mi > 59 || s > 59) return fail('impossible time');
  return { date: `${m[1]}-${m[2]}-${m[3]}`, h, mi, s, hasTime: m[4] !== undefined };
}

// Two or four ASCII digits at `at` as a number, or -1. Char codes instead of slices: these run on every timestamp.
function digits2(v: string, at: number): number {
  const a = v.charCodeAt(at) - 48;
  const b = v.charCodeAt(at + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/** `YYYY-MM-DD` at the start of `v`, a real calendar date (year >= 1). */
function validCanonicalDate(v: string): boolean {
  const hi = digits2(v, 0);
  const lo = digits2(v, 2);
  if (hi < 0 || lo < 0 || v.charCodeAt(4) !== 45 || v.charCodeAt(7) !== 45) return false;
  const year = hi * 100 + lo;
  const month = digits2(v, 5);
  const day = digits2(v, 8);
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/** Exactly `YYYY-MM-DD HH:MM:SS` (the wire format), with a real date and time. */
function validCanonicalTimestamp(v: string): boolean {
  if (v.length !== 19 || v.charCodeAt(10) !== 32 || v.charCodeAt(13) !== 58 || v.charCodeAt(16) !== 58) return false;
  if (!validCanonicalDate(v)) return false;
  const h = digits2(v, 11);
  const mi = digits2(v, 14);
  const sec = digits2(v, 17);
  return h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && sec >= 0 && sec <= 59;
}

function toTimestamp(v: unknown): Converted {
  if (typeof v === 'string') {
    // The wire format itself: validated without building parts.
    if (validCanonicalTimestamp(v)) return v;
    if (v === '') return null;
    const p = parseDateTime(v);
    if (p === INVALID || p === null) return p;
    return `${p.date} ${pad2(p.h)}:${pad2(p.mi)}:${pad2(p.s)}`;
  }
  if (v === undefined || v === null) return null;
  return fail('');
}

function toDate(v: unknown): Converted {
  if (typeof v === 'string') {
    if (v.length === 10 && validCanonicalDate(v)) return v;
    if (v === '') return null;
    const p = parseDateTime(v);
    if (p === INVALID || p === null) return p;
    if (p.h !== 0 || p.mi !== 0 || p.s !== 0) return fail('has a time of day');
    return p.date;
  }
  if (v === undefined || v === null) return null;
  return fail('');
}

const TIME_RE = /^(\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?$/;

function toTime(v: unknown): Converted {
  if (typeof v === 'string') {
    if (v === '') return null;
    const m = TIME_RE.exec(v.trim());
    if (!m) return fail('not HH:MM:SS');
    const h = Number(m[1]);
    const mi = Number(m[2]);
    const s = m[3] === undefined ? 0 : Number(m[3]);
    if (h > 23 || mi > 59 || s > 59) return fail('impossible time');
    return `${pad2(h)}:${pad2(mi)}:${pad2(s)}`;
  }
  if (v === undefined || v === null) return null;
  return fail('');
}

function idList(items: readonly unknown[]): Converted {
  const out: number[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const n = toSafeBigint(typeof item === 'string' ? item.trim() : item);
    if (n === INVALID) return fail(`item ${i}: ${failureDetail || 'not an id'}`);
    if (n !== null) out.push(n as number);
  }
  return out;
}

function toBigintList(v: unknown): Converted {
  if (Array.isArray(v)) return idList(v);
  if (typeof v === 'string') {
    const t = v.trim();
    if (t === '') return [];
    if (t.charCodeAt(0) === 91 /* [ */) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(t);
      } catch {
        return fail('not a list of ids');
      }
      return Array.isArray(parsed) ? idList(parsed) : fail('not a list of ids');
    }
    return idList(t.split(','));
  }
  if (v === undefined || v === null) return null;
  if (typeof v === 'number') return idList([v]);
  return fail('');
}

function toTextList(v: unknown): Converted {
  if (Array.isArray(v)) {
    const out: string[] = [];
    for (const item of v) {
      const t = toText(item);
      if (t === INVALID) return t;
      if (t !== null) out.push(t as string);
    }
    return out;
  }
  if (typeof v === 'string') return v === '' ? [] : [v];
  if (v === undefined || v === null) return null;
  if (typeof v === 'number' || typeof v === 'boolean') return [String(v)];
  return fail('');
}

// First characters a JSON text can start with (after optional whitespace): only these are worth a parse attempt.
const JSON_START = /^\s*[{["\-0-9tfn]/;

function toJson(v: unknown): Converted {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v === 'string') {
    if (JSON_START.test(v)) {
      try {
        JSON.parse(v);
        return v;
      } catch {
        // Not JSON: stored as a JSON string below.
      }
    }
    return JSON.stringify(v);
  }
  return stringifyJson(v);
}

const CONVERTERS: Readonly<Record<string, Converter>> = {
  bigint: toBigint,
  integer: toInteger,
  double: toDouble,
  text: toText,
  boolean: toBoolean,
  timestamp: toTimestamp,
  date: toDate,
  time: toTime,
  'bigint[]': toBigintList,
  'text[]': toTextList,
  json: toJson,
};

const decimalCache = new Map<string, Converter>();

/** The converter of one column type. */
export function converterFor(type: ScalarType): Converter {
  const plain = CONVERTERS[type];
  if (plain) return plain;
  let conv = decimalCache.get(type);
  if (!conv) {
    const params = decimalParams(type);
    if (!params) throw new Error(`no converter for column type "${type}"`);
    conv = decimalConverter(params.precision, params.scale);
    decimalCache.set(type, conv);
  }
  return conv;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `{id, value}` (or a one-item array of it, or a bare id or value) to its id half. */
function choiceId(v: unknown): Converted {
  if (isPlainObject(v)) return toBigint(v.id);
  if (Array.isArray(v)) return v.length === 0 ? null : v.length === 1 ? choiceId(v[0]) : fail('several choices');
  if (typeof v === 'number' || (typeof v === 'string' && INT_RE.test(v))) return toBigint(v);
  if (v === undefined || v === null || typeof v === 'string') return null;
  return fail('not a choice');
}

function choiceValue(v: unknown): Converted {
  if (isPlainObject(v)) return toText(v.value);
  if (Array.isArray(v)) return v.length === 0 ? null : v.length === 1 ? choiceValue(v[0]) : fail('several choices');
  if (typeof v === 'string') return v === '' || INT_RE.test(v) ? null : v;
  if (v === undefined || v === null || typeof v === 'number') return null;
  return fail('not a choice');
}

function addressPart(part: string): Converter {
  return (v) => {
    if (isPlainObject(v)) return toText(v[part]);
    if (v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0)) return null;
    return fail('not an address object');
  };
}

/**
 * The converter of one physical column, reading its source field's raw value. `strict` for key and scope columns
 * (see `strictColumnNames`): their bigints stay JavaScript numbers.
 */
export function columnConverter(spec: ColumnSpec, strict = false): Converter {
  if (spec.part === 'id') return choiceId;
  if (spec.part === 'value') return choiceValue;
  // The custom-fields column reads the whole record (custom-values.ts), not one field: its values are JSON text.
  if (spec.part === 'custom') return converterFor('json');
  if (spec.part !== undefined) return addressPart(spec.part);
  if (strict && spec.type === 'bigint') return toSafeBigint;
  return converterFor(spec.type);
}

/** The columns holding ids that evsync compares as numbers: the key and the scope column. */
export function strictColumnNames(stream: ResolvedStream): ReadonlySet<string> {
  const names = new Set(stream.key);
  if (stream.scope === 'event') names.add('event_id');
  else if (typeof stream.scope === 'object') names.add(stream.scope.column);
  return names;
}

/** How one value is described in a reason: its type, and the value itself only when short. */
export function describeValue(v: unknown): string {
  if (v === undefined) return 'missing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return `array of ${v.length}`;
  if (typeof v === 'string') return v.length <= 40 ? `string ${JSON.stringify(v)}` : `string of ${v.length} chars`;
  if (typeof v === 'number' || typeof v === 'boolean') return `${typeof v} ${String(v)}`;
  return typeof v;
}

const MAX_REASON = 300;
export function capReason(reason: string): string {
  return reason.length <= MAX_REASON ? reason : reason.slice(0, MAX_REASON - 3) + '...';
}

/**
 * The reason a column's converter rejected `value`. Call it right after the converter returned INVALID (it reads
 * the detail that converter left).
 */
export function columnFailureReason(column: ColumnSpec, value: unknown): string {
  const expected = column.part === 'id' || column.part === 'value' ? 'choice' : column.type;
  const detail = failureDetail ? ` (${failureDetail})` : '';
  return capReason(`field "${column.source}": cannot convert ${describeValue(value)} to ${expected}${detail}`);
}

const TIME_ONLY_RE = /^\d{2}:\d{2}:\d{2}$/;

/**
 * Where a value to infer a type from was read: on the wire (the normalizer, meeting a field no definition declares)
 * or in a normalized row (the warehouse, meeting a column nobody listed). The two differ only where the row has
 * already decided: in a row, `""` is a text value it holds (on the wire it says nothing, and the normalizer stores no
 * empty field it does not know), and a list of strings is a text list (on the wire it stays JSON, the form that keeps any
 * list exactly; in a row JSON is already text, so a list there is a list column). Both are held by
 * tests: `inferType` (test/unit/normalize.test.ts) and schema evolution (test/warehouse/evolution.test.ts).
 */
type InferredFrom = 'wire' | 'row';

/**
 * The column type a value of an undeclared field suggests, or null when the value says nothing (null, `""` on the
 * wire). Conservative: strings stay text unless they are unmistakably a timestamp, date or time (a later value that
 * does not fit would otherwise be rejected); id-like integers are bigint; any other array or object is JSON (a list
 * of strings in a row aside: see InferredFrom).
 */
export function inferType(value: unknown, from: InferredFrom = 'wire'): ScalarType | null {
  if (value === null || value === undefined) return null;
  if (value === '') return from === 'row' ? 'text' : null;
  switch (typeof value) {
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isSafeInteger(value) ? 'bigint' : 'double';
    case 'string': {
      const n = value.length;
      if (validCanonicalTimestamp(value)) return 'timestamp';
      if (n === 10 && validCanonicalDate(value)) return 'date';
      if (n === 8 && TIME_ONLY_RE.test(value) && toTime(value) !== INVALID) return 'time';
      return 'text';
    }
    case 'object':
      if (Array.isArray(value) && value.length > 0 && value.every((x) => Number.isSafeInteger(x))) return 'bigint[]';
      if (from === 'row' && Array.isArray(value) && value.every((x) => typeof x === 'string')) return 'text[]';
      return 'json';
    default:
      return null;
  }
}
