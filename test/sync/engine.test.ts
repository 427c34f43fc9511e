import { afterEach, describe, expect, it } from 'vitest';
import { STREAM_SETS } from '../../connectors/index.js';
import { runSync } from '../../src/sync/index.js';
import { compareStream, type Harness, lowerBoundCredits, startHarness } from '../helpers/harness.js';

const CORE = STREAM_SETS.core;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function expectEqual(harness: Harness, streams: readonly string[]): Promise<void> {
  for (const name of streams) {
    const diff = await compareStream(harness.sim, harness.warehouse, name);
    expect({ stream: name, ...diff, changed: diff.changed.slice(0, 5) }).toEqual({
      stream: name,
      missing: [],
      extra: [],
      changed: [],
    });
  }
}

function eventIds(harness: Harness): number[] {
  return harness.sim.truth('events').records.map((e) => Number(e.id));
}

describe('backfill', () => {
  it('loads every core stream exactly and spends the lower bound', async () => {
    h = await startHarness();
    const client = h.client();
    const result = await runSync(client, h.warehouse, { mode: 'backfill', streams: 'core', lagSeconds: 0 });
    expect(result.errors).toEqual([]);
    expect(result.status).toBe('done');
    await expectEqual(h, CORE);

    // The bound counts every stream the run had to read: core plus the custom-field definitions it implies.
    const events = eventIds(h);
    const read = [
      ...CORE.filter((s) => s !== 'registration_audit'),
      'event_questions',
      'session_fields',
      'contact_fields',
      'sponsor_fields',
    ];
    const listBound = read.reduce((sum, s) => sum + lowerBoundCredits(h!.sim, s, events), 0);
    // The audit log is read in one window per event from the event's creation: one page each at this size.
    const auditBound = lowerBoundCredits(h.sim, 'registration_audit', events);
    expect(result.credits.list).toBe(listBound + auditBound);
    expect(result.credits.token).toBe(1);
    expect(h.sim.counters().credits).toBe(result.credits.total);
  });
});

