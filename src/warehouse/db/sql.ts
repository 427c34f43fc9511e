import { utcText } from '../../../connectors/service.js';
import type { Now } from '../../../schemas/clock.js';
/**
 * SQL text helpers. Column names come from the API (custom fields, schema evolution), so every identifier is
 * quoted, and the few literals we splice into SQL text (paths, names in DDL) are quoted too. Values otherwise
 * travel as bound parameters.
 */

/** `name` as a quoted DuckDB identifier. */
export function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A string as a SQL literal. */
export function literal(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** Now as UTC `YYYY-MM-DD HH:MM:SS.mmm` (the form TIMESTAMP columns take as text). */
export function utcNow(now: Now): string {
  return utcText(now(), 'ms');
}

/**
 * A timestamp string as given by a caller, in the `YYYY-MM-DD HH:MM:SS` form TIMESTAMP columns take: ISO strings
 * with `Z` or an offset are converted to UTC, zone-less ones are kept as they are (they are already in the
 * service's clock). Returns null for null or unparsable input.
 */
export function timestampText(value: string | null | undefined): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (/(?:[zZ]|[+-]\d\d:?\d\d)$/.test(value)) {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? null : utcText(ms, 'ms');
  }
  return /^\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?$/.test(value) ? value.replace('T', ' ') : null;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * JSON text DuckDB accepts. `JSON.stringify` writes a lone UTF-16 surrogate (broken text from the API) as a `\udXXX`
 * escape, which DuckDB's JSON reader refuses, failing the whole page; such strings become well-formed (U+FFFD) first.
 * Paired surrogates are written as raw characters, so the re-serialization runs only when a `\ud` escape appears.
 */
export function duckJson(value: unknown, keys?: readonly string[]): string {
  // `keys` keeps only those properties of every object (JSON.stringify's replacer list: V8's fast path still runs).
  const text = JSON.stringify(value, keys as string[] | undefined) ?? 'null';
  if (!text.includes('\\ud')) return text;
  const pick = keys ? new Set(keys) : null;
  return JSON.stringify(value, function (this: unknown, key: string, v: unknown) {
    if (pick && key !== '' && !Array.isArray(this) && !pick.has(key)) return undefined;
    return typeof v === 'string' ? v.replace(LONE_SURROGATE, '\ufffd') : v;
  });
}
