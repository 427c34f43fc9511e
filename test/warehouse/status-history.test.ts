/**
 * What the status page draws over time, from `_evsync` as the engine and the receiver write it: credits per window
 * (used = limit minus the lowest remaining the service reported, evsync's runs' share beside it), deliveries per
 * 10 minutes with the pending count at each bucket's end, and the webhook lag's percentiles per stream.
 */
import { describe, expect, it } from 'vitest';
import { DELIVERY_BUCKET_MINUTES, type NewDelivery, type Warehouse } from '../../src/warehouse/index.js';
import { tempWarehouseEach } from './helpers.js';

let w: Warehouse;
tempWarehouseEach((t) => {
  w = t.w;
});

function utc(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

function delivery(stream: string, datetime: string, status: NewDelivery['status'] = 'pending'): NewDelivery {
  return {
    status,
    format: 'json',
    body: '{}',
    bodySha256: `${stream}-${datetime}-${Math.random()}`,
    object: stream,
    action: 'update',
    stream,
    recordId: 1,
    eventId: null,
    datetime,
    reason: status === 'rejected' ? 'not a delivery' : null,
  };
}

describe('statusHistory', () => {
  it('counts deliveries per bucket: received, settled, refused, and pending at each end', async () => {
    const start = Date.now();
    const changed = utc(start - 10_000);
    const journaled = await w.capture.append([
      delivery('registrants', changed),
      delivery('registrants', changed),
      delivery('contacts', changed),
      delivery('contacts', changed, 'rejected'),
    ]);
    await w.capture.settle(
      journaled.slice(0, 2).map((d) => ({ seq: d.seq, status: 'applied', outcome: 'payload', reason: null })),
      [],
    );
    const h = await w.statusHistory(utc(Date.now() - 3_600_000), utc(Date.now()));
    const elapsed = Date.now() - start;

    const sum = (k: 'received' | 'settled' | 'refused') => h.deliveries.reduce((n, b) => n + b[k], 0);
    expect({ received: sum('received'), settled: sum('settled'), refused: sum('refused') }).toEqual({
      received: 3,
      settled: 2,
      refused: 1,
    });
    // One bucket per 10 minutes of the hour asked (the first one starting on the 10 minutes before it).
    expect(h.deliveries.length).toBeGreaterThanOrEqual(60 / DELIVERY_BUCKET_MINUTES);
    expect(h.deliveries.at(-1)!.pendingAtEnd).toBe(1);
    expect(h.deliveries[0]!.pendingAtEnd).toBe(0);
    expect(h.pending).toBe(1);
    expect(h.oldestPendingAt).toBe(journaled[2]!.receivedAt.slice(0, 19));
    // The lag of the two applied: from their change (10 s before the start, to the second) to being applied.
    expect(h.lags.map((l) => ({ stream: l.stream, count: l.count }))).toEqual([{ stream: 'registrants', count: 2 }]);
    expect(h.lags[0]!.p50WallMs).toBeGreaterThanOrEqual(10_000);
    expect(h.lags[0]!.p95WallMs).toBeLessThanOrEqual(11_000 + elapsed);
  });

  it('gives one credit window per reset time (within its jitter): used as the service counted it, and what evsync spent', async () => {
    const now = Math.floor(Date.now() / 1000) * 1000;
    const earlier = new Date(now - 1_200_000);
    const current = new Date(now + 300_000);
    const row = (remaining: number, resetAt: Date, seenAt: number, spent: number) => ({
      limit: 2000,
      remaining,
      resetAt,
      seenAt: new Date(seenAt),
      spent,
      detail: { windowMs: 600_000 },
    });
    await w.runs.recordCredits('run-a', row(1900, earlier, now - 1_500_000, 100));
    // A long run's readings as they came: each row holds what was spent since the one before.
    await w.runs.recordCredits('run-b', row(1800, current, now - 250_000, 200));
    await w.runs.recordCredits('run-b', row(1500, current, now - 200_000, 101));
    // The same window, its reset read 1.4 s later (the client derives it from seconds-to-reset), by a daemon.
    const jittered = new Date(current.getTime() + 1400);
    await w.runs.recordCredits('daemon', row(1200, jittered, now - 100_000, 200));
    const h = await w.statusHistory(utc(now - 86_400_000), utc(now));
    expect(h.windows.map(({ lastRecordedAt: _, ...rest }) => rest)).toEqual([
      {
        resetAt: utc(earlier.getTime()),
        windowMs: 600_000,
        limit: 2000,
        used: 100,
        spentByRuns: 100,
        remainingAtLast: 1900,
      },
      // 800 used in the window, 501 of them by evsync (the rest by another client of the same credential).
      {
        resetAt: utc(jittered.getTime()),
        windowMs: 600_000,
        limit: 2000,
        used: 800,
        spentByRuns: 501,
        remainingAtLast: 1200,
      },
    ]);
    expect(await w.runs.lastLedger()).toMatchObject({
      runId: 'daemon',
      remaining: 1200,
      recordedAt: utc(now - 100_000),
    });
  });

  it('answers on a warehouse with nothing recorded yet', async () => {
    const h = await w.statusHistory(utc(Date.now() - 86_400_000), utc(Date.now()));
    expect(h.windows).toEqual([]);
    expect(h.pending).toBe(0);
    expect(h.oldestPendingAt).toBeNull();
    expect(h.lags).toEqual([]);
    expect(h.deliveries.every((b) => b.received + b.settled + b.refused + b.pendingAtEnd === 0)).toBe(true);
  });
});
