/**
 * The history of registrants fed by webhooks (issue 37), against the simulator: a backfill, then single changes a
 * simulated second apart (status moves, other fields, inserts, deletes), each delivered as it happens. The history
 * holds exactly the versions the simulator went through, its intervals follow each other, its current versions
 * are the live rows, and an as-of query answers what the simulator held at each moment. The same deliveries posted
 * to a second warehouse shuffled and duplicated give the same history, and so does a rebuild from the archive.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningCapture } from '../../src/sync/capture/server.js';
import { startCapture } from '../../src/sync/capture/server.js';
import { runSync } from '../../src/sync/index.js';
import { rebuild } from '../../src/sync/rebuild/rebuild.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { type CaptureHarness, HEADER, SECRET, startCaptureHarness } from '../capture/helpers.js';
import {
  expectedVersions,
  historyChecksum,
  historyRows,
  historyVersions,
  intervalProblems,
  type Snapshot,
  snapshot,
  utcText,
} from './helpers.js';

let h: CaptureHarness;
let second: Warehouse;
const snapshots: Snapshot[] = [];
/** Single changes made, each in a simulated second of its own. */
const CHANGES = 80;

/** A seeded shuffle (the test's order is the same on every run). */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

beforeAll(async () => {
  h = await startCaptureHarness({ sim: { size: 'tiny', seed: 21 } });
  // A second warehouse backfilled from the same state: the deliveries are posted to it later, out of order.
  second = await Warehouse.open(`${h.dbPath}-second.duckdb`);
  const backfill = await runSync(h.client(), second, { mode: 'backfill', streams: h.streams.join(',') });
  expect(backfill.status).toBe('done');
  snapshots.push(snapshot(h.sim));
  for (let i = 0; i < CHANGES; i++) {
    h.sim.mutate(1, { streams: ['registrants'] });
    h.sim.advanceClock(1);
    snapshots.push(snapshot(h.sim));
  }
  await h.settle();
  await h.warehouse.buildAnalyticsViews();
}, 180_000);

afterAll(async () => {
  await second?.close();
  await h?.stop();
});

