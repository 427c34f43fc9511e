/**
 * The README's history examples (section "The history of every record"), run as written against a warehouse fed by
 * the simulator: a backfill, then a day of single changes to registrants delivered by webhook. Each answer is
 * checked against the simulator's own records: registered per event at a moment (its state then), who moved from
 * pending to approved and when (its versions), and the per-event join agrees with the as-of macro at each moment.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CaptureHarness, startCaptureHarness } from '../capture/helpers.js';
import { expectedVersions, type Snapshot, snapshot, utcText } from './helpers.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const SECTION = README.slice(README.indexOf('### The history of every record'), README.indexOf('### Custom fields'));
/** The SQL statements of the section's sql blocks, in order. */
const STATEMENTS = [...SECTION.matchAll(/```sql\n([\s\S]*?)```/g)].flatMap((m) =>
  (m[1] ?? '')
    .split(/;\s*\n/)
    .map((s) => s.trim().replace(/;$/, ''))
    .filter((s) => s.length > 0),
);
const MOMENT = '2026-05-01 00:00:00';

let h: CaptureHarness;
const snapshots: Snapshot[] = [];
const statuses = new Map<number, string>();

beforeAll(async () => {
  h = await startCaptureHarness({ sim: { size: 'tiny', seed: 31 } });
  snapshots.push(snapshot(h.sim));
  // A day of changes: one every ten simulated minutes.
  for (let i = 0; i < 144; i++) {
    h.sim.mutate(1, { streams: ['registrants'] });
    h.sim.advanceClock(600);
    snapshots.push(snapshot(h.sim));
  }
  for (const r of h.sim.truth('registrants').records) statuses.set(Number(r.id), String(r.registration_status));
  await h.settle();
  await h.warehouse.buildAnalyticsViews();
}, 180_000);

afterAll(async () => {
  await h?.stop();
});

describe("the README's history examples", () => {
  it('are three statements, the first with the moment to replace', () => {
    expect(STATEMENTS).toHaveLength(3);
    expect(STATEMENTS[0]).toContain(`'${MOMENT}'`);
  });

  it('registered per event at a moment: what the simulator held then', async () => {
    const s = snapshots[72]!;
    const ms = Date.parse(`${s.at.replace(' ', 'T')}Z`);
    const at = utcText(ms - (ms % 1000) - 1);
    const r = await h.warehouse.query(STATEMENTS[0]!.replace(MOMENT, at));
    const events = new Map<number, number>();
    for (const [id, state] of s.byId) {
      if (state.status === 'cancelled' || state.status === 'denied') continue;
      const event = s.eventOf.get(id) as number;
      events.set(event, (events.get(event) ?? 0) + 1);
    }
    const want = [...events].sort(([a], [b]) => a - b).map(([e, n]) => `${e}:${n}`);
    expect(r.rows.map((row) => `${row.event_id}:${row.registered}`)).toEqual(want);
    expect(want.length).toBeGreaterThan(0);
  });

  it('who moved from pending to approved, when, seen by the webhooks as it happened', async () => {
    const want: string[] = [];
    for (const [id, versions] of expectedVersions(snapshots)) {
      for (let i = 1; i < versions.length; i++) {
        const [a, b] = [versions[i - 1]!, versions[i]!];
        if (!b.deleted && a.status === 'pending' && b.status === 'approved') want.push(`${id} ${b.updatedAt}`);
      }
    }
    expect(want.length).toBeGreaterThan(0);
    const r = await h.warehouse.query(STATEMENTS[1]!);
    expect(r.rows.map((row) => `${row.id} ${String(row.changed_at).slice(0, 19)}`).sort()).toEqual(want.sort());
    expect(new Set(r.rows.map((row) => row._observed_by))).toEqual(new Set(['webhook']));
  });

  it('each event two weeks before its first day: the join agrees with the as-of macro', async () => {
    const r = await h.warehouse.query(STATEMENTS[2]!);
    expect(r.rows.length).toBeGreaterThan(0);
    for (const row of r.rows) {
      const e = await h.warehouse.query(
        `SELECT count(*) AS n FROM history.registrants_as_of(
           (SELECT CAST(start_date AS TIMESTAMP) - INTERVAL 14 DAY FROM main.events WHERE id = ?))
          WHERE event_id = ? AND registration_status NOT IN ('cancelled', 'denied')`,
        [row.event_id, row.event_id],
      );
      expect(String(row.registered), `event ${row.event_id}`).toBe(String(e.rows[0]?.n));
    }
  });
});
