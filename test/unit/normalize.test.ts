import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { getStream, resolveStream } from '../../connectors/index.js';
import { defineStream, type ResolvedStream, type ScalarType } from '../../connectors/types.js';
import { canonicalDecimal, converterFor, createNormalizer, INVALID, inferType } from '../../normalizer/normalize.js';
import { realisticRegistrant, registrantsForBench } from './normalize-throughput.js';

const people = defineStream({
  name: 'people',
  path: '/people',
  scope: 'event',
  cursor: 'updated_at',
  fields: {
    id: 'bigint',
    name: 'text',
    size: 'integer',
    score: 'double',
    amount: 'decimal(12,2)',
    rate: 'decimal(7,4)',
    active: 'boolean',
    born: 'date',
    starts: 'time',
    updated_at: 'timestamp',
    gender: 'choice',
    session_ids: 'bigint[]',
    tags: 'text[]',
    headers: 'json',
  },
  expand: { homeAddress: 'address' },
  customFields: { definitions: 'questions' },
  verified: true,
  description: 'test stream',
});

const resolved: ResolvedStream = resolveStream(people, {
  overrides: { expand: ['homeAddress'] },
  customFields: [{ name: 'c_7', label: 'Diet', type: 'json' }],
});
const normalizer = createNormalizer(resolved);

function ok(record: Record<string, unknown>) {
  const result = normalizer.normalize({ id: 1, ...record });
  if (!result.ok) throw new Error(`expected ok, got: ${result.reason}`);
  return result;
}
const row = (record: Record<string, unknown>) => ok(record).row;
function reason(record: unknown): string {
  const result = normalizer.normalize(record);
  if (result.ok) throw new Error(`expected a rejection, got ${JSON.stringify(result.row)}`);
  return result.reason;
}

describe('records and fields', () => {
  it('gives every column, null where the field is missing, event_id null when absent', () => {
    const r = row({});
    expect(Object.keys(r)).toEqual(normalizer.columns.map((c) => c.name));
    expect(r.event_id).toBeNull();
    expect(r.name).toBeNull();
    expect(r.home_address_city).toBeNull();
  });

  it('rejects non-objects and records without their key, naming the problem', () => {
    expect(reason(null)).toMatch(/record is null/);
    expect(reason([1, 2])).toMatch(/record is array/);
    expect(reason('x')).toMatch(/record is string/);
    expect(reason({ name: 'a' })).toMatch(/key field "id"/);
    expect(reason({ id: '' })).toMatch(/key field "id"/);
  });

  it('tolerates unknown fields and reports them as extras with an inferred type and a normalized value', () => {
    const result = ok({
      brand_new: 'x',
      counter: 5,
      ratio: 0.5,
      flag: true,
      seen_at: '2024-01-02 03:04:05',
      day: '2024-01-02',
      nested: { a: 1 },
      ids: [1, 2],
      c_99: [{ id: 3, value: 'B' }],
      nothing: null,
      blank: '',
      _links: { self: {} },
      'odd name': 1,
    });
    expect(result.extras).toEqual({
      brand_new: 'text',
      counter: 'bigint',
      ratio: 'double',
      flag: 'boolean',
      seen_at: 'timestamp',
      day: 'date',
      nested: 'json',
      ids: 'bigint[]',
    });
    expect(result.row.nested).toBe('{"a":1}');
    // A custom field, listed or not, is an answer in the custom-fields column, never a column of its own.
    expect(result.row).not.toHaveProperty('c_99');
    expect(result.row.custom_fields).toBe('{"c_99":[{"id":3,"value":"B"}]}');
    expect(result.row.ids).toEqual([1, 2]);
    expect(result.row).not.toHaveProperty('_links');
    expect(result.row).not.toHaveProperty('nothing');
    expect(result.row).not.toHaveProperty('odd name');
  });

  it('does not treat a physical column name sent by the API as an extra', () => {
    const result = ok({ gender: { id: 2, value: 'Male' }, gender_id: 99 });
    expect(result.extras).toEqual({});
    expect(result.row.gender_id).toBe(2);
  });

  it('caps reasons at 300 characters and does not quote long values', () => {
    const long = 'x'.repeat(5000);
    const r = reason({ id: long });
    expect(r.length).toBeLessThanOrEqual(300);
    expect(r).toContain('string of 5000 chars');
    expect(r).not.toContain('xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx');
  });
});

