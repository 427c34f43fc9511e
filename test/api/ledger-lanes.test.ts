/**
 * The bulk lane of the credit ledger (src/api/lane.ts): bulk work leaves a share of each window to the others and
 * waits behind them, interactive calls pass a waiting bulk call, bulk calls resume when the window resets, the token
 * call still jumps every queue, and a closed lane refuses what it has waiting without touching calls in flight.
 * The window's reset is on the ledger's clock and timers, both faked here: nothing waits for real time.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BudgetExhaustedError, CreditLedger } from '../../src/api/index.js';
import type { BulkLane } from '../../src/api/lane.js';
import type { Reservation, WaitEvent } from '../../src/api/ledger.js';

const call = { method: 'GET', path: '/registrants' };

beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse('2026-11-26T12:00:00Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

function ledger(limit = 100): CreditLedger {
  return new CreditLedger({ limit, windowMs: 600_000, now: () => Date.now() });
}

/** Whether a promise has settled, after the microtasks queued so far ran. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await vi.advanceTimersByTimeAsync(0);
  return done;
}

/** The answers to calls granted earlier (the ledger counts their credits spent in this window). */
function answer(l: CreditLedger, calls: readonly Reservation[]): void {
  for (const r of calls) l.settle(r, {}, Date.now());
}

/** Bulk list calls granted at once, until one would have to wait (returned, pending). */
async function fillBulk(
  l: CreditLedger,
  lane: BulkLane,
): Promise<{ granted: Reservation[]; waiting: Promise<Reservation> }> {
  const granted: Reservation[] = [];
  while (true) {
    const p = l.acquire('list', { ...call, lane });
    if (!(await settled(p))) return { granted, waiting: p };
    granted.push(await p);
  }
}