describe('incremental', () => {
  it('after mutations, equals the source again and reads only what changed', async () => {
    h = await startHarness();
    await runSync(h.client(), h.warehouse, { mode: 'backfill', streams: 'core', lagSeconds: 0 });
    const summary = h.sim.mutate(40, { streams: ['registrants', 'sessions', 'contacts', 'transactions'] });
    expect(Object.values(summary.updated).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    h.sim.advanceClock(2);
    h.sim.resetCounters();
    const result = await runSync(h.client(), h.warehouse, {
      mode: 'incremental',
      streams: 'core',
      lagSeconds: 0,
      deletes: true,
      pastEventPollHours: 0,
    });
    expect(result.errors).toEqual([]);
    expect(result.status).toBe('done');
    await expectEqual(h, CORE);
    // Deleted source records are flagged, not dropped.
    for (const name of ['registrants', 'contacts']) {
      const deleted = h.sim.truth(name).deletedIds;
      if (deleted.length === 0) continue;
      const { rows } = await h.warehouse.query(
        `SELECT count(*) AS n FROM "${name}" WHERE _deleted_at IS NOT NULL AND id IN (${deleted.join(',')})`,
      );
      expect(Number(rows[0]?.n)).toBe(deleted.length);
    }
  });

  it('a second incremental run with no change polls each scope once', async () => {
    h = await startHarness();
    await runSync(h.client(), h.warehouse, { mode: 'backfill', streams: 'registrants,sessions', lagSeconds: 0 });
    h.sim.advanceClock(2);
    const client = h.client();
    const result = await runSync(client, h.warehouse, {
      mode: 'incremental',
      streams: 'registrants,sessions',
      lagSeconds: 0,
      deletes: false,
      pastEventPollHours: 0,
    });
    const events = eventIds(h).length;
    // events (1) + session_fields (1, snapshot) + per event: registrants, sessions, event_questions (snapshot).
    expect(result.credits.list).toBe(10 * (1 + 1 + events * 3));
  });

  it('polls scopes of events that ended long ago at most every pastEventPollHours', async () => {
    h = await startHarness();
    const options = { mode: 'incremental', streams: 'registrants', lagSeconds: 0, deletes: false } as const;
    await runSync(h.client(), h.warehouse, { ...options, mode: 'backfill' });
    const today = h.sim.now().toISOString().slice(0, 10);
    const past = h.sim
      .truth('events')
      .records.filter((e) => String(e.end_date) < today)
      .map((e) => `event:${e.id}`);
    expect(past.length).toBeGreaterThan(0);
    h.sim.advanceClock(2);
    const polled: string[] = [];
    await runSync(h.client(), h.warehouse, {
      ...options,
      pastEventDays: 0,
      pastEventPollHours: 24,
      onProgress: (e) => {
        if (e.type === 'item-start' && e.stream === 'registrants') polled.push(e.scope);
      },
    });
    expect(polled.length).toBeGreaterThan(0);
    for (const scope of past) expect(polled).not.toContain(scope);
  });
});

describe('budget', () => {
  it('stops partial at the run budget, then a second run completes; together they spend what one run would', async () => {
    h = await startHarness();
    const first = await runSync(h.client({ runBudget: 101 }), h.warehouse, {
      mode: 'backfill',
      streams: 'core',
      lagSeconds: 0,
    });
    expect(first.status).toBe('partial');
    expect(first.reason).toMatch(/budget/i);
    const second = await runSync(h.client(), h.warehouse, { mode: 'backfill', streams: 'core', lagSeconds: 0 });
    expect(second.status).toBe('done');
    expect(second.resumed).toBe(first.runId);
    await expectEqual(h, CORE);

    const fresh = await startHarness();
    try {
      const once = await runSync(fresh.client(), fresh.warehouse, { mode: 'backfill', streams: 'core', lagSeconds: 0 });
      expect(first.credits.list + second.credits.list).toBe(once.credits.list);
    } finally {
      await fresh.close();
    }
  });
});

describe('drift and faults', () => {
  it('mutations during the sync are caught by the next run', async () => {
    h = await startHarness();
    const sim = h.sim;
    await runSync(h.client(), h.warehouse, {
      mode: 'backfill',
      streams: 'core',
      lagSeconds: 0,
      onProgress: (e) => {
        if (e.type === 'page') sim.mutate(5);
      },
    });
    sim.advanceClock(2);
    const result = await runSync(h.client(), h.warehouse, {
      mode: 'incremental',
      streams: 'core',
      lagSeconds: 0,
      pastEventPollHours: 0,
      // Records deleted during the backfill after it had read them are found by a sweep, not by the window.
      deletes: true,
    });
    expect(result.errors).toEqual([]);
    await expectEqual(h, CORE);
  });

  it('5xx, resets, malformed bodies and short-lived tokens still end exactly equal', async () => {
    h = await startHarness({
      tokenTtlSeconds: 3,
      faults: { errorRate: 0.1, resetRate: 0.05, malformedRate: 0.05 },
    });
    const result = await runSync(h.client({ tokenRefreshMarginMs: 1000 }), h.warehouse, {
      mode: 'backfill',
      streams: 'core',
      lagSeconds: 0,
    });
    expect(result.errors).toEqual([]);
    expect(result.status).toBe('done');
    h.sim.setFaults({});
    await expectEqual(h, CORE);
  });
});

describe('refusals', () => {
  it('stops paying for a stream whose path answers 404, and says how to fix it', async () => {
    h = await startHarness();
    const result = await runSync(h.client(), h.warehouse, {
      mode: 'backfill',
      streams: 'sessions,speakers',
      lagSeconds: 0,
      customFields: false,
      overrides: { sessions: { path: '/no-such-path' } },
    });
    expect(result.status).toBe('failed');
    // Three events, but the refused path is asked once: the first 404 makes the stream unavailable.
    expect(h.sim.counters().byPath['GET (unmatched)']).toBe(1);
    expect(result.errors.join('\n')).toMatch(/streams\.sessions\.path in evsync\.config\.json/);
    // The other stream is unaffected.
    expect(result.streams.speakers?.errors).toBeUndefined();
    await expectEqual(h, ['speakers']);
  });
});

describe('refresh through the parent', () => {
  it('re-reads line items of changed registrants only, and nothing for events with no change', async () => {
    h = await startHarness();
    const streams = 'registrants,registrant_line_items';
    const base = { streams, lagSeconds: 0, deletes: false, customFields: false, pastEventPollHours: 0 } as const;
    await runSync(h.client(), h.warehouse, { ...base, mode: 'backfill' });
    const summary = h.sim.mutate(6, { streams: ['registrants'] });
    expect((summary.updated.registrants ?? 0) + (summary.inserted.registrants ?? 0)).toBeGreaterThan(0);
    h.sim.advanceClock(2);
    const calls: string[] = [];
    const result = await runSync(h.client(), h.warehouse, {
      ...base,
      mode: 'incremental',
      fullSnapshotEveryHours: 24,
      onProgress: (e) => {
        if (e.type === 'page' && e.stream === 'registrant_line_items') calls.push(e.scope);
      },
    });
    expect(result.errors).toEqual([]);
    await expectEqual(h, ['registrants', 'registrant_line_items']);
    // One call per event whose registrants changed (fewer than 100 each), none for the others.
    const { rows } = await h.warehouse.query(`SELECT DISTINCT event_id FROM registrants WHERE _run_id = ? ORDER BY 1`, [
      result.runId,
    ]);
    expect(calls.sort()).toEqual(rows.map((r) => `event:${r.event_id}`).sort());
  });

  it('falls back to a full snapshot when the parent is not part of the run', async () => {
    h = await startHarness();
    const base = { lagSeconds: 0, deletes: false, customFields: false, pastEventPollHours: 0 } as const;
    await runSync(h.client(), h.warehouse, { ...base, mode: 'backfill', streams: 'registrants,registrant_line_items' });
    h.sim.mutate(10, { streams: ['registrant_line_items'] });
    h.sim.advanceClock(2);
    const result = await runSync(h.client(), h.warehouse, {
      ...base,
      mode: 'incremental',
      streams: 'registrant_line_items',
      fullSnapshotEveryHours: 24,
    });
    expect(result.errors).toEqual([]);
    await expectEqual(h, ['registrant_line_items']);
  });
});
