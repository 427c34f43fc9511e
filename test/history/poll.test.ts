/**
 * The history of registrants fed by polling (issue 37), against the simulator: a backfill, then rounds of changes
 * (status moves, other fields, inserts, deletes) with an incremental sync after every second round, each sync
 * sweeping for deletes. A poll sees the latest state only: the history holds exactly the states the polls saw (a
 * record changed twice between two polls has one version for both changes, and says states may be missing),
 * deletes found by sweeps, as-of answers equal to the simulator at each poll, and ten syncs with nothing changed
 * add no version.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSync } from '../../src/sync/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import {
  expectedVersions,
  historyChecksum,
  historyVersions,
  intervalProblems,
  pollChanges,
  type Snapshot,
  snapshot,
  utcText,
} from './helpers.js';

let h: Harness;
/** The simulator's state when each sync ran (what the polls saw), and between syncs (what they did not). */
const polled: Snapshot[] = [];
const between: Snapshot[] = [];
const ROUNDS = 6;

const poll = () => pollChanges(h);

beforeAll(async () => {
  h = await startHarness({ size: 'tiny', seed: 23, rateLimit: { credits: 1_000_000, windowSeconds: 600 } });
  const backfill = await runSync(h.client(), h.warehouse, { mode: 'backfill', streams: 'events,registrants' });
  expect(backfill.status).toBe('done');
  polled.push(snapshot(h.sim));
  for (let round = 0; round < ROUNDS; round++) {
    h.sim.advanceClock(30);
    h.sim.mutate(25, { streams: ['registrants'] });
    h.sim.advanceClock(30);
    between.push(snapshot(h.sim));
    h.sim.mutate(25, { streams: ['registrants'] });
    h.sim.advanceClock(30);
    polled.push(snapshot(h.sim));
    await poll();
  }
  await h.warehouse.buildAnalyticsViews();
}, 180_000);

afterAll(async () => {
  await h?.close();
});

describe('history by polling', () => {
  it('holds exactly the states the polls saw, deletes found by the sweeps included', async () => {
    const expected = expectedVersions(polled);
    const got = await historyVersions(h.warehouse);
    expect([...expected.values()].filter((v) => v.length > 1).length).toBeGreaterThan(20);
    expect([...expected.values()].some((v) => v[v.length - 1]?.deleted)).toBe(true);
    expect(got.size).toBe(expected.size);
    for (const [id, versions] of expected) expect(got.get(id), `registrant ${id}`).toEqual(versions);
    expect(await intervalProblems(h.warehouse)).toEqual([]);
  });

  it('a record changed twice between two polls has one version, which says states may be missing before it', async () => {
    // The state between the polls of each record changed before and after it, which no poll saw.
    const unseen: { id: number; updatedAt: string }[] = [];
    for (let k = 0; k < between.length; k++) {
      const [before, mid, after] = [polled[k]!, between[k]!, polled[k + 1]!];
      for (const [id, m] of mid.byId) {
        const a = after.byId.get(id);
        const b = before.byId.get(id);
        if (b && a && m.updatedAt !== b.updatedAt && a.updatedAt !== m.updatedAt)
          unseen.push({ id, updatedAt: m.updatedAt });
      }
    }
    expect(unseen.length).toBeGreaterThan(0);
    const twice = [...new Set(unseen.map((u) => u.id))];
    const r = await h.warehouse.query(
      `SELECT id, strftime(CAST(updated_at AS TIMESTAMP), '%Y-%m-%d %H:%M:%S') AS u, _observed_by AS by,
              _follows_previous AS f
         FROM history.registrants WHERE id IN (SELECT unnest(CAST(? AS BIGINT[]))) ORDER BY id, _valid_from`,
      [JSON.stringify(twice)],
    );
    const seen = new Set(r.rows.map((row) => `${row.id} ${row.u}`));
    for (const u of unseen) expect(seen.has(`${u.id} ${u.updatedAt}`), `${u.id} ${u.updatedAt}`).toBe(false);
    const later = r.rows.filter((row) => row.f !== null);
    expect(later.length).toBeGreaterThan(0);
    for (const row of later) {
      expect(row.f).toBe(false);
      // Changed by polls; a delete found by a sweep (one of them was deleted later).
      expect(['poll', 'sweep']).toContain(row.by);
    }
  });

  it('says who saw each version: the backfill first, then polls, deletes by the sweeps', async () => {
    const r = await h.warehouse.query(
      `SELECT _observed_by AS by, _is_deleted AS d, _follows_previous AS f, count(*) AS n
         FROM history.registrants GROUP BY ALL`,
    );
    const kinds = r.rows.map((row) => `${row.by} ${row.d} ${row.f}`).sort();
    expect(kinds).toEqual(['poll false false', 'poll false null', 'sweep true false']);
  });

  it('answers as of each poll what the simulator held then', async () => {
    for (const s of polled) {
      const ms = Date.parse(`${s.at.replace(' ', 'T')}Z`);
      const r = await h.warehouse.query(
        `SELECT id, strftime(CAST(updated_at AS TIMESTAMP), '%Y-%m-%d %H:%M:%S') AS u, registration_status AS s
           FROM history.registrants_as_of(?) ORDER BY id`,
        [utcText(ms + 1000)],
      );
      const want = [...s.byId].sort(([a], [b]) => a - b).map(([id, v]) => `${id} ${v.updatedAt} ${v.status}`);
      expect(
        r.rows.map((row) => `${row.id} ${row.u} ${row.s}`),
        `as of ${s.at}`,
      ).toEqual(want);
    }
  });

  it('adds no version in ten syncs that find nothing changed', async () => {
    const before = await historyChecksum(h.warehouse);
    const kept = await h.warehouse.query(`SELECT count(*) AS n FROM _history.registrants`);
    for (let i = 0; i < 10; i++) {
      h.sim.advanceClock(60);
      await poll();
    }
    expect(await historyChecksum(h.warehouse)).toEqual(before);
    expect((await h.warehouse.query(`SELECT count(*) AS n FROM _history.registrants`)).rows).toEqual(kept.rows);
  });
});