describe('history by webhook', () => {
  it('holds exactly the versions the simulator went through, in order', async () => {
    const expected = expectedVersions(snapshots);
    const got = await historyVersions(h.warehouse);
    expect(got.size).toBe(expected.size);
    const changed = [...expected.values()].filter((v) => v.length > 1);
    // The changes include records changed more than once, deletes and new records.
    expect(changed.length).toBeGreaterThan(20);
    expect([...expected.values()].some((v) => v.length > 2)).toBe(true);
    expect([...expected.values()].some((v) => v[v.length - 1]?.deleted)).toBe(true);
    for (const [id, versions] of expected) expect(got.get(id), `registrant ${id}`).toEqual(versions);
  });

  it('closes each version where the next begins, one open version per record, and says who saw what', async () => {
    expect(await intervalProblems(h.warehouse)).toEqual([]);
    const r = await h.warehouse.query(
      `SELECT _observed_by AS by, _follows_previous AS f, count(*) AS n FROM history.registrants GROUP BY ALL ORDER BY ALL`,
    );
    const kinds = r.rows.map((row) => `${row.by}:${row.f}`).sort();
    // The backfill's versions begin the history (nothing known before), as do records created since (delivered as
    // they were made); each delivered change follows its predecessor directly.
    expect(kinds).toEqual(['poll:null', 'webhook:null', 'webhook:true']);
  });

  it('has the live rows as its current versions (a deleted one with the values it had before)', async () => {
    const columns = await h.warehouse.query(
      `SELECT column_name FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = 'registrants'
          AND column_name NOT IN ('_synced_at', '_deleted_at') ORDER BY column_index`,
    );
    const list = columns.rows.map((c) => `"${String(c.column_name)}"`).join(', ');
    const diff = await h.warehouse.query(
      `SELECT count(*) AS n FROM (
         (SELECT ${list}, _synced_at FROM main.registrants WHERE _deleted_at IS NULL
          EXCEPT ALL SELECT ${list}, _recorded_at FROM history.registrants WHERE _valid_to IS NULL AND NOT _is_deleted)
         UNION ALL
         (SELECT ${list}, _recorded_at FROM history.registrants WHERE _valid_to IS NULL AND NOT _is_deleted
          EXCEPT ALL SELECT ${list}, _synced_at FROM main.registrants WHERE _deleted_at IS NULL))`,
    );
    expect(diff.rows).toEqual([{ n: '0' }]);
    const deleted = await h.warehouse.query(
      `SELECT (SELECT list(id ORDER BY id) FROM main.registrants WHERE _deleted_at IS NOT NULL) AS live,
              (SELECT list(id ORDER BY id) FROM history.registrants WHERE _valid_to IS NULL AND _is_deleted) AS history`,
    );
    expect(deleted.rows[0]?.history).toEqual(deleted.rows[0]?.live);
    expect(String(deleted.rows[0]?.live)).not.toBe('null');
  });

  it('answers as of a moment what the simulator held then', async () => {
    // Every fifth moment; each just before the next change was made (a change's time is its whole second).
    for (const s of snapshots.filter((_, i) => i % 5 === 0)) {
      const ms = Date.parse(`${s.at.replace(' ', 'T')}Z`);
      const at = utcText(ms - (ms % 1000) - 1);
      const r = await h.warehouse.query(
        `SELECT id, strftime(CAST(updated_at AS TIMESTAMP), '%Y-%m-%d %H:%M:%S') AS u, registration_status AS s
           FROM history.registrants_as_of(?) ORDER BY id`,
        [at],
      );
      const got = r.rows.map((row) => `${row.id} ${row.u} ${row.s}`);
      const want = [...s.byId]
        .sort(([a], [b]) => a - b)
        .map(([id, state]) => `${id} ${state.updatedAt} ${state.status}`);
      expect(got, `as of ${at}`).toEqual(want);
    }
  });

  it('lists status transitions with their moment and who saw them', async () => {
    const expected = expectedVersions(snapshots);
    const want: string[] = [];
    for (const [id, versions] of expected) {
      for (let i = 1; i < versions.length; i++) {
        const [a, b] = [versions[i - 1]!, versions[i]!];
        if (!b.deleted && a.status !== b.status) want.push(`${id} ${a.status} ${b.status} ${b.updatedAt}`);
      }
    }
    expect(want.length).toBeGreaterThan(3);
    const r = await h.warehouse.query(
      `SELECT id, "from", "to", strftime(changed_at, '%Y-%m-%d %H:%M:%S') AS at, _observed_by AS by
         FROM history.registrants_transitions WHERE "column" = 'registration_status'`,
    );
    expect(r.rows.map((row) => `${row.id} ${row.from} ${row.to} ${row.at}`).sort()).toEqual(want.sort());
    expect(new Set(r.rows.map((row) => row.by))).toEqual(new Set(['webhook']));
  });

  it('is the same history when the deliveries come shuffled and duplicated', async () => {
    const journal = await h.warehouse.query(
      `SELECT body FROM _evsync.deliveries WHERE status = 'applied' AND stream = 'registrants' ORDER BY seq`,
    );
    const bodies = journal.rows.map((r) => String(r.body));
    expect(bodies.length).toBeGreaterThan(CHANGES / 2);
    // Every third delivery twice, the whole in another order.
    const posted = shuffled([...bodies, ...bodies.filter((_, i) => i % 3 === 0)], 7);
    let capture: RunningCapture | null = null;
    try {
      capture = await startCapture({
        warehouse: second,
        client: h.client(),
        secret: SECRET,
        streams: h.streams,
        listen: '127.0.0.1:0',
      });
      for (const body of posted) {
        const res = await fetch(capture.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [HEADER]: SECRET },
          body,
        });
        expect(res.status).toBe(200);
      }
      await capture.applier.idle();
    } finally {
      await capture?.close();
    }
    await second.buildAnalyticsViews();
    const live = await historyChecksum(h.warehouse);
    // Row for row first (a failure shows the versions that differ), then the checksum.
    expect(await historyRows(second)).toEqual(await historyRows(h.warehouse));
    expect(await historyChecksum(second)).toEqual(live);
    expect(live.rows).toBeGreaterThan(0);
  });

  it('is the same history when rebuilt from the archive', async () => {
    const before = await historyChecksum(h.warehouse);
    const kept = await h.warehouse.query(`SELECT count(*) AS n FROM _history.registrants`);
    const dry = await rebuild({ live: h.warehouse, streams: ['registrants'], dryRun: true });
    expect(dry.changes).toEqual([expect.objectContaining({ table: 'registrants', history: { added: 0, removed: 0 } })]);
    // With the versions gone, a rebuild puts them back as they were.
    await h.warehouse.query(`DELETE FROM _history.registrants`);
    const done = await rebuild({ live: h.warehouse, streams: ['registrants'], dryRun: false });
    expect(done.changes[0]?.history).toEqual({ added: Number(kept.rows[0]?.n), removed: 0 });
    expect(await historyChecksum(h.warehouse)).toEqual(before);
  });
});
