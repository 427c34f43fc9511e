/**
 * Result values as real JSON, for people and programs reading `evsync query` output.
 *
 * DuckDB's own JSON conversion (`getRowObjectsJson`) gives BIGINT and DECIMAL as strings, so that no digit is ever
 * lost. Here a value becomes a JSON number whenever a double holds it without loss, per value:
 * - integers (BIGINT, UBIGINT, HUGEINT, UHUGEINT) within ±(2^53 - 1), the range where every integer is a double;
 * - DECIMAL values with at most 15 significant digits, the most that always survive a trip through a double and
 *   back to the same decimal text (IEEE 754 binary64, DBL_DIG = 15). Money (DECIMAL(12,2)) always qualifies.
 * Anything larger stays an exact string. Lists, structs, maps and arrays are JSON arrays and objects (their items
 * converted by the same rules), and JSON columns are parsed into the JSON they hold.
 *
 * For text output (tables, CSV) the `text` form keeps top-level numbers as DuckDB prints them (`12.50`, not
 * `12.5`) and JSON columns as their text; nested values are JSON as above.
 */
import {
  DuckDBDecimalValue,
  DuckDBTypeId,
  type DuckDBValue,
  type DuckDBValueConverter,
  type Json,
  JsonDuckDBValueConverter,
} from '@duckdb/node-api';

/** Significant digits every decimal keeps through a double (DBL_DIG). */
const SAFE_DECIMAL_DIGITS = 15;

const INTEGER_TYPES = new Set<DuckDBTypeId>([
  DuckDBTypeId.BIGINT,
  DuckDBTypeId.UBIGINT,
  DuckDBTypeId.HUGEINT,
  DuckDBTypeId.UHUGEINT,
]);

function integerJson(value: DuckDBValue): Json {
  if (typeof value !== 'bigint') return String(value);
  const max = BigInt(Number.MAX_SAFE_INTEGER);
  return value <= max && value >= -max ? Number(value) : value.toString();
}

/** Significant digits of a scaled decimal integer: trailing zeros do not count (1.50 is 1.5). */
function significantDigits(scaled: bigint): number {
  let digits = (scaled < 0n ? -scaled : scaled).toString();
  digits = digits.replace(/0+$/, '');
  return digits.length;
}

function decimalJson(value: DuckDBValue): Json {
  if (!(value instanceof DuckDBDecimalValue)) return String(value);
  const text = value.toString();
  return significantDigits(value.value) <= SAFE_DECIMAL_DIGITS ? Number(text) : text;
}

function parsedJson(value: DuckDBValue): Json {
  const text = String(value);
  try {
    return JSON.parse(text) as Json;
  } catch {
    // DuckDB validates JSON columns on write; a value that still fails to parse is shown as it is.
    return text;
  }
}

/** DuckDB's JSON converter with exact numbers and parsed JSON; nested values recurse through this converter. */
export const exactJsonConverter: DuckDBValueConverter<Json> = (value, type, converter) => {
  if (value === null) return null;
  if (INTEGER_TYPES.has(type.typeId)) return integerJson(value);
  if (type.typeId === DuckDBTypeId.DECIMAL) return decimalJson(value);
  if (type.typeId === DuckDBTypeId.VARCHAR && type.alias === 'JSON') return parsedJson(value);
  return JsonDuckDBValueConverter(value, type, converter);
};

/** `json`: numbers as JSON numbers when exact; `text`: top-level numbers and JSON as DuckDB's exact text. */
export type ValueForm = 'json' | 'text';

export const exactTextConverter: DuckDBValueConverter<Json> = (value, type) => {
  if (value === null) return null;
  if (INTEGER_TYPES.has(type.typeId) || type.typeId === DuckDBTypeId.DECIMAL) return String(value);
  if (type.typeId === DuckDBTypeId.VARCHAR && type.alias === 'JSON') return String(value);
  // Nested values recurse through the JSON form: a list prints as [1,2], not ["1","2"].
  return exactJsonConverter(value, type, exactJsonConverter);
};