describe('ids and integers', () => {
  it('accepts integers and digit strings', () => {
    expect(row({ id: '42' }).id).toBe(42);
    expect(row({ size: '7' }).size).toBe(7);
    expect(row({ id: 9007199254740991 }).id).toBe(9007199254740991);
  });

  it('rejects fractions, unsafe integers and INTEGER overflow with the field named', () => {
    expect(reason({ id: 1.5 })).toBe('field "id": cannot convert number 1.5 to bigint (not an integer)');
    expect(reason({ id: 2 ** 53 })).toMatch(/field "id".*unsafe integer/);
    expect(reason({ id: '9007199254740993' })).toMatch(/field "id".*unsafe integer/);
    expect(reason({ id: 1, size: 2147483648 })).toMatch(/field "size".*out of INTEGER range/);
    expect(reason({ id: '12abc' })).toMatch(/field "id": cannot convert string "12abc" to bigint/);
    expect(reason({ id: true })).toMatch(/boolean true to bigint/);
  });

  it('takes the id of an {id, value} object (single records send reg_type_id that way)', () => {
    expect(row({ id: { id: 5, value: 'x' } }).id).toBe(5);
  });

  it('maps "" to null', () => {
    expect(row({ size: '' }).size).toBeNull();
  });
});

describe('timestamps, dates, times', () => {
  it('keeps the wire format and normalizes ISO forms', () => {
    expect(row({ updated_at: '2024-02-29 23:59:59' }).updated_at).toBe('2024-02-29 23:59:59');
    expect(row({ updated_at: '2024-02-29T23:59:59' }).updated_at).toBe('2024-02-29 23:59:59');
    expect(row({ updated_at: '2024-02-29T23:59:59.123Z' }).updated_at).toBe('2024-02-29 23:59:59');
    expect(row({ updated_at: '2024-02-29T23:59:59+00:00' }).updated_at).toBe('2024-02-29 23:59:59');
    expect(row({ updated_at: '2024-02-29' }).updated_at).toBe('2024-02-29 00:00:00');
  });

  it('rejects impossible dates and times, and zone offsets other than UTC', () => {
    expect(reason({ id: 1, updated_at: '2024-13-45 10:00:00' })).toMatch(/field "updated_at".*impossible date/);
    expect(reason({ id: 1, updated_at: '2023-02-29 10:00:00' })).toMatch(/impossible date/);
    expect(reason({ id: 1, updated_at: '2024-01-01 24:00:00' })).toMatch(/impossible time/);
    expect(reason({ id: 1, updated_at: '2024-01-01T10:00:00+02:00' })).toMatch(/offset/);
    expect(reason({ id: 1, updated_at: 'yesterday' })).toMatch(/field "updated_at"/);
    expect(reason({ id: 1, updated_at: 1700000000 })).toMatch(/number 1700000000 to timestamp/);
  });

  it("maps MySQL's zero date and empty strings to null", () => {
    expect(row({ updated_at: '0000-00-00 00:00:00' }).updated_at).toBeNull();
    expect(row({ born: '0000-00-00' }).born).toBeNull();
    expect(row({ updated_at: '' }).updated_at).toBeNull();
  });

  it('dates: YYYY-MM-DD, or a timestamp at midnight; never truncates a time of day', () => {
    expect(row({ born: '1990-05-01' }).born).toBe('1990-05-01');
    expect(row({ born: '1990-05-01 00:00:00' }).born).toBe('1990-05-01');
    expect(reason({ id: 1, born: '1990-05-01 10:00:00' })).toMatch(/time of day/);
    expect(reason({ id: 1, born: '1990-02-30' })).toMatch(/impossible date/);
  });

  it('times: HH:MM:SS, padded from H:MM', () => {
    expect(row({ starts: '09:30:00' }).starts).toBe('09:30:00');
    expect(row({ starts: '9:30' }).starts).toBe('09:30:00');
    expect(reason({ id: 1, starts: '25:00:00' })).toMatch(/impossible time/);
  });
});

