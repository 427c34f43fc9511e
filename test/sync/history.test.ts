/**
 * Custom fields at an account's scale: a backfill of the simulator's `history` size (600 events over years, 20-40
 * questions each, ~60k registrants) keeps every stream table narrow, and the views generated from the field
 * definitions give each event its own questions as columns, with the answers the service holds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSync } from '../../src/sync/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { expectEqualToSource } from '../helpers/reliability.js';

// Registrants carry the per-event questions; contacts the account-wide fields (sessions and sponsors add 1,200
// calls for the same account-wide path the small sizes test).
const STREAMS = ['registrants', 'contacts'];

let h: Harness;

beforeAll(async () => {
  // A generous rate limit: the backfill needs ~1,250 list calls (12,400 credits), six 2000-credit windows.
  h = await startHarness({ size: 'history', seed: 3, rateLimit: { credits: 10_000_000, windowSeconds: 600 } });
  const result = await runSync(h.client(), h.warehouse, {
    mode: 'backfill',
    streams: STREAMS.join(','),
    lagSeconds: 0,
  });
  expect(result.errors).toEqual([]);
  expect(result.status).toBe('done');
  const views = await h.warehouse.buildAnalyticsViews();
  expect(views.warnings).toEqual([]);
}, 600_000);

afterAll(async () => {
  await h?.close();
});

type Rec = Record<string, unknown>;

/** What the per-event view shows for one answer, by the question's type (see custom-field-views.ts). */
function expected(type: string, value: unknown): unknown {
  if (value === undefined || value === null || value === '') return null;
  if (Array.isArray(value)) {
    if (value.length === 0) return null;
    const values = value.map((c) => (c as { value: string }).value);
    return type === 'checkbox' ? JSON.stringify(values) : values[0];
  }
  return value;
}

const isAnswer = (v: unknown) => !(v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0));

describe('a backfill of an account history', () => {
  it('is the account at scale: 600 events over several years, 20-40 questions each, ~60k registrants', () => {
    const events = h.sim.truth('events').records;
    expect(events).toHaveLength(600);
    const years = new Set(events.map((e) => String(e.start_date).slice(0, 4)));
    expect(years.size).toBeGreaterThanOrEqual(4);
    const perEvent = new Map<number, number>();
    for (const q of h.sim.truth('event_questions').records) {
      perEvent.set(Number(q.event_id), (perEvent.get(Number(q.event_id)) ?? 0) + 1);
    }
    expect(Math.min(...perEvent.values())).toBeGreaterThanOrEqual(20);
    expect(Math.max(...perEvent.values())).toBeLessThanOrEqual(40);
    const registrants = h.sim.truth('registrants').records.length;
    expect(registrants).toBeGreaterThan(50_000);
    expect(registrants).toBeLessThan(70_000);
  });

  it('keeps every stream table under 100 columns, equal to the source', async () => {
    const { rows } = await h.warehouse.query(
      `SELECT table_name, count(*) AS n FROM duckdb_columns() WHERE schema_name = 'main' GROUP BY 1 ORDER BY 1`,
    );
    expect(rows.length).toBeGreaterThan(STREAMS.length);
    for (const row of rows) expect([row.table_name, Number(row.n) < 100]).toEqual([row.table_name, true]);
    await expectEqualToSource(h.sim, h.warehouse, STREAMS);
  }, 300_000);

  it("gives a sample of events their own questions as columns, named by label, with the service's answers", async () => {
    const questions = h.sim.truth('event_questions').records;
    const registrants = h.sim.truth('registrants').records;
    const eventIds = [...new Set(questions.map((q) => Number(q.event_id)))].sort((a, b) => a - b);
    // The first (live) events, some from the middle and the oldest.
    const sample = [eventIds[0]!, eventIds[1]!, eventIds[100]!, eventIds[301]!, eventIds[eventIds.length - 1]!];
    for (const eventId of sample) {
      const own = questions.filter((q) => Number(q.event_id) === eventId).sort((a, b) => Number(a.id) - Number(b.id));
      const { columns, rows } = await h.warehouse.query(
        `SELECT * FROM analytics.registrants_event_${eventId} ORDER BY id`,
      );
      const labels = own.map((q) => String(q.name));
      expect(new Set(labels).size).toBe(labels.length);
      expect(columns.slice(-labels.length)).toEqual(labels);
      expect(columns).not.toContain('custom_fields');
      const source = registrants
        .filter((r) => Number(r.event_id) === eventId)
        .sort((a, b) => Number(a.id) - Number(b.id));
      expect(rows.map((r) => Number(r.id))).toEqual(source.map((r) => Number(r.id)));
      rows.forEach((row, i) => {
        const record = source[i] as Rec;
        for (const q of own) {
          const got = row[String(q.name)];
          const want = expected(String(q.type), record[`c_${q.id}`]);
          expect([eventId, record.id, q.name, got]).toEqual([eventId, record.id, q.name, want]);
        }
      });
    }
  }, 300_000);

  it('lists every non-empty answer once in the long view', async () => {
    let answers = 0;
    for (const r of h.sim.truth('registrants').records) {
      for (const [k, v] of Object.entries(r)) if (k.startsWith('c_') && isAnswer(v)) answers++;
    }
    const { rows } = await h.warehouse.query(
      `SELECT count(*) AS n, count(label) AS labelled FROM analytics.custom_field_values WHERE stream = 'registrants'`,
    );
    expect(rows).toEqual([{ n: String(answers), labelled: String(answers) }]);
  }, 300_000);
});
