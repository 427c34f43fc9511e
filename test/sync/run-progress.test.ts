/**
 * A run's progress from its events and its client's ledger alone (what a one-shot run answers `status` with): items
 * planned, done, failed and skipped, per stream pages and rows, credits spent and still needed (a walking item its
 * price less what it read, at least one page), and the end reckoned from that need against the window as the
 * service last reported it. The ledger's clock and the tracker's are one fixed clock moved by hand.
 */
import { describe, expect, it } from 'vitest';
import { CreditLedger } from '../../src/api/index.js';
import { estimateEnd, RunProgressTracker } from '../../src/sync/index.js';

const T0 = Date.parse('2031-02-03T10:00:00Z');
const call = { method: 'GET', path: '/registrants' };

describe('RunProgressTracker', () => {
  it('counts items and credits from the engine’s events, and reckons the end against the reported window', async () => {
    const clock = { t: T0 };
    const ledger = new CreditLedger({ limit: 100, windowMs: 600_000, now: () => clock.t });
    const tracker = new RunProgressTracker('backfill', ledger, () => clock.t);
    const on = tracker.onProgress;
    on({ type: 'run', runId: 'run-1' });
    on({ type: 'queued', items: 3, credits: 50 });
    on({ type: 'item-start', stream: 'registrants', scope: 'event:1', mode: 'backfill', price: 30 });
    on({ type: 'item-start', stream: 'sessions', scope: 'event:1', mode: 'backfill', price: 10 });
    on({ type: 'item-skipped', stream: 'tracks', scope: 'event:1', price: 10 });
    // Three list calls answered: the service says 70 left, its window resetting in 500 s.
    for (let i = 0; i < 3; i++) {
      const r = await ledger.acquire('list', call);
      clock.t += 10_000;
      ledger.settle(r, { limit: 100, remaining: 90 - 10 * i, resetSeconds: 500 }, clock.t);
    }
    const page = {
      type: 'page',
      stream: 'registrants',
      scope: 'event:1',
      eventId: 1,
      totalCount: null,
      pageCount: null,
      perPage: 100,
    } as const;
    on({ ...page, pages: 1, rows: 100 });
    on({ ...page, pages: 2, rows: 200 });
    on({
      type: 'item-done',
      stream: 'sessions',
      scope: 'event:1',
      eventId: 1,
      pages: 1,
      rows: 7,
      deleted: 0,
      merged: false,
    });
    const p = tracker.snapshot();
    expect(p).toMatchObject({
      runId: 'run-1',
      items: { queued: 3, done: 1, running: 1, skipped: 1, failed: 0, left: 1 },
      // Registrants priced 30 read 2 pages: one more page (10) still needed.
      credits: { spent: 30, needed: 10 },
      waiting: null,
    });
    expect(p.streams.find((s) => s.stream === 'registrants')).toMatchObject({ running: 1, pages: 2, rows: 200 });
    // 10 fit the 70 left: no window to wait for; at the pace kept (30 credits in 30 s), 10 s.
    expect(p.eta).toMatchObject({ windows: 0, seconds: 10 });
  });
});

describe('estimateEnd', () => {
  const reading = { limit: 2000, remaining: 9, resetAt: new Date(T0 + 384_000), seenAt: new Date(T0 - 1000) };
  const base = { limit: 2000, windowMs: 600_000, now: T0, pace: { spent: 0, activeMs: 0 } };

  it('waits for the reported reset, then a window per limit', () => {
    const eta = estimateEnd({ ...base, needed: 4009, reading });
    // 9 now, then 2000 after the reset at +384 s, the last 2000 a window later.
    expect(eta).toMatchObject({ windows: 2, seconds: 984, at: new Date(T0 + 984_000).toISOString() });
    expect(eta.basis).toBe(
      '4,009 credits still to spend on the work planned so far: 9 left in this window (it resets at 10:06 UTC), then 2,000 per 10 min window',
    );
  });

  it('takes a whole window when the reported one has reset since, and spends at the pace kept', () => {
    const passed = { ...reading, resetAt: new Date(T0 - 5000) };
    const eta = estimateEnd({ ...base, needed: 500, reading: passed, pace: { spent: 100, activeMs: 10_000 } });
    expect(eta).toMatchObject({ windows: 0, seconds: 50 });
    expect(eta.basis).toContain('within the 2,000 left in this window');
  });
});
