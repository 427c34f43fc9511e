/**
 * Odd answers from the service (issue 18), end to end: never block a scope, never drop data or leak it silently.
 * - Through the engine, with a proxy rewriting the simulator's answers: a field that differs from a column only by
 *   case, `event_id` on an account-scoped stream, and a NUL in a custom-field label. The run finishes clean, every
 *   row equals the source, no column is added for those fields, and every analytics view exists.
 * - Into a real warehouse, pages as the normalizer makes them: integers beyond 2^53 keep their digits (BIGINT and
 *   text), a record with a value too deep to store is rejected with a raw that stores, credentials are nowhere in
 *   tables or `_evsync.rejected`, and ids <= 0 that a walk loaded survive the id sweep.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getStream, resolveStream } from '../../connectors/index.js';
import type { ScalarType } from '../../connectors/types.js';
import { parseJsonExact } from '../../normalizer/exact-json.js';
import { createNormalizer, type NormalizeResult } from '../../normalizer/normalize.js';
import { makeSecretScrubber, SCRUBBED } from '../../normalizer/secrets.js';
import { TOO_DEEP } from '../../normalizer/storable.js';
import { runSync } from '../../src/sync/index.js';
import { VIEWS } from '../../src/warehouse/index.js';
import { startHarness } from '../helpers/harness.js';
import type { ProxyRules } from '../helpers/proxy.js';
import { expectEqualToSource } from '../helpers/reliability.js';
import { eventScope, openTemp, page, rows, type TempWarehouse } from '../warehouse/helpers.js';

type Item = Record<string, unknown>;

/** Proxy rules that rewrite, in place, the items of every 200 list answer (given the path below the base). */
function rewriteItems(rewrite: (path: string, items: Item[]) => void): ProxyRules {
  return {
    rewrite: (path, body) => {
      if (!body.startsWith('{"items"')) return null;
      const envelope = JSON.parse(body) as { items: Item[] };
      rewrite(path, envelope.items);
      return JSON.stringify(envelope);
    },
  };
}

describe('odd answers through the engine', () => {
  it('case-twin fields, event_id on contacts and a NUL in a label block nothing and lose nothing', async () => {
    const h = await startHarness({ seed: 7 });
    const { client } = await h.proxied(
      rewriteItems((path, items) => {
        if (path.includes('/registrants?')) {
          for (const item of items) {
            if (typeof item.email === 'string') item.Email = item.email.toUpperCase();
            item.EVENT_ID = 1;
          }
        } else if (path.includes('/contacts?')) {
          for (const item of items) item.event_id = 99;
        } else if (path.includes('/event-questions?')) {
          for (const item of items) item.name = `\u0000${String(item.name)}\u0001 (asked)`;
        }
      }),
    );
    try {
      const result = await runSync(client, h.warehouse, {
        mode: 'backfill',
        streams: 'registrants,contacts,sessions,session_attendance',
        lagSeconds: 0,
      });
      expect(result.errors).toEqual([]);
      expect(result.warnings.filter((w) => w.includes('analytics'))).toEqual([]);
      expect(result.status).toBe('done');
      await expectEqualToSource(h.sim, h.warehouse, ['registrants', 'contacts']);

      const columns = await rows(
        h.warehouse,
        `SELECT table_name, column_name FROM duckdb_columns()
          WHERE schema_name = 'main' AND table_name IN ('registrants', 'contacts')`,
      );
      const of = (t: string) => columns.filter((c) => c.table_name === t).map((c) => String(c.column_name));
      expect(of('registrants')).not.toContain('Email');
      expect(of('registrants').filter((c) => c.toLowerCase() === 'event_id')).toEqual(['event_id']);
      expect(of('contacts')).not.toContain('event_id');

      const views = await rows(h.warehouse, `SELECT view_name FROM duckdb_views() WHERE schema_name = 'analytics'`);
      const names = views.map((v) => String(v.view_name));
      for (const v of VIEWS.filter((d) => d.requires.length > 0)) {
        const tables = ['registrants', 'sessions', 'session_attendance'];
        if (v.requires.every((r) => tables.includes(r))) expect(names).toContain(v.name);
      }
      const perEvent = names.filter((n) => /^registrants_event_\d+$/.test(n));
      expect(perEvent.length).toBeGreaterThan(0);
      for (const view of perEvent) {
        const labeled = (await h.warehouse.query(`SELECT * FROM analytics.${view} LIMIT 0`)).columns;
        expect(labeled.some((c) => c.includes(' (asked)') && !/[\u0000-\u001f]/.test(c))).toBe(true);
      }
    } finally {
      await h.close();
    }
  }, 120_000);
});

