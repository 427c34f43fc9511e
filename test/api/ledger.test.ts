import { describe, expect, it } from 'vitest';
import { BudgetExhaustedError, CreditLedger } from '../../src/api/index.js';
import type { LimitReading, WaitEvent } from '../../src/api/ledger.js';

const ctx = { method: 'GET', path: '/registrants' };

function ledger(opts: { limit?: number; windowMs?: number; reserveCredits?: number; runBudget?: number } = {}) {
  const clock = { t: 1_000_000 };
  const l = new CreditLedger({
    limit: opts.limit ?? 2000,
    windowMs: opts.windowMs ?? 600_000,
    reserveCredits: opts.reserveCredits,
    runBudget: opts.runBudget,
    now: () => clock.t,
  });
  return { l, clock };
}

describe('CreditLedger', () => {
  it('charges list calls 10 and others 1, reserved before sending', async () => {
    const { l } = ledger({ limit: 100 });
    const a = await l.acquire('list', ctx);
    await l.acquire('other', ctx);
    await l.acquire('token', ctx);
    expect(l.snapshot()).toMatchObject({ remaining: 88, inFlight: 12, spent: { list: 10, other: 1, token: 1 } });
    l.release(a);
    expect(l.snapshot()).toMatchObject({ remaining: 98, spent: { list: 0, other: 1, token: 1 } });
  });

  it('keeps the count exact under concurrency when answers arrive out of order', async () => {
    const { l, clock } = ledger();
    const rs = await Promise.all([1, 2, 3, 4].map(() => l.acquire('list', ctx)));
    // The server processed them in order: Remaining 1990, 1980, 1970, 1960; answers arrive in reverse.
    for (const [i, r] of [...rs.entries()].reverse()) {
      clock.t += 5;
      l.settle(r, { limit: 2000, remaining: 1990 - 10 * i, resetSeconds: 600 }, clock.t);
    }
    expect(l.snapshot().remaining).toBe(1960);
  });

  it('says how long until the reset on its own clock, and whether the limit is the one the service reported', async () => {
    const { l, clock } = ledger({ limit: 2000 });
    expect(l.snapshot()).toMatchObject({ limitSource: 'configured', resetInMs: null });
    const r = await l.acquire('list', ctx);
    l.settle(r, { limit: 1500, remaining: 1490, resetSeconds: 300 }, clock.t);
    clock.t += 100_000;
    expect(l.snapshot()).toMatchObject({ limit: 1500, limitSource: 'reported', remaining: 1490, resetInMs: 200_000 });
  });

  it('lowers the count when another process spends on the credential', async () => {
    const { l, clock } = ledger();
    const r = await l.acquire('list', ctx);
    l.settle(r, { remaining: 1500, resetSeconds: 300 }, clock.t);
    expect(l.snapshot().remaining).toBe(1500);
  });

  it('estimates the reset as the minimum of receive time + Reset over the window', async () => {
    const { l, clock } = ledger({ windowMs: 10_000 });
    const t0 = clock.t;
    const answers: [number, number][] = [
      [0, 10], // 10_000
      [400, 10], // 10_400
      [1_300, 9], // 10_300
      [2_050, 8], // 10_050
      [2_900, 8], // 10_900
      [3_020, 7], // 10_020
    ];
    let remaining = 2000;
    for (const [dt, s] of answers) {
      clock.t = t0 + dt;
      const r = await l.acquire('list', ctx);
      remaining -= 10;
      l.settle(r, { remaining, resetSeconds: s }, clock.t);
    }
    expect(l.snapshot().resetAt?.getTime()).toBe(t0 + 10_000);
    clock.t = t0 + 3_500;
    const r = await l.acquire('list', ctx);
    l.settle(r, { remaining: remaining - 10, resetSeconds: 6 }, clock.t); // 9_500: tighter
    expect(l.snapshot().resetAt?.getTime()).toBe(t0 + 9_500);
  });

  it('falls back to the configured window when Reset is missing or absurd', async () => {
    const { l, clock } = ledger({ windowMs: 10_000 });
    const t0 = clock.t;
    for (const s of [undefined, -5, 90_000, Number.NaN]) {
      const r = await l.acquire('other', ctx);
      l.settle(r, { remaining: 1990, resetSeconds: s }, clock.t);
    }
    expect(l.snapshot().resetAt?.getTime()).toBe(t0 + 10_000);
    expect(l.snapshot().remaining).toBe(1990);
  });

  it('without a Reset header, bounds the reset by the first answer of the window + window', async () => {
    const { l, clock } = ledger({ windowMs: 10_000 });
    const t0 = clock.t;
    const r1 = await l.acquire('list', ctx);
    expect(l.snapshot().resetAt?.getTime()).toBe(t0 + 10_000); // a guess from the grant
    clock.t += 300; // the answer took 300 ms: the server window may have started as late as that
    l.settle(r1, { remaining: 1990 }, clock.t);
    expect(l.snapshot().resetAt?.getTime()).toBe(t0 + 10_300);
    clock.t += 500;
    const r2 = await l.acquire('list', ctx);
    l.settle(r2, { remaining: 1980 }, clock.t);
    expect(l.snapshot().resetAt?.getTime()).toBe(t0 + 10_300); // later answers do not move it
  });

  it('rolls over at the estimated reset: credits are back, in-flight calls charged to the new window', async () => {
    const { l, clock } = ledger({ limit: 50, windowMs: 2_000 });
    const a = await l.acquire('list', ctx);
    l.settle(a, { remaining: 40, resetSeconds: 2 }, clock.t);
    await l.acquire('list', ctx); // in flight across the reset
    clock.t += 2_000;
    expect(l.snapshot()).toMatchObject({ remaining: 40, resetAt: null, inFlight: 10 });
  });

  it('detects a rollover on the server side when Remaining goes up with a later reset', async () => {
    const { l, clock } = ledger({ limit: 50, windowMs: 2_000 });
    const t0 = clock.t;
    for (let i = 0; i < 4; i++) {
      const r = await l.acquire('list', ctx);
      l.settle(r, { remaining: 40 - 10 * i, resetSeconds: 2 }, clock.t);
    }
    expect(l.snapshot().remaining).toBe(10);
    clock.t = t0 + 1_900; // our estimate (t0 + 2000) not reached yet, the server's window already rolled
    const r = await l.acquire('list', ctx);
    l.settle(r, { remaining: 40, resetSeconds: 2 }, clock.t);
    expect(l.snapshot()).toMatchObject({ remaining: 40 });
    expect(l.snapshot().resetAt?.getTime()).toBe(t0 + 3_900);
  });

  it('holds back the reserve', async () => {
    const { l } = ledger({ limit: 30, reserveCredits: 15 });
    await l.acquire('list', ctx);
    await expect(l.acquire('list', { ...ctx, maxWaitMs: 0 })).rejects.toMatchObject({ reason: 'max-wait' });
    expect(l.snapshot().remaining).toBe(5);
  });

  it('refuses a call over the run budget before sending', async () => {
    const { l } = ledger({ runBudget: 15 });
    await l.acquire('list', ctx);
    const err = await l.acquire('list', ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetExhaustedError);
    expect(err).toMatchObject({ reason: 'run-budget', needed: 10, remaining: 5, method: 'GET', path: '/registrants' });
    expect(l.snapshot().runBudgetLeft).toBe(5);
  });

  it('refuses at once when the reset is beyond maxWait, with resetAt', async () => {
    const { l, clock } = ledger({ limit: 10, windowMs: 60_000 });
    const r = await l.acquire('list', ctx);
    l.settle(r, { remaining: 0, resetSeconds: 42 }, clock.t);
    const err = (await l
      .acquire('list', { ...ctx, maxWaitMs: 10_000 })
      .catch((e: unknown) => e)) as BudgetExhaustedError;
    expect(err).toBeInstanceOf(BudgetExhaustedError);
    expect(err.reason).toBe('max-wait');
    expect(err.resetAt?.getTime()).toBe(clock.t + 42_000);
    expect(err.needed).toBe(10);
    expect(err.remaining).toBe(0);
  });

  it('a call that can never fit is refused', async () => {
    const { l } = ledger({ limit: 5 });
    await expect(l.acquire('list', ctx)).rejects.toMatchObject({ reason: 'max-wait', needed: 10 });
  });

  it('waits for the reset and announces it once', async () => {
    const l = new CreditLedger({ limit: 20, windowMs: 150 });
    const waits: WaitEvent[] = [];
    l.on('wait', (e) => waits.push(e));
    const started = Date.now();
    const first = await Promise.all([l.acquire('list', ctx), l.acquire('list', ctx)]);
    for (const r of first) l.settle(r, {}, Date.now());
    const later = await Promise.all([l.acquire('list', ctx), l.acquire('list', ctx)]);
    expect(later).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(waits).toHaveLength(1);
    expect(waits[0]!.reason).toBe('window');
    expect(l.snapshot().waitedMs).toBeGreaterThan(100);
  });

  it('keeps the window as the service last reported it, apart from its own estimate', async () => {
    const { l, clock } = ledger({ limit: 100, reserveCredits: 5 });
    expect(l.reading()).toBeNull();
    const readings: LimitReading[] = [];
    l.on('reading', (r) => readings.push(r));
    const [a, b] = await Promise.all([l.acquire('list', ctx), l.acquire('list', ctx)]);
    clock.t += 10;
    l.settle(b, { limit: 100, remaining: 80, resetSeconds: 30 }, clock.t);
    const seen = clock.t;
    // An answer that arrived earlier but is applied later is older news: the latest to arrive is what the service said.
    l.settle(a, { limit: 100, remaining: 90, resetSeconds: 31 }, seen - 5);
    expect(l.reading()).toEqual({
      limit: 100,
      remaining: 80,
      resetAt: new Date(seen + 30_000),
      seenAt: new Date(seen),
    });
    expect(readings).toHaveLength(1);
    // The estimate holds the reserve and calls in flight back; the reading does not.
    await l.acquire('list', ctx);
    expect(l.snapshot().remaining).toBe(65);
    expect(l.reading()?.remaining).toBe(80);
    // A 429 is an answer too: its Remaining is the service's word.
    const c = await l.acquire('list', ctx);
    clock.t += 10;
    l.rateLimited(c, { limit: 100, remaining: 0, resetSeconds: 20 }, clock.t, { fallbackMs: 1000, transientMs: 10 });
    expect(l.reading()).toMatchObject({ remaining: 0, seenAt: new Date(clock.t) });
    expect(readings.map((r) => r.remaining)).toEqual([80, 0]);
  });

  it('counts what was spent since it was made across runs, and says while calls wait for credits', async () => {
    const { l, clock } = ledger({ limit: 20, windowMs: 60_000 });
    const r = await l.acquire('list', ctx);
    l.settle(r, { remaining: 10, resetSeconds: 60 }, clock.t);
    l.startRun();
    const s = await l.acquire('list', ctx);
    l.settle(s, { remaining: 0, resetSeconds: 59 }, clock.t);
    expect(l.snapshot().spent.list).toBe(10);
    expect(l.spentSinceCreated).toBe(20);
    expect(l.waiting()).toBeNull();
    const stop = new AbortController();
    const queued = l.acquire('list', { ...ctx, signal: stop.signal });
    expect(l.waiting()).toEqual({
      since: new Date(clock.t),
      until: new Date(clock.t + 59_000),
      reason: 'window',
      calls: 1,
    });
    stop.abort(new Error('stopped'));
    await expect(queued).rejects.toThrow('stopped');
    expect(l.waiting()).toBeNull();
    l.close(new Error('closed'));
  });
});