describe('decimals', () => {
  it('canonicalizes strings and numbers to the column scale', () => {
    expect(row({ amount: '-166.00' }).amount).toBe('-166.00');
    expect(row({ amount: 5 }).amount).toBe('5.00');
    expect(row({ amount: -5 }).amount).toBe('-5.00');
    expect(row({ amount: -0 }).amount).toBe('0.00');
    expect(row({ amount: 9999999999 }).amount).toBe('9999999999.00');
    expect(row({ rate: 0 }).rate).toBe('0.0000');
    expect(row({ amount: '5' }).amount).toBe('5.00');
    expect(row({ amount: '007.5' }).amount).toBe('7.50');
    expect(row({ amount: '+.5' }).amount).toBe('0.50');
    expect(row({ amount: 0.1 + 0.2 }).amount).toBe('0.30');
    expect(row({ amount: '-0.00' }).amount).toBe('0.00');
    expect(row({ amount: '1.005' }).amount).toBe('1.01');
    expect(row({ amount: '-1.005' }).amount).toBe('-1.01');
    expect(row({ amount: '9999999999.994' }).amount).toBe('9999999999.99');
    expect(row({ rate: '0.08875' }).rate).toBe('0.0888');
    expect(row({ rate: 19 }).rate).toBe('19.0000');
    expect(row({ amount: 1e-7 }).amount).toBe('0.00');
  });

  it('never goes through a float for strings', () => {
    // As a float this is 1234567890.1200000047683716; digit by digit it stays exact.
    expect(row({ amount: '1234567890.12' }).amount).toBe('1234567890.12');
    expect(row({ amount: '0.125' }).amount).toBe('0.13');
    expect(canonicalDecimal('12345678901234567890.5', 38, 1)).toBe('12345678901234567890.5');
  });

  it('rejects non-decimals and values that overflow the precision', () => {
    expect(reason({ id: 1, amount: '12abc' })).toBe(
      'field "amount": cannot convert string "12abc" to decimal(12,2) (not a decimal)',
    );
    expect(reason({ id: 1, amount: '12345678901.00' })).toMatch(/overflows decimal\(12,2\)/);
    expect(reason({ id: 1, amount: '9999999999.995' })).toMatch(/overflows/);
    expect(reason({ id: 1, amount: 10000000000 })).toMatch(/overflows decimal\(12,2\)/);
    expect(reason({ id: 1, rate: 1000 })).toMatch(/field "rate".*overflows decimal\(7,4\)/);
    expect(reason({ id: 1, amount: '.' })).toMatch(/not a decimal/);
    expect(reason({ id: 1, amount: true })).toMatch(/boolean true to decimal/);
  });

  it('maps "" to null', () => {
    expect(row({ amount: '' }).amount).toBeNull();
  });
});

describe('booleans', () => {
  it.each([
    [true, true],
    [false, false],
    [1, true],
    [0, false],
    ['1', true],
    ['0', false],
    ['true', true],
    ['false', false],
    ['', null],
    [null, null],
  ])('%j -> %j', (input, expected) => {
    expect(row({ active: input }).active).toBe(expected);
  });

  it('rejects anything else', () => {
    expect(reason({ id: 1, active: 'yes' })).toMatch(/field "active".*boolean/);
    expect(reason({ id: 1, active: 2 })).toMatch(/field "active"/);
  });
});

describe('text and the "" rule', () => {
  it('keeps "" as "" for text, null for every other type', () => {
    const r = row({
      name: '',
      size: '',
      score: '',
      amount: '',
      active: '',
      born: '',
      starts: '',
      updated_at: '',
      gender: '',
      headers: '',
      homeAddress: '',
      c_7: '',
    });
    expect(r.name).toBe('');
    // A custom field without an answer is left out of the object (the record carried it: `{}`, not null).
    expect(r.custom_fields).toBe('{}');
    for (const column of normalizer.columns) {
      if (column.type !== 'text' && column.name !== 'id' && column.name !== 'custom_fields')
        expect([column.name, r[column.name]]).toEqual([column.name, null]);
    }
  });

  it('writes numbers and booleans as their text, objects as JSON text', () => {
    expect(row({ name: 12345 }).name).toBe('12345');
    expect(row({ name: false }).name).toBe('false');
    expect(row({ name: { a: 1 } }).name).toBe('{"a":1}');
  });
});

