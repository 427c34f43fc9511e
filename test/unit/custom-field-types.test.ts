/**
 * `customFieldTypes`: custom-field answers stored converted to the type the user set (normalizer/custom-types.ts),
 * checked by `resolveStream`.
 */
import { describe, expect, it } from 'vitest';
import { getStream, resolveStream } from '../../connectors/index.js';
import { defineStream, type ResolvedStream } from '../../connectors/types.js';
import { createNormalizer } from '../../normalizer/normalize.js';
import { recordSchema } from '../../normalizer/records.js';

const people = defineStream({
  name: 'people',
  path: '/people',
  scope: 'account',
  cursor: null,
  fields: { id: 'bigint', name: 'text' },
  customFields: { definitions: 'questions' },
  verified: true,
  description: 'test stream',
});

const typed: ResolvedStream = resolveStream(people, {
  overrides: {
    customFieldTypes: { c_12: 'text', c_7: 'bigint', c_8: 'double', c_9: 'boolean', c_11: 'decimal(6,2)' },
  },
});
const untyped: ResolvedStream = resolveStream(people);

function normalized(stream: ResolvedStream, record: Record<string, unknown>, interpreted = false) {
  const result = createNormalizer(stream, { interpreted }).normalize(record);
  if (!result.ok) throw new Error(`rejected: ${result.reason}`);
  return result;
}

describe('answers of fields with a type', () => {
  const record = { id: 1, name: 'Ada', c_12: 42, c_7: '17', c_8: '2.50', c_9: '1', c_10: 'as sent', c_11: 3.5 };

  it('are stored converted, the others as sent, members ordered by field id', () => {
    const result = normalized(typed, record);
    expect(result.row.custom_fields).toBe('{"c_7":17,"c_8":2.5,"c_9":true,"c_10":"as sent","c_11":"3.50","c_12":"42"}');
    expect(result.skipped).toBeUndefined();
    // Without the setting the same record keeps every answer as the service sent it.
    expect(normalized(untyped, record).row.custom_fields).toBe(
      '{"c_7":"17","c_8":"2.50","c_9":"1","c_10":"as sent","c_11":3.5,"c_12":42}',
    );
  });

  it('give the same JSON text whatever order the record lists them in, and on every path', () => {
    const reversed = Object.fromEntries(Object.entries(record).reverse());
    const text = normalized(typed, record).row.custom_fields;
    expect(normalized(typed, reversed).row.custom_fields).toBe(text);
    expect(normalized(typed, record, true).row.custom_fields).toBe(text);
    // The zod record schema (single records, webhook bodies) stores the same value.
    expect(recordSchema(typed).parse(record).custom_fields).toBe(text);
  });

  it('convert the other way too: text to number, number and choice to text, boolean words', () => {
    const result = normalized(typed, { id: 2, c_7: 99, c_8: 7, c_9: 'false', c_12: [{ id: 3, value: 'Vegan' }] });
    expect(result.row.custom_fields).toBe(
      '{"c_7":99,"c_8":7,"c_9":false,"c_12":"[{\\"id\\":3,\\"value\\":\\"Vegan\\"}]"}',
    );
  });

  it('leave out an answer that does not convert, keep the record and report the field with the reason', () => {
    const normalizer = createNormalizer(typed);
    const result = normalizer.normalize({ id: 3, c_7: 'about twenty', c_8: 'n/a', c_9: 'maybe', c_12: 'kept' });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.row.id).toBe(3);
    expect(result.row.custom_fields).toBe('{"c_12":"kept"}');
    expect(result.skipped).toEqual([
      { field: 'c_7', reason: 'field "c_7": cannot convert string "about twenty" to bigint (not an integer)' },
      { field: 'c_8', reason: 'field "c_8": cannot convert string "n/a" to double (not a number)' },
      { field: 'c_9', reason: 'field "c_9": cannot convert string "maybe" to boolean (not a boolean)' },
    ]);
    normalizer.normalize({ id: 4, c_7: 'about twenty' });
    // The run's summary counts the records per field and reason (what the sync prints once per stream).
    expect(normalizer.skippedFields().find((s) => s.field === 'c_7')).toEqual({
      field: 'c_7',
      reason: 'field "c_7": cannot convert string "about twenty" to bigint (not an integer)',
      count: 2,
    });
    // All answers failing still says the record carried custom fields: `{}`, not null (stored values would stay).
    expect(normalizer.normalize({ id: 5, c_7: 'x' })).toMatchObject({ ok: true, row: { custom_fields: '{}' } });
  });

  it('keep empty answers out as before', () => {
    expect(normalized(typed, { id: 6, c_7: '', c_12: null }).row.custom_fields).toBe('{}');
  });
});

describe('resolveStream with customFieldTypes', () => {
  const registrants = getStream('registrants');

  it('accepts c_<id> names with a known type', () => {
    const stream = resolveStream(registrants, { overrides: { customFieldTypes: { c_12: 'text', c_7: 'bigint' } } });
    expect(stream.customFieldTypes).toEqual({ c_12: 'text', c_7: 'bigint' });
    expect(resolveStream(registrants, { overrides: { customFieldTypes: {} } }).customFieldTypes).toBeUndefined();
  });

  it('refuses an unknown type, naming the valid ones', () => {
    expect(() => resolveStream(registrants, { overrides: { customFieldTypes: { c_7: 'bigin' } } })).toThrow(
      'stream "registrants": customFieldTypes.c_7: unknown type "bigin" (did you mean "bigint"?); valid: bigint, integer, double, text, boolean, timestamp, date, time, decimal(p,s)',
    );
    expect(() => resolveStream(registrants, { overrides: { customFieldTypes: { c_7: 'json' } } })).toThrow(
      'unknown type "json"',
    );
  });

  it('refuses a name that is not a custom field name, and a stream without custom fields', () => {
    for (const name of ['email', 'c_x', 'c_012', 'C_7']) {
      expect(() => resolveStream(registrants, { overrides: { customFieldTypes: { [name]: 'text' } } })).toThrow(
        `stream "registrants": customFieldTypes: "${name}" is not a custom field name (c_<id>, the id of its definition)`,
      );
    }
    expect(() => resolveStream(getStream('events'), { overrides: { customFieldTypes: { c_7: 'text' } } })).toThrow(
      'stream "events" has no custom fields: customFieldTypes cannot apply to it',
    );
  });
});
