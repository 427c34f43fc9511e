/**
 * Odd answers from the service, at the normalizer (issue 18): the normalizer goes on, the other fields and records
 * are kept, and whatever cannot be stored is reported, never dropped silently.
 * - field names equal to a column, system, key or scope name in another case are kept out and reported;
 * - integers beyond 2^53 keep their digits (parseJsonExact + digit text), unstorable values are reported;
 * - credentials evsync holds are scrubbed from stored values and rejected raw JSON; `_` members are not kept;
 * - an id sweep accepts exactly the ids a walk accepts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { getStream, resolveStream } from '../../connectors/index.js';
import { defineStream } from '../../connectors/types.js';
import { parseJsonExact } from '../../normalizer/exact-json.js';
import { SYSTEM_COLUMNS } from '../../normalizer/field-names.js';
import { createNormalizer, type NormalizeResult } from '../../normalizer/normalize.js';
import { makeSecretScrubber, SCRUBBED } from '../../normalizer/secrets.js';
import { TOO_DEEP } from '../../normalizer/storable.js';
import { realisticRegistrant, registrantsForBench } from './normalize-throughput.js';

const registrants = resolveStream(getStream('registrants'), {
  customFields: [{ name: 'c_7', label: 'Diet', type: 'json' }, ...registrantsForBench().customFieldList],
});
const contacts = resolveStream(getStream('contacts'));
const base = realisticRegistrant(1);

function accepted(result: NormalizeResult) {
  if (!result.ok) throw new Error(`expected ok, got: ${result.reason}`);
  return result;
}
function rejected(result: NormalizeResult) {
  if (result.ok) throw new Error(`expected a rejection, got ${JSON.stringify(result.row)}`);
  return result;
}

describe('field names DuckDB would confuse with a column', () => {
  it('keeps "Email" beside email out of the row and reports it; the record and its other fields load', () => {
    const n = createNormalizer(registrants);
    const r = accepted(n.normalize({ ...base, Email: 'Other@Example.org', brand_new: 'kept' }));
    expect(r.row.email).toBe(base.email);
    expect(r.row).not.toHaveProperty('Email');
    expect(r.extras).toEqual({ brand_new: 'text' });
    expect(r.skipped).toEqual([{ field: 'Email', reason: expect.stringMatching(/column "email".*case is ignored/) }]);
  });

  it('keeps scope, key and derived column names out in any case; event_id never becomes a contacts column', () => {
    const n = createNormalizer(contacts);
    const r = accepted(
      n.normalize({ id: 5, email: 'a@b.c', event_id: 12, Event_Id: 13, ID: 6, gender: 'x', gender_id: 3 }),
    );
    expect(r.extras).toEqual({});
    expect(r.row).not.toHaveProperty('event_id');
    expect(r.row).not.toHaveProperty('Event_Id');
    expect(r.row.id).toBe(5);
    expect(r.skipped?.map((s) => s.field).sort()).toEqual(['Event_Id', 'ID', 'event_id', 'gender_id']);
    expect(r.skipped?.find((s) => s.field === 'event_id')?.reason).toMatch(/only event-scoped tables carry/);
    expect(r.skipped?.find((s) => s.field === 'gender_id')?.reason).toMatch(/filled from field "gender"/);

    const e = accepted(createNormalizer(registrants).normalize({ ...base, EVENT_ID: 9, Id: 4 }));
    expect(e.row.event_id).toBe(base.event_id);
    expect(e.row.id).toBe(base.id);
    expect(e.skipped?.map((s) => s.field)).toEqual(['EVENT_ID', 'Id']);
  });

  it('ignores `_` members (envelope), reports odd names, says nothing about fields without a value', () => {
    const r = accepted(
      createNormalizer(contacts).normalize({
        id: 1,
        _links: { self: { href: '/x' } },
        _SYNCED_AT: 'x',
        'bad name': 1,
        constructor: 'c',
        Email: null,
        EMAIL: '',
      }),
    );
    expect(r.skipped?.map((s) => [s.field, s.reason])).toEqual([
      ['bad name', 'field "bad name" not stored: name cannot be a column'],
      ['constructor', 'field "constructor" not stored: name cannot be a column'],
    ]);
  });

  it('the first spelling of a new field is its column for the run; other spellings are reported', () => {
    const n = createNormalizer(contacts);
    expect(accepted(n.normalize({ id: 1, Loyalty_Tier: 'gold' })).extras).toEqual({ Loyalty_Tier: 'text' });
    const second = accepted(n.normalize({ id: 2, loyalty_tier: 'silver' }));
    expect(second.extras).toEqual({});
    expect(second.skipped?.[0]?.reason).toMatch(/field "Loyalty_Tier" \(added first\)/);
    expect(accepted(n.normalize({ id: 3, Loyalty_Tier: 'bronze' })).row.Loyalty_Tier).toBe('bronze');
    accepted(n.normalize({ id: 4, loyalty_tier: 'tin' }));
    expect(n.skippedFields()).toEqual([
      { field: 'loyalty_tier', reason: expect.stringContaining('added first'), count: 2 },
    ]);
  });

  it('lists at most 1000 kinds of skipped fields, counting the rest together', () => {
    const n = createNormalizer(contacts);
    for (let i = 0; i < 1005; i++) n.normalize({ id: i + 1, [`odd name ${i}`]: 'x' });
    const summary = n.skippedFields();
    expect(summary).toHaveLength(1001);
    expect(summary[0]).toEqual({ field: 'odd name 0', reason: expect.any(String), count: 1 });
    expect(summary[1000]).toEqual({ field: '*', reason: expect.stringContaining('1000'), count: 5 });
  });

  it('property: row names are unique without case, never a system/scope name, and every valued field is in the row or skipped', () => {
    const columnNames = createNormalizer(contacts).columns.map((c) => c.name);
    const anyCase = (s: string) =>
      fc
        .array(fc.boolean(), { minLength: s.length, maxLength: s.length })
        .map((up) => [...s].map((ch, i) => (up[i] ? ch.toUpperCase() : ch)).join(''));
    const fieldName = fc.oneof(
      fc.constantFrom(...columnNames, ...SYSTEM_COLUMNS, 'event_id', 'extra_a', 'extra_b').chain(anyCase),
      fc.string({ maxLength: 8 }),
    );
    const value = fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean(), fc.constant(null));
    fc.assert(
      fc.property(fc.array(fc.dictionary(fieldName, value, { maxKeys: 8 }), { minLength: 1, maxLength: 5 }), (recs) => {
        const n = createNormalizer(contacts);
        const adopted = new Map<string, string>();
        for (const [i, fields] of recs.entries()) {
          const record: Record<string, unknown> = {};
          for (const [k, v] of Object.entries(fields)) {
            Object.defineProperty(record, k, { value: v, enumerable: true, configurable: true, writable: true });
          }
          record.id = i + 1;
          const r = n.normalize(record);
          if (!r.ok) continue; // a declared field with a value of the wrong type: a rejection, with its reason
          const lower = Object.keys(r.row).map((k) => k.toLowerCase());
          expect(new Set(lower).size).toBe(lower.length);
          for (const extra of Object.keys(r.extras)) {
            expect(extra.startsWith('_')).toBe(false);
            expect(extra.toLowerCase()).not.toBe('event_id');
            expect(columnNames.map((c) => c.toLowerCase())).not.toContain(extra.toLowerCase());
            const first = adopted.get(extra.toLowerCase()) ?? extra;
            expect(extra).toBe(first);
            adopted.set(extra.toLowerCase(), extra);
          }
          const skipped = new Set(r.skipped?.map((s) => s.field));
          for (const [k, v] of Object.entries(record)) {
            if (k.startsWith('_') || v === null || v === '') continue;
            const kept = k in r.extras || n.columns.some((c) => c.source === k);
            expect({ field: k, kept: kept || skipped.has(k) }).toEqual({ field: k, kept: true });
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('integers beyond 2^53 and values JSON cannot hold', () => {
  it('parseJsonExact keeps the digits of long integer literals and the text of overflowing numbers', () => {
    const text =
      '{"a":9007199254740993,"s":"9007199254740993 \\" 1e400","c":1e400,"d":[-12345678901234567890],"e":1.5,"f":12,' +
      '"g":9007199254740991,"h":1.7976931348623157e308}';
    expect(parseJsonExact(text)).toEqual({
      a: '9007199254740993',
      s: '9007199254740993 " 1e400',
      c: '1e400',
      d: ['-12345678901234567890'],
      e: 1.5,
      f: 12,
      g: 9007199254740991,
      h: 1.7976931348623157e308,
    });
  });

  it('parseJsonExact refuses what JSON.parse refuses', () => {
    for (const bad of ['[-]', '[0123456789012345678]', '[1e]', '{"a":12345678901234567890', '[1e400,]']) {
      expect(() => parseJsonExact(bad)).toThrow(SyntaxError);
    }
  });

  it('property: parseJsonExact is JSON.parse except for literals a double cannot hold, which keep their text', () => {
    const check = (exact: unknown, plain: unknown): void => {
      if (typeof plain === 'number' && typeof exact === 'string') {
        expect(Number(exact)).toBe(plain);
        expect(Number.isSafeInteger(plain) || (!Number.isInteger(plain) && Number.isFinite(plain))).toBe(false);
      } else if (plain !== null && typeof plain === 'object') {
        expect(Object.keys(exact as object)).toEqual(Object.keys(plain));
        for (const [k, v] of Object.entries(plain)) check((exact as Record<string, unknown>)[k], v);
      } else {
        expect(exact).toEqual(plain);
      }
    };
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        check(parseJsonExact(text), JSON.parse(text));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.string({ maxLength: 20 }), (big, s) => {
        const parsed = parseJsonExact(`{"s":${JSON.stringify(s)},"n":${big}}`) as { s: string; n: unknown };
        expect(parsed.s).toBe(s);
        const safe = big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER);
        expect(parsed.n).toEqual(safe ? Number(big) : String(big));
      }),
      { numRuns: 2000 },
    );
  });

  it('a declared bigint keeps the digits of a long integer; key and scope columns keep rejecting it', () => {
    const n = createNormalizer(registrants);
    const page = parseJsonExact(`[{"id": 1, "contact_id": 9007199254740993, "event_id": 10}]`) as unknown[];
    expect(accepted(n.normalize(page[0])).row.contact_id).toBe('9007199254740993');
    expect(accepted(n.normalize({ id: 1, contact_id: ' +009223372036854775807 ' })).row.contact_id).toBe(
      '9223372036854775807',
    );
    expect(rejected(n.normalize({ id: 1, contact_id: '9223372036854775808' })).reason).toMatch(/out of BIGINT range/);
    expect(rejected(n.normalize({ id: '9007199254740993' })).reason).toMatch(/field "id".*unsafe integer/);
    expect(rejected(n.normalize({ id: 1, event_id: '9007199254740993' })).reason).toMatch(/"event_id".*unsafe/);
  });

  it('a new field keeps a long integer as its digit text; 1e400 is kept as text, or reported when already Infinity', () => {
    const n = createNormalizer(contacts);
    const [exact] = parseJsonExact('[{"id": 1, "big": 9007199254740993, "huge": 1e400}]') as unknown[];
    const r = accepted(n.normalize(exact));
    expect(r.row.big).toBe('9007199254740993');
    expect(r.row.huge).toBe('1e400');
    expect(r.extras).toEqual({ big: 'text', huge: 'text' });

    const lossy = accepted(n.normalize(JSON.parse('{"id": 2, "huge": 1e400, "fine": 1}')));
    expect(lossy.row).not.toHaveProperty('huge');
    expect(lossy.row.fine).toBe(1);
    expect(lossy.skipped).toEqual([{ field: 'huge', reason: expect.stringMatching(/number Infinity.*not finite/) }]);
  });

  it('a value nested too deep to store is reported (new field) or rejected with a storable raw (declared field)', () => {
    let deep: unknown = [];
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const n = createNormalizer(registrants);
    const extra = accepted(n.normalize({ ...base, tree: deep }));
    expect(extra.row).not.toHaveProperty('tree');
    expect(extra.skipped).toEqual([{ field: 'tree', reason: expect.stringMatching(/nested too deep/) }]);

    const declared = rejected(n.normalize({ ...base, c_7: deep }));
    expect(declared.reason).toMatch(/field c_<id>.*nested too deep/);
    const stored = JSON.stringify(declared.raw);
    expect(stored).toContain(TOO_DEEP);
    expect(stored).toContain(base.email);
  });

  it('a double column refuses "1e400" instead of storing Infinity (which staging would write as null)', () => {
    const stream = resolveStream(
      defineStream({
        name: 'scores',
        path: '/scores',
        scope: 'account',
        kind: 'list',
        key: ['id'],
        cursor: null,
        maxPerPage: 100,
        fields: { id: 'bigint', score: 'double' },
        verified: true,
        description: 'test',
      }),
    );
    expect(rejected(createNormalizer(stream).normalize({ id: 1, score: '1e400' })).reason).toMatch(/not finite/);
  });
});

describe('credentials the service echoes', () => {
  const secret = 'Zk3q9TqL0vX2mB7nR4sW8y/C1dF6gH5j';
  const token = '4f9a0c1e7b3d2a6f8e5c9b1a0d3f7e2c4b6a8d0e1f3a5c7b';
  let held: string[] = [secret, token, 'short'];
  const scrub = makeSecretScrubber(() => held);

  it('scrubs text, JSON, list, choice and new-field values; keeps short "secrets" and everything else', () => {
    const n = createNormalizer(registrants, { scrub });
    const r = accepted(
      n.normalize({
        ...base,
        notes: `Authorization: Bearer ${token}`,
        bio: 'short and sweet',
        // JSON text as PHP writes it (slashes escaped), kept as it is by the json converter.
        c_7: `{"link":"https://x.test/a?access_token=${token}","s":"${secret.replace('/', '\\/')}"}`,
        gender: { id: 1, value: `v${secret}` },
        echoed: `token=${encodeURIComponent(secret)}`,
      }),
    );
    expect(r.row.notes).toBe(`Authorization: Bearer ${SCRUBBED}`);
    expect(r.row.bio).toBe('short and sweet');
    // The answer is scrubbed as the string the service sent, then written into the custom-fields JSON.
    expect(JSON.parse(String(r.row.custom_fields)).c_7).toBe(
      `{"link":"https://x.test/a?access_token=${SCRUBBED}","s":"${SCRUBBED}"}`,
    );
    expect(r.row.gender).toBe(`v${SCRUBBED}`);
    expect(r.row.echoed).toBe(`token=${SCRUBBED}`);
    expect(JSON.stringify(r.row)).not.toContain(token);
  });

  it('a rejected record’s raw keeps no `_` member and no secret; nor does its reason', () => {
    const n = createNormalizer(registrants, { scrub });
    const r = rejected(
      n.normalize({
        id: `x${secret}`,
        notes: `Bearer ${token}`,
        _links: { self: { href: `/v1/registrants?access_token=${token}` } },
        _meta: { x: 1 },
        [`key_${token}`]: 1,
      }),
    );
    const raw = JSON.stringify(r.raw);
    for (const s of [secret, token, '_links', '_meta']) expect(raw).not.toContain(s);
    expect(raw).toContain(`Bearer ${SCRUBBED}`);
    expect(raw).toContain(`"key_${SCRUBBED}":1`);
    expect(r.reason).toBe(`field "id": cannot convert string "x${SCRUBBED}" to bigint (not an integer)`);
  });

  it('a token rotated mid-run is scrubbed from the next record on', () => {
    const n = createNormalizer(contacts, { scrub });
    const next = 'aa0b1c2d3e4f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7';
    expect(accepted(n.normalize({ id: 1, notes: next })).row.notes).toBe(next);
    held = [...held, next];
    expect(accepted(n.normalize({ id: 2, notes: next })).row.notes).toBe(SCRUBBED);
  });

  it('property: no held secret survives in any stored string', () => {
    const n = createNormalizer(contacts, { scrub: makeSecretScrubber(() => [secret, token]) });
    const around = fc.string({ maxLength: 10 });
    const withSecret = fc
      .tuple(around, fc.constantFrom(secret, token, encodeURIComponent(secret)), around)
      .map(([a, s, b]) => a + s + b);
    fc.assert(
      fc.property(withSecret, withSecret, (notes, extra) => {
        const r = accepted(n.normalize({ id: 1, notes, tags_x: [extra], other: extra }));
        const stored = JSON.stringify(r.row);
        for (const s of [secret, token, encodeURIComponent(secret)]) expect(stored).not.toContain(s);
      }),
      { numRuns: 500 },
    );
  });
});

describe('ids for delete sweeps', () => {
  it('property: keyId accepts exactly the ids normalize accepts, with the same value (0 and negatives too)', () => {
    const n = createNormalizer(registrants);
    const id = fc.oneof(
      fc.integer({ min: -1e6, max: 1e6 }),
      fc.constantFrom(0, -0, -5, 2 ** 53, 2 ** 53 - 1, 1.5, '', ' 7 ', '+3', '-0', '0012', 'x', null, true),
      fc.integer().map((i) => ({ id: i })),
      fc.integer().map(String),
    );
    fc.assert(
      fc.property(id, (value) => {
        const walk = n.normalize({ ...base, id: value });
        const sweep = n.keyId({ id: value });
        expect(sweep.ok).toBe(walk.ok);
        if (walk.ok && sweep.ok) expect(sweep.id).toBe(walk.row.id);
      }),
      { numRuns: 2000 },
    );
    expect(n.keyId({ id: 0 })).toEqual({ ok: true, id: 0 });
    expect(n.keyId({ id: -5 })).toEqual({ ok: true, id: -5 });
    expect(n.keyId({ id: '-12' })).toEqual({ ok: true, id: -12 });
    expect(n.keyId(null).ok).toBe(false);
  });
});
