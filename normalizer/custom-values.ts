/**
 * A record's custom-field values (`c_<fieldId>` members) as the one JSON value of the custom-fields column.
 *
 * Rules (each is tested):
 * - Every `c_<id>` member of the record counts, listed or not: the record's own fields are what the service sent
 *   for it (a list asks for its scope's fields only).
 * - Values are kept as the service sent them (text as text, choices as their `[{id, value}]` arrays); members
 *   without an answer (`null`, `""`, `[]`, `{}`) are left out, so the object holds exactly the non-empty answers.
 * - Members are ordered by field id (`c_2` before `c_10`), so the same answers give the same JSON text whichever
 *   path (list page, webhook body) delivered them, and an unchanged record stays unchanged in the merge.
 * - With a scrubber, every string in the answers is scrubbed of held credentials before the JSON text is written
 *   (scrubbing the JSON text would miss a secret whose characters JSON escapes).
 * - With types for some fields (`customFieldTypes`), their answers are converted first (custom-types.ts): an answer
 *   that does not convert is left out and comes back in `failures`.
 * - A record without any `c_<id>` member gives null (its fields were not requested: stored values are kept); one
 *   with members all empty gives `{}` (the answers were cleared).
 */

import { type CustomFieldType, isCustomFieldName } from '../connectors/types.js';
import { type Converted, converterFor, INVALID } from './converters.js';
import { type CustomTypeFailure, typedAnswers } from './custom-types.js';

/** Whether a custom-field value is an answer (not null, `""`, an empty list or an empty object). */
function isCustomAnswer(value: unknown): boolean {
  if (value === null || value === undefined || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') {
    for (const _ in value) return true;
    return false;
  }
  return true;
}

/** `c_2` before `c_10`: by length, then by text (ids are digits; other names still order deterministically). */
export function byFieldId(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/** The custom-field members of a record: how many it carries, and the non-empty ones by field id. */
interface CustomMembers {
  /** Members named `c_<id>`, empty or not (they are fields the record carries). */
  readonly count: number;
  /** The answers, ordered by field id; null when the record carries no custom field at all. */
  readonly answers: Record<string, unknown> | null;
}

function customMembers(record: Record<string, unknown>): CustomMembers {
  let names: string[] | null = null;
  let count = 0;
  for (const key in record) {
    if (!isCustomFieldName(key)) continue;
    count++;
    if (!isCustomAnswer(record[key])) continue;
    names ??= [];
    names.push(key);
  }
  if (count === 0) return { count, answers: null };
  const answers: Record<string, unknown> = {};
  if (names) {
    if (names.length > 1) names.sort(byFieldId);
    for (const name of names) answers[name] = record[name];
  }
  return { count, answers };
}

/** `value` with every string in it passed through `scrub`: the same value when nothing changes (no copy). */
function scrubStrings(value: unknown, scrub: (text: string) => string): unknown {
  if (typeof value === 'string') return scrub(value);
  if (typeof value !== 'object' || value === null) return value;
  let out: unknown[] | Record<string, unknown> | null = null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = scrubStrings(value[i], scrub);
      if (v === value[i]) continue;
      out ??= [...value];
      (out as unknown[])[i] = v;
    }
    return out ?? value;
  }
  const record = value as Record<string, unknown>;
  for (const k of Object.keys(record)) {
    const v = scrubStrings(record[k], scrub);
    if (v === record[k]) continue;
    out ??= { ...record };
    (out as Record<string, unknown>)[k] = v;
  }
  return out ?? value;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * The custom-fields column's value of a record (JSON text, null, or INVALID when the answers cannot be JSON text),
 * and how many `c_<id>` members the record carries. A lone UTF-16 surrogate in an answer (broken text) would be
 * written as a `\udXXX` escape that DuckDB's JSON refuses: such strings become well-formed (U+FFFD) first.
 */
export function customFieldsValue(
  record: Record<string, unknown>,
  scrub?: (text: string) => string,
  types?: Readonly<Record<string, CustomFieldType>>,
): { value: Converted; count: number; failures?: readonly CustomTypeFailure[] } {
  const { count, answers: sent } = customMembers(record);
  if (sent === null) return { value: null, count };
  // Converted before scrubbing, so text a conversion makes (`42` as "42") is scrubbed like any answer.
  const failures: CustomTypeFailure[] = [];
  const found = types ? typedAnswers(sent, types, failures) : sent;
  const answers = scrub ? (scrubStrings(found, scrub) as Record<string, unknown>) : found;
  const text = converterFor('json')(answers);
  const withFailures = failures.length > 0 ? { failures } : {};
  if (text === INVALID || typeof text !== 'string' || !text.includes('\\ud')) {
    return { value: text, count, ...withFailures };
  }
  const repaired = JSON.stringify(answers, (_key, v: unknown) =>
    typeof v === 'string' ? v.replace(LONE_SURROGATE, '\ufffd') : v,
  );
  return { value: repaired, count, ...withFailures };
}
