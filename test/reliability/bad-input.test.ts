/**
 * Bad input, property-based: malformed records, wrong types, huge strings, unknown fields and broken envelopes.
 * - the normalizer never throws, and rejects what cannot be a row (not an object, no usable key);
 * - a page through the engine's PageLoader into a real warehouse never fails because of a bad record: the records
 *   the normalizer accepts are loaded value for value, the others land in `_evsync.rejected`, and the page's cursor
 *   is saved with them;
 * - broken list envelopes (served through a proxy in front of the simulator) fail the item they belong to: the
 *   sync does not crash, other items load, and that scope's cursor does not move past data it did not load.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResolvedStream } from '../../connectors/types.js';
import { createNormalizer } from '../../normalizer/normalize.js';
import { physicalColumns } from '../../schemas/columns.js';
import { runSync } from '../../src/sync/index.js';
import { PageLoader } from '../../src/sync/page-loader.js';
import type { CursorState } from '../../src/warehouse/index.js';
import { canon, type Harness, resolvedFromTruth, startHarness } from '../helpers/harness.js';
import { expectEqualToSource, FULL } from '../helpers/reliability.js';

const RUNS = FULL ? 300 : 25;

let h: Harness;
let stream: ResolvedStream;
let good: Record<string, unknown>[];

beforeAll(async () => {
  h = await startHarness({ seed: 7 });
  stream = resolvedFromTruth(h.sim, 'registrants');
  good = h.sim.truth('registrants').records;
});

afterAll(async () => {
  await h?.close();
});

const INTEGERISH = /^\s*[+-]?\d+\s*$/;
/**
 * Odd text: control characters, NUL, quotes and backslashes, non-BMP characters. Lone surrogates are left out here
 * and tested on their own below (they once sank a whole page; `duckJson` now makes such text well-formed).
 */
const oddText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 50 }),
  fc.constantFrom('\u0000', '"\\\'', '\u202e', '😀', '\r\n\t', 'null', 'true', '[]', '{}'),
);
const wrongValue = fc.oneof(
  oddText,
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
);
/** A value that cannot be read as an id (no digit strings, integers or `{id}` objects). */
const notAnId = fc.oneof(
  fc.string().filter((s) => !INTEGERISH.test(s) && s !== ''),
  fc.double().filter((d) => !Number.isInteger(d)),
  fc.boolean(),
  fc.constant(''),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 2 }),
);

type Corruption =
  | { kind: 'none' }
  | { kind: 'not-object'; value: unknown }
  | { kind: 'bad-id'; value: unknown }
  | { kind: 'no-id' }
  | { kind: 'wrong-type'; field: string; value: unknown }
  | { kind: 'huge'; field: string; size: number }
  | { kind: 'unknown'; name: string; value: unknown };

function corruption(fields: string[]): fc.Arbitrary<Corruption> {
  const textFields = ['notes', 'bio', 'company', 'email', 'first_name'];
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant<Corruption>({ kind: 'none' }) },
    fc.record({
      kind: fc.constant('not-object' as const),
      value: fc.oneof(fc.constant(null), fc.integer(), fc.string(), fc.array(fc.integer())),
    }),
    fc.record({ kind: fc.constant('bad-id' as const), value: notAnId }),
    fc.constant<Corruption>({ kind: 'no-id' }),
    fc.record({
      kind: fc.constant('wrong-type' as const),
      field: fc.constantFrom(...fields.filter((f) => f !== 'id')),
      value: wrongValue,
    }),
    fc.record({
      kind: fc.constant('huge' as const),
      field: fc.constantFrom(...textFields),
      size: fc.integer({ min: 10_000, max: FULL ? 2_000_000 : 300_000 }),
    }),
    fc.record({
      kind: fc.constant('unknown' as const),
      name: fc.constantFrom(
        'extra_note',
        'extra_count',
        'ExtraFlag',
        '_private',
        'bad name',
        '__proto__',
        'constructor',
      ),
      value: fc.oneof(fc.integer(), fc.string({ maxLength: 20 }), fc.boolean(), fc.double(), wrongValue),
    }),
  );
}

let nextId = 5_000_000;

function apply(base: Record<string, unknown>, c: Corruption): unknown {
  const record: Record<string, unknown> = { ...base, id: nextId++ };
  switch (c.kind) {
    case 'none':
      return record;
    case 'not-object':
      return c.value;
    case 'bad-id':
      record.id = c.value;
      return record;
    case 'no-id':
      delete record.id;
      return record;
    case 'wrong-type':
      record[c.field] = c.value;
      return record;
    case 'huge':
      record[c.field] = 'x'.repeat(c.size - 1) + '€';
      return record;
    case 'unknown':
      // defineProperty: a `__proto__` key must be an own field, as JSON.parse would make it.
      Object.defineProperty(record, c.name, { value: c.value, enumerable: true, configurable: true, writable: true });
      return record;
  }
}