describe('choices', () => {
  it('splits {id, value} into <f>_id and <f>', () => {
    const r = row({ gender: { id: 1, value: 'Female' } });
    expect([r.gender_id, r.gender]).toEqual([1, 'Female']);
  });

  it('tolerates a bare id, a bare value, a one-item array, an empty array and null', () => {
    const pick = (g: unknown) => {
      const r = row({ gender: g });
      return [r.gender_id, r.gender];
    };
    expect(pick(2)).toEqual([2, null]);
    expect(pick('2')).toEqual([2, null]);
    expect(pick('Male')).toEqual([null, 'Male']);
    expect(pick([{ id: 3, value: 'Other' }])).toEqual([3, 'Other']);
    expect(pick([])).toEqual([null, null]);
    expect(pick(null)).toEqual([null, null]);
    expect(pick({ id: '4' })).toEqual([4, null]);
  });

  it('rejects an unusable choice', () => {
    expect(reason({ id: 1, gender: { id: 'x', value: 'A' } })).toMatch(/field "gender".*choice/);
    expect(reason({ id: 1, gender: true })).toMatch(/field "gender"/);
  });
});

describe('id lists', () => {
  it('accepts comma-separated strings, arrays, JSON array text and a single id', () => {
    expect(row({ session_ids: '1,2,3' }).session_ids).toEqual([1, 2, 3]);
    expect(row({ session_ids: ' 1, 2 ,3 ' }).session_ids).toEqual([1, 2, 3]);
    expect(row({ session_ids: '' }).session_ids).toEqual([]);
    expect(row({ session_ids: [4, '5', null] }).session_ids).toEqual([4, 5]);
    expect(row({ session_ids: '[6,7]' }).session_ids).toEqual([6, 7]);
    expect(row({ session_ids: 8 }).session_ids).toEqual([8]);
    expect(row({ session_ids: null }).session_ids).toBeNull();
  });

  it('rejects an item that is not an id', () => {
    expect(reason({ id: 1, session_ids: '1,x' })).toMatch(/field "session_ids".*item 1/);
    expect(reason({ id: 1, session_ids: [1.5] })).toMatch(/field "session_ids"/);
  });

  it('text lists from arrays', () => {
    expect(row({ tags: ['a', 1, null] }).tags).toEqual(['a', '1']);
    expect(row({ tags: '' }).tags).toEqual([]);
  });
});

describe('json', () => {
  it('stores objects and arrays as JSON text, keeps valid JSON strings, quotes other strings', () => {
    expect(row({ headers: [{ key: 'X-A', value: '1' }] }).headers).toBe('[{"key":"X-A","value":"1"}]');
    expect(row({ headers: '{"a": 1}' }).headers).toBe('{"a": 1}');
    expect(row({ headers: 'plain' }).headers).toBe('"plain"');
    expect(row({ headers: '{broken' }).headers).toBe('"{broken"');
    expect(row({ headers: 0 }).headers).toBe('0');
    expect(row({ c_7: [{ id: 1, value: 'Vegan' }] }).custom_fields).toBe('{"c_7":[{"id":1,"value":"Vegan"}]}');
  });
});

describe('addresses', () => {
  it('spreads the expanded object into prefixed columns, missing parts null', () => {
    const r = row({ homeAddress: { line_1: 'Main St 1', city: 'Berlin', zip: 10115, extra: 'ignored' } });
    expect(r.home_address_line_1).toBe('Main St 1');
    expect(r.home_address_city).toBe('Berlin');
    expect(r.home_address_zip).toBe('10115');
    expect(r.home_address_line_2).toBeNull();
    expect(r.home_address_country).toBeNull();
  });

  it("treats [] (PHP's empty object) and null as no address, and rejects other shapes", () => {
    expect(row({ homeAddress: [] }).home_address_city).toBeNull();
    expect(row({ homeAddress: null }).home_address_city).toBeNull();
    expect(reason({ id: 1, homeAddress: 'Berlin' })).toMatch(/field "homeAddress".*address/);
  });
});

describe('catalogue streams', () => {
  it('normalizes a realistic registrant', () => {
    const n = createNormalizer(registrantsForBench());
    const result = n.normalize(JSON.parse(JSON.stringify(realisticRegistrant(7))));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.extras).toEqual({});
    expect(result.row).toMatchObject({
      id: 1_000_007,
      gender_id: 2,
      gender: 'Male',
      session_ids: [7, 12],
      group_paid: '-166.00',
      group_balance_due: '166.00',
      package_id: null,
      checked_in_at: null,
    });
    expect(JSON.parse(String(result.row.custom_fields)).c_102).toEqual([{ id: 7, value: 'Vegan' }]);
  });

  it('keys the registration audit by registrant, type and time; session_ids from a comma list', () => {
    const n = createNormalizer(resolveStream(getStream('registration_audit')));
    const result = n.normalize({
      registrant_id: '12',
      type: 'session_ids',
      session_ids: '3,4',
      updated_at: '2024-05-01 10:00:00',
    });
    expect(result.ok && result.row).toMatchObject({ registrant_id: 12, session_ids: [3, 4], event_id: null });
    const missing = n.normalize({ registrant_id: 12, session_ids: '3' });
    expect(missing.ok ? '' : missing.reason).toMatch(/key field "type"/);
  });

  it('fills the parent scope column with null when the record lacks it', () => {
    const n = createNormalizer(resolveStream(getStream('data_list_items')));
    const result = n.normalize({ id: 1, name: 'A' });
    expect(result.ok && result.row.data_list_id).toBeNull();
  });
});