describe('the bulk lane', () => {
  it('waits once granting it would leave less than its share of the window to the others', async () => {
    const l = ledger(100);
    const lane: BulkLane = { name: 'the catch-up', leaveShare: 0.25 };
    const { granted, waiting } = await fillBulk(l, lane);
    // 100, 90, ..., 40 credits left each fit a 10-credit call and keep 25; at 30 the next one would keep 20.
    expect(granted).toHaveLength(7);
    expect(l.snapshot().remaining).toBe(30);
    expect(await settled(waiting)).toBe(false);
  });

  it('takes its share from the limit the service reports, not the configured one', async () => {
    const l = ledger(100);
    const lane: BulkLane = { name: 'the catch-up', leaveShare: 0.25 };
    const first = await l.acquire('list', { ...call, lane });
    // The service says its window is 200 credits: 50 of them are left to the others.
    l.settle(first, { limit: 200, remaining: 190, resetSeconds: 600 }, Date.now());
    const { granted } = await fillBulk(l, lane);
    expect(granted).toHaveLength(14); // 190 down to 60, each leaving at least 50
    expect(l.snapshot().remaining).toBe(50);
  });

  it('lets interactive calls pass a waiting bulk call, up to the whole window', async () => {
    const l = ledger(100);
    const lane: BulkLane = { name: 'the catch-up', leaveShare: 0.25 };
    const { waiting } = await fillBulk(l, lane);
    for (const left of [20, 10, 0]) {
      await l.acquire('list', call);
      expect(l.snapshot().remaining).toBe(left);
    }
    // The window is spent: the next interactive call waits, but only behind interactive calls.
    const interactive = l.acquire('list', call);
    expect(await settled(interactive)).toBe(false);
    expect(await settled(waiting)).toBe(false);
  });

  it('resumes when the window resets, with the calls queued behind it in the order they came', async () => {
    const l = ledger(100);
    const lane: BulkLane = { name: 'the catch-up', leaveShare: 0.25 };
    const { granted, waiting } = await fillBulk(l, lane);
    for (let i = 0; i < 3; i++) granted.push(await l.acquire('list', call));
    answer(l, granted);
    const order: string[] = [];
    const interactive = l.acquire('list', call).then((r) => {
      order.push('interactive');
      return r;
    });
    void waiting.then(() => order.push('bulk'));
    await vi.advanceTimersByTimeAsync(600_001);
    await Promise.all([waiting, interactive]);
    expect(order).toEqual(['bulk', 'interactive']); // FIFO among the queue once both fit
    expect(l.snapshot().remaining).toBe(80);
  });

  it('the token call still jumps every queue', async () => {
    const l = ledger(30);
    const lane: BulkLane = { name: 'the catch-up', leaveShare: 0.25 };
    // 30 credits: one bulk call leaves 20 (>= 8); the rest of the window goes to interactive calls.
    answer(l, [
      await l.acquire('list', { ...call, lane }),
      await l.acquire('list', call),
      await l.acquire('list', call),
    ]);
    const bulk = l.acquire('list', { ...call, lane });
    const interactive = l.acquire('list', call);
    const token = l.acquire('token', { method: 'POST', path: '/oauth2/token', priority: true });
    expect(await settled(token)).toBe(false);
    const order: string[] = [];
    for (const [name, p] of [
      ['bulk', bulk],
      ['interactive', interactive],
      ['token', token],
    ] as const)
      void p.then(() => order.push(name));
    await vi.advanceTimersByTimeAsync(600_001);
    await Promise.all([bulk, interactive, token]);
    expect(order[0]).toBe('token');
  });

  it('says when only bulk work waits, and what it leaves', async () => {
    const l = ledger(100);
    const waits: WaitEvent[] = [];
    l.on('wait', (w) => waits.push(w));
    const lane: BulkLane = { name: 'the catch-up', leaveShare: 0.25 };
    await fillBulk(l, lane);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatchObject({ reason: 'share', lane: { name: 'the catch-up', leave: 25, limit: 100 } });
    // The others spend the rest: now the window itself is what everyone waits for.
    for (let i = 0; i < 3; i++) await l.acquire('list', call);
    void l.acquire('list', call);
    await vi.advanceTimersByTimeAsync(0);
    expect(waits.map((w) => w.reason)).toEqual(['share', 'window']);
  });

  it('once closed, refuses what it has waiting and anything new, and leaves calls in flight alone', async () => {
    const l = ledger(100);
    const closing = new AbortController();
    const lane: BulkLane = { name: 'the catch-up', leaveShare: 0.25, closes: closing.signal };
    const { granted, waiting } = await fillBulk(l, lane);
    closing.abort('the tick at 12:15:00 is due');
    const err = await waiting.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetExhaustedError);
    expect(err).toMatchObject({ reason: 'lane-closed', message: 'the catch-up stopped: the tick at 12:15:00 is due' });
    await expect(l.acquire('list', { ...call, lane })).rejects.toMatchObject({ reason: 'lane-closed' });
    // What was granted before is answered and charged as ever.
    for (const r of granted) l.settle(r, { remaining: 30, resetSeconds: 600 }, Date.now());
    expect(l.snapshot()).toMatchObject({ remaining: 30, inFlight: 0, spent: { list: 70 } });
    // Interactive calls never notice.
    await l.acquire('list', call);
    expect(l.snapshot().remaining).toBe(20);
  });

  it('refuses a share that leaves nothing to either side', async () => {
    const l = ledger(100);
    for (const leaveShare of [0, 1, -0.1, Number.NaN]) {
      expect(() => l.acquire('list', { ...call, lane: { name: 'bulk', leaveShare } })).toThrow(RangeError);
    }
  });
});

describe('runs on one ledger', () => {
  it("a run starts while another caller's call is in flight; a refund stays with the run it was charged to", async () => {
    const l = ledger(100);
    const reread = await l.acquire('list', call); // the applier's, in flight when the next run starts
    l.startRun();
    const mine = await l.acquire('list', call);
    l.release(reread); // never sent: its credits come back to the window, not off this run's count
    expect(l.snapshot()).toMatchObject({ remaining: 90, spent: { list: 10 } });
    l.release(mine);
    expect(l.snapshot()).toMatchObject({ remaining: 100, spent: { list: 0 } });
  });
});