describe('the normalizer', () => {
  it('never throws; rejects non-objects and records without a usable id; keeps unknown fields out of the way', () => {
    const normalizer = createNormalizer(stream);
    const fields = Object.keys(good[0]!);
    fc.assert(
      fc.property(fc.constantFrom(...good), corruption(fields), (base, c) => {
        const raw = apply(base, c);
        const result = normalizer.normalize(raw);
        if (c.kind === 'not-object' || c.kind === 'bad-id' || c.kind === 'no-id') expect(result.ok).toBe(false);
        if (c.kind === 'none' || c.kind === 'huge') expect(result.ok).toBe(true);
        if (!result.ok) expect(typeof result.reason).toBe('string');
      }),
      { numRuns: RUNS * 20 },
    );
  });

  it('never throws on any JSON value at all', () => {
    const normalizer = createNormalizer(stream);
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), (value) => {
        const r = normalizer.normalize(value);
        expect(typeof r.ok).toBe('boolean');
      }),
      { numRuns: RUNS * 20 },
    );
  });
});

describe('the loader (PageLoader into a real warehouse)', () => {
  it('loads the good records of a bad page, rejects the rest, saves the cursor with them', async () => {
    const runId = `bad-input-${randomUUID()}`;
    const loader = new PageLoader(h.warehouse, runId);
    await h.warehouse.ensureTable(stream);
    const normalizer = createNormalizer(stream);
    const columns = physicalColumns(stream)
      .map((c) => c.name)
      .filter((c) => c !== 'event_id');
    const fields = Object.keys(good[0]!);
    let page = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(...good), corruption(fields)), { minLength: 1, maxLength: 40 }),
        async (specs) => {
          page += 1;
          const records = specs.map(([base, c]) => apply(base, c));
          const verdicts = records.map((r) => normalizer.normalize(r));
          const accepted = verdicts.flatMap((v) => (v.ok ? [v.row] : []));
          // A rejected record is kept once (the same raw JSON for the same reason): start each page from none.
          await h.warehouse.query('DELETE FROM _evsync.rejected WHERE run_id = ?', [runId]);
          const cursor: CursorState = {
            stream: 'registrants',
            scope: 'event:101',
            watermark: null,
            walk: {
              mode: 'backfill',
              walkId: runId,
              from: null,
              to: '2030-01-01 00:00:00',
              lastKey: nextId,
              pages: page,
              rows: page * 40,
            },
            lastPages: null,
            lastSweepAt: null,
            updatedAt: '2030-01-01 00:00:00',
          };
          const result = await loader.load({
            stream,
            scope: { key: 'event:101', column: 'event_id', value: 101 },
            records,
            cursor,
          });
          const rejectedNow = verdicts.length - accepted.length;
          expect(result.rejected).toBe(rejectedNow);
          const distinct = new Set(
            verdicts.flatMap((v, i) => (v.ok ? [] : [`${JSON.stringify(records[i])}\u0000${v.reason}`])),
          );
          const after = await h.warehouse.query('SELECT count(*) AS n FROM _evsync.rejected WHERE run_id = ?', [runId]);
          expect(Number(after.rows[0]?.n)).toBe(distinct.size);

          if (accepted.length > 0) {
            const ids = accepted.map((r) => Number(r.id));
            const stored = await h.warehouse.query(
              `SELECT * FROM registrants WHERE id IN (${ids.join(',')}) AND _deleted_at IS NULL`,
            );
            expect(stored.rows.length).toBe(accepted.length);
            const byId = new Map(stored.rows.map((r) => [Number(r.id), r]));
            for (const row of accepted) {
              const got = byId.get(Number(row.id))!;
              for (const column of columns) {
                expect({ id: row.id, column, value: canon(got[column]) }).toEqual({
                  id: row.id,
                  column,
                  value: canon(row[column]),
                });
              }
            }
          }
          const saved = await h.warehouse.cursors.get('registrants', 'event:101');
          expect(saved?.walk?.lastKey).toBe(cursor.walk?.lastKey);
          expect(saved?.walk?.pages).toBe(page);
        },
      ),
      { numRuns: RUNS },
    );
  }, 300_000);
});