describe('inferType', () => {
  it.each<[unknown, ScalarType | null]>([
    [null, null],
    ['', null],
    [true, 'boolean'],
    [3, 'bigint'],
    [2 ** 60, 'double'],
    [1.5, 'double'],
    ['hello', 'text'],
    ['00123', 'text'],
    ['12.50', 'text'],
    ['2024-01-02 03:04:05', 'timestamp'],
    ['2024-13-02 03:04:05', 'text'],
    ['2024-01-02', 'date'],
    ['10:30:00', 'time'],
    [[1, 2], 'bigint[]'],
    [[], 'json'],
    [['a'], 'json'],
    [{ a: 1 }, 'json'],
  ])('%j -> %s', (value, type) => {
    expect(inferType(value)).toBe(type);
  });

  it('infers only types whose converter accepts the value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const type = inferType(value);
        if (type !== null) expect(converterFor(type)(value)).not.toBe(INVALID);
      }),
    );
  });
});

describe('properties', () => {
  const streams = [resolved, registrantsForBench(), resolveStream(getStream('registration_audit'))];

  it('never throws on arbitrary JSON, always ok or a reason of at most 300 chars', () => {
    for (const stream of streams) {
      const n = createNormalizer(stream);
      const sources = [...new Set(n.columns.map((c) => c.source))];
      const record = fc.dictionary(fc.constantFrom(...sources, 'other', 'c_1'), fc.jsonValue(), { maxKeys: 12 });
      fc.assert(
        fc.property(fc.oneof(fc.jsonValue(), record), (raw) => {
          const result = n.normalize(raw);
          if (result.ok) expect(typeof result.row).toBe('object');
          else expect(result.reason.length).toBeGreaterThan(0);
          if (!result.ok) expect(result.reason.length).toBeLessThanOrEqual(300);
        }),
        { numRuns: 500 },
      );
    }
  });

  it('the generated normalizer agrees with the interpreted loop', () => {
    const compiled = createNormalizer(resolved);
    const interpreted = createNormalizer(resolved, { interpreted: true });
    const sources = [...new Set(compiled.columns.map((c) => c.source))];
    const value = fc.oneof(
      fc.jsonValue(),
      fc.constantFrom('', '1', '1,2', '2024-01-02 03:04:05', '-166.00', 'true', '0', { id: 1, value: 'A' }),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...sources, 'x_extra'), value), (raw) => {
        const record = { id: 1, ...raw };
        expect(compiled.normalize(record)).toEqual(interpreted.normalize(record));
      }),
      { numRuns: 1000 },
    );
  });

  it('decimals: canonical text equals the exact value rounded half away from zero', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 14n), max: 10n ** 14n }), fc.integer({ min: 0, max: 4 }), (n, shift) => {
        // n / 10^(2+shift) written as a decimal string, rounded to 2 places with bigint arithmetic.
        const scale = 2 + shift;
        const abs = n < 0n ? -n : n;
        const text = `${n < 0n ? '-' : ''}${abs / 10n ** BigInt(scale)}.${String(abs % 10n ** BigInt(scale)).padStart(scale, '0')}`;
        const unit = 10n ** BigInt(shift);
        const rounded = (abs + unit / 2n) / unit; // half away from zero on the absolute value (shift 0: exact)
        const expectedAbs = `${rounded / 100n}.${String(rounded % 100n).padStart(2, '0')}`;
        const expected = rounded === 0n ? expectedAbs : `${n < 0n ? '-' : ''}${expectedAbs}`;
        const out = canonicalDecimal(text, 38, 2);
        expect(out).toBe(expected);
      }),
    );
  });
});
