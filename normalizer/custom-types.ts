/**
 * Custom-field answers converted to the type the user set for their field (`streams.<name>.customFieldTypes`).
 *
 * Rules (each is tested):
 * - An answer of a field with a type is run through that type's column converter (converters.ts), so `42` under
 *   `text` is stored as `"42"` and `"17"` under `bigint` as `17`: the same rules as a column of that type.
 * - An answer the converter turns into null (MySQL's zero date under `timestamp`) is no answer: left out, as empty
 *   answers are (custom-values.ts).
 * - An answer that does not convert is left out of the custom-fields value and reported as a skipped field, with the
 *   converter's reason: the way the normalizer treats a field value it cannot store outside the declared columns
 *   (normalize.ts). The record itself is kept: one odd answer must not take a registrant out of the warehouse.
 * - Fields without a type keep their answers as the service sent them.
 */
import type { CustomFieldType } from '../connectors/types.js';
import { clearFailureDetail, columnFailureReason, converterFor, INVALID } from './converters.js';

/** An answer left out because it does not convert to its field's type, and why. */
export interface CustomTypeFailure {
  readonly field: string;
  readonly reason: string;
}

/**
 * `answers` (ordered by field id) with the typed fields' answers converted; the same object when no answer has a
 * type. Failures are appended to `failures`.
 */
export function typedAnswers(
  answers: Record<string, unknown>,
  types: Readonly<Record<string, CustomFieldType>>,
  failures: CustomTypeFailure[],
): Record<string, unknown> {
  const names = Object.keys(answers);
  if (!names.some((name) => Object.hasOwn(types, name))) return answers;
  // Built member by member in the answers' order (by field id): same input and types give the same JSON text.
  const out: Record<string, unknown> = {};
  for (const name of names) {
    const value = answers[name];
    const type = Object.hasOwn(types, name) ? types[name] : undefined;
    if (type === undefined) {
      out[name] = value;
      continue;
    }
    clearFailureDetail();
    const converted = converterFor(type)(value);
    if (converted === INVALID) {
      failures.push({ field: name, reason: columnFailureReason({ name, source: name, type }, value) });
    } else if (converted !== null) {
      out[name] = converted;
    }
  }
  return out;
}