describe('a lone UTF-16 surrogate in a record', () => {
  // `"\ud800"` is valid JSON and JSON.parse gives a lone surrogate, but DuckDB's JSON reader refuses it: before the
  // fix (duckJson in src/warehouse/db/sql.ts) one such character failed the whole page's transaction on every retry,
  // in an accepted text value (the staged page) or in a rejected record (its raw JSON). Now the text is made
  // well-formed (U+FFFD) and the rest of the page loads.
  const cases: [string, (r: Record<string, unknown>) => Record<string, unknown>][] = [
    ['in a text value of an otherwise good record', (r) => ({ ...r, notes: 'a\ud800b' })],
    ['in a record the normalizer rejects', (r) => ({ ...r, event_id: '\ud800' })],
  ];
  it.each(cases)('%s does not sink the page', async (_, corrupt) => {
    const loader = new PageLoader(h.warehouse, `surrogate-${randomUUID()}`);
    await h.warehouse.ensureTable(stream);
    const goodOne = { ...good[1]!, id: nextId++ };
    await loader.load({
      stream,
      scope: { key: 'event:101', column: 'event_id', value: 101 },
      records: [corrupt({ ...good[0]!, id: nextId++ }), goodOne],
      cursor: {
        stream: 'registrants',
        scope: 'event:102',
        watermark: null,
        walk: null,
        lastPages: 1,
        lastSweepAt: null,
        updatedAt: '2030-01-01 00:00:00',
      },
    });
    const stored = await h.warehouse.query(`SELECT count(*) AS n FROM registrants WHERE id = ${goodOne.id}`);
    expect(Number(stored.rows[0]?.n)).toBe(1);
  });
});

/** Envelopes the client must refuse: wrong shapes, wrong types, items that break the keyset order. */
const brokenEnvelope = fc.oneof(
  fc.constant('[]'),
  fc.constant('null'),
  fc.constant('{"items": "nope", "_meta": {"totalCount": 1, "pageCount": 1, "currentPage": 1, "perPage": 1}}'),
  fc.constant('{"items": [], "_meta": {"totalCount": "x", "pageCount": 1, "currentPage": 1, "perPage": 1}}'),
  fc.constant(
    '{"items": [{"id": 5}, {"id": 3}], "_meta": {"totalCount": 2, "pageCount": 1, "currentPage": 1, "perPage": 2}}',
  ),
  fc.constant(
    '{"items": [{"name": "no id"}], "_meta": {"totalCount": 1, "pageCount": 1, "currentPage": 1, "perPage": 1}}',
  ),
  // `items` that is no list (a list may be a valid page: `{"items":[]}` without `_meta` is an empty last page the
  // client tolerates, as the spec's absent fields are; drawn about one run in a few, it made this test flaky).
  fc
    .jsonValue({ maxDepth: 2 })
    .filter((v) => !Array.isArray(v))
    .map((v) => JSON.stringify({ items: v })),
  fc.string({ maxLength: 30 }).map((s) => `{"items": [${s}`),
);

describe('broken envelopes through the engine', () => {
  it('fail their item without crashing the sync or moving its cursor; a clean rerun ends equal', async () => {
    const events = h.sim.truth('events').records.map((e) => Number(e.id));
    const target = events[0]!;
    await fc.assert(
      fc.asyncProperty(brokenEnvelope, async (envelope) => {
        const harness = await startHarness({ seed: 7 });
        let corrupt = true;
        const { client } = await harness.proxied({
          rewrite: (path, body) =>
            corrupt && path.includes('/registrants?') && path.includes(`event_id=${target}&`) ? envelope : body,
        });
        try {
          const result = await runSync(client, harness.warehouse, {
            mode: 'backfill',
            streams: 'registrants',
            lagSeconds: 0,
          });
          expect(result.status).toBe('failed');
          expect(result.errors.join('\n')).toContain(`event:${target}`);
          const cursor = await harness.warehouse.cursors.get('registrants', `event:${target}`);
          expect(cursor?.watermark ?? null).toBeNull();
          const loaded = await harness.warehouse.query(
            `SELECT count(*) AS n FROM registrants WHERE event_id = ${target}`,
          );
          expect(Number(loaded.rows[0]?.n)).toBe(0);
          // Every other event's registrants did load.
          const others = await harness.warehouse.query(`SELECT count(DISTINCT event_id) AS n FROM registrants`);
          const withRegistrants = new Set(
            harness.sim
              .truth('registrants')
              .records.map((r) => Number(r.event_id))
              .filter((id) => id !== target),
          );
          expect(Number(others.rows[0]?.n)).toBe(withRegistrants.size);

          corrupt = false;
          const again = await runSync(client, harness.warehouse, {
            mode: 'backfill',
            streams: 'registrants',
            lagSeconds: 0,
          });
          expect(again.errors).toEqual([]);
          expect(again.status).toBe('done');
          await expectEqualToSource(harness.sim, harness.warehouse, ['registrants']);
        } finally {
          await harness.close();
        }
      }),
      { numRuns: FULL ? 40 : 4 },
    );
  }, 300_000);
});