describe('odd values into a real warehouse', () => {
  let t: TempWarehouse;
  const registrants = resolveStream(getStream('registrants'), {
    customFields: [{ name: 'c_7', label: 'Diet', type: 'json' }],
  });
  const scope = eventScope(10);
  const record = (id: number, extra: Item = {}): Item => ({
    id,
    event_id: 10,
    email: `p${id}@example.org`,
    registration_status: 'confirmed',
    updated_at: '2024-03-10 00:00:00',
    ...extra,
  });

  /**
   * Splits normalized records as the engine's loader does: rows, rejected records with their storable raw, and new
   * columns typed by the first record that carries them.
   */
  function split(results: NormalizeResult[]) {
    const newColumns: Record<string, ScalarType> = {};
    for (const r of results) if (r.ok) for (const [k, v] of Object.entries(r.extras)) newColumns[k] ??= v;
    return {
      rows: results.flatMap((r) => (r.ok ? [r.row] : [])),
      rejected: results.flatMap((r) => (r.ok ? [] : [{ raw: r.raw, reason: r.reason }])),
      newColumns,
    };
  }

  beforeAll(async () => {
    t = await openTemp();
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('integers beyond 2^53 keep every digit; a record too deep to store is rejected and the page loads', async () => {
    const text = `{"items": [
      {"id": 1, "event_id": 10, "contact_id": 9007199254740993, "points": 12345678901234567890, "updated_at": "2024-03-10 00:00:00"},
      {"id": 2, "event_id": 10, "contact_id": -9223372036854775808, "points": 7, "updated_at": "2024-03-10 00:00:00"},
      {"id": 3, "event_id": 10, "contact_id": 5, "updated_at": "2024-03-10 00:00:00"}
    ]}`;
    const { items } = parseJsonExact(text) as { items: Item[] };
    let deep: unknown = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    items.push(record(4, { c_7: deep }));
    const n = createNormalizer(registrants);
    const results = items.map((r) => n.normalize(r));
    const { rows: good, rejected, newColumns } = split(results);
    await page(t.w, registrants, scope, good, { rejected, newColumns });

    const stored = await rows(
      t.w,
      `SELECT id, CAST(contact_id AS VARCHAR) AS contact_id, points FROM registrants ORDER BY id`,
    );
    expect(stored).toEqual([
      { id: '1', contact_id: '9007199254740993', points: '12345678901234567890' },
      { id: '2', contact_id: '-9223372036854775808', points: '7' },
      { id: '3', contact_id: '5', points: null },
    ]);
    const [bad] = await rows(t.w, `SELECT raw, reason FROM _evsync.rejected WHERE reason LIKE '%c_<id>%'`);
    expect(String(bad?.reason)).toMatch(/nested too deep/);
    expect(String(bad?.raw)).toContain(TOO_DEEP);
  });

  it('credentials the service echoes are in no table and no rejected raw', async () => {
    const token = '4f9a0c1e7b3d2a6f8e5c9b1a0d3f7e2c4b6a8d0e1f3a5c7b';
    const secret = 'Zk3q9TqL0vX2mB7nR4sW8y/C1dF6gH5j';
    const n = createNormalizer(registrants, { scrub: makeSecretScrubber(() => [secret, token]) });
    const links = { self: { href: `/v1/registrants?access_token=${token}` } };
    const results = [
      record(20, { notes: `Bearer ${token}`, c_7: { href: links.self.href }, _links: links, echoed: secret }),
      record(0, { id: 'not an id', notes: `Bearer ${token}`, _links: links }),
    ].map((r) => n.normalize(r));
    const { rows: good, rejected, newColumns } = split(results);
    await page(t.w, registrants, scope, good, { rejected, newColumns });

    const [row] = await rows(t.w, `SELECT notes, custom_fields, echoed FROM registrants WHERE id = 20`);
    expect(row).toEqual({
      notes: `Bearer ${SCRUBBED}`,
      custom_fields: `{"c_7":{"href":"/v1/registrants?access_token=${SCRUBBED}"}}`,
      echoed: SCRUBBED,
    });
    const everything = await rows(
      t.w,
      `SELECT (SELECT string_agg(CAST(r AS VARCHAR), '') FROM registrants r) AS a,
              (SELECT string_agg(raw::VARCHAR || reason, '') FROM _evsync.rejected) AS b`,
    );
    const dump = JSON.stringify(everything);
    expect(dump).not.toContain(token);
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain('_links');
  });

  it('rows with id 0 or below that a walk loaded survive the id sweep', async () => {
    const n = createNormalizer(registrants);
    const walk = [record(0), record(-5), record(30)].map((r) => n.normalize(r));
    await page(
      t.w,
      registrants,
      eventScope(11),
      split(walk).rows.map((r) => ({ ...r, event_id: 11 })),
    );
    // The sweep reads ids only, and takes them with the key column's converter (Normalizer.keyId).
    const seen = [{ id: -5 }, { id: '0' }, { id: 30 }].flatMap((r) => {
      const id = n.keyId(r);
      return id.ok ? [id.id] : [];
    });
    expect(seen).toEqual([-5, 0, 30]);
    await page(t.w, registrants, eventScope(11), [], { upsert: false, seen: { walkId: 'sweep-1', ids: seen } });
    const marked = await t.w.markMissing({
      stream: registrants,
      scope: eventScope(11),
      walkId: 'sweep-1',
      runId: 'r',
      at: '2024-03-11 00:00:00',
    });
    expect(marked).toEqual({ deleted: 0, restored: 0 });
    expect(
      await rows(t.w, `SELECT id FROM registrants WHERE event_id = 11 AND _deleted_at IS NULL ORDER BY id`),
    ).toEqual([{ id: '-5' }, { id: '0' }, { id: '30' }]);
  });
});
