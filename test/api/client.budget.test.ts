import { afterEach, describe, expect, it } from 'vitest';
import { BudgetExhaustedError, RateLimitedError, type WaitEvent } from '../../src/api/index.js';
import { closeClients, type FakeReply, fakeService, makeClient, onePage, rateHeaders, withToken } from './helpers.js';

const page = (): FakeReply => ({ body: onePage() });

afterEach(closeClients);

describe('budget', () => {
  it('concurrent calls never overshoot: only what fits is sent, the rest stops with max-wait', async () => {
    const svc = fakeService(withToken(page));
    const client = makeClient(svc, { rateLimit: { limit: 30, windowMs: 300 }, maxWaitMs: 0, concurrency: 8 });
    await client.ensureToken(); // 1 credit: 29 left, so two list calls fit
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => client.list('/registrants')));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(errors).toHaveLength(6);
    for (const e of errors) {
      expect(e).toBeInstanceOf(BudgetExhaustedError);
      expect(e).toMatchObject({ reason: 'max-wait', needed: 10 });
      expect((e as BudgetExhaustedError).resetAt).toBeInstanceOf(Date);
    }
    expect(svc.dataCalls()).toHaveLength(2);
  });

  it('with maxWait, waits for the window and goes on (emitting wait)', async () => {
    const svc = fakeService(withToken(page));
    const client = makeClient(svc, { rateLimit: { limit: 30, windowMs: 300 }, concurrency: 4 });
    const waits: WaitEvent[] = [];
    client.on('wait', (e) => waits.push(e));
    const started = Date.now();
    await Promise.all(Array.from({ length: 6 }, () => client.list('/registrants')));
    const elapsed = Date.now() - started;
    expect(svc.dataCalls()).toHaveLength(6);
    // Window 1: token + 2 lists; window 2: 3 lists; the sixth needs a third window.
    expect(elapsed).toBeGreaterThanOrEqual(550);
    expect(waits.length).toBeGreaterThanOrEqual(2);
    expect(waits[0]).toMatchObject({ reason: 'window' });
    expect(client.stats().waitMs).toBeGreaterThan(0);
  });

  it('stops with max-wait when the reset is further than maxWaitMs', async () => {
    const svc = fakeService(withToken(() => ({ ...page(), headers: rateHeaders(0, 60, 30) })));
    const client = makeClient(svc, { rateLimit: { limit: 30, windowMs: 60_000 }, maxWaitMs: 1_000 });
    await client.list('/registrants');
    const err = (await client.list('/registrants').catch((e: unknown) => e)) as BudgetExhaustedError;
    expect(err).toBeInstanceOf(BudgetExhaustedError);
    expect(err.reason).toBe('max-wait');
    expect(err.resetAt!.getTime() - Date.now()).toBeGreaterThan(55_000);
    expect(svc.dataCalls()).toHaveLength(1);
  });

  it('runBudget stops before sending', async () => {
    const svc = fakeService(withToken(page));
    const client = makeClient(svc, { runBudget: 25 });
    await client.list('/registrants');
    await client.list('/registrants');
    const err = (await client.list('/registrants').catch((e: unknown) => e)) as BudgetExhaustedError;
    expect(err).toMatchObject({ reason: 'run-budget', needed: 10, remaining: 4 });
    expect(svc.dataCalls()).toHaveLength(2);
    expect(client.ledger.snapshot().runBudgetLeft).toBe(4);
  });

  it('corrects the ledger from the headers (another process spends)', async () => {
    // Another process on the same credential leaves us 15 after our first call; its second answer says 5.
    const svc = fakeService(withToken((_r, n) => ({ ...page(), headers: rateHeaders(15 - 10 * n, 120, 2000) })));
    const client = makeClient(svc, { maxWaitMs: 0 });
    await client.list('/registrants');
    const snap = client.ledger.snapshot();
    expect(snap.remaining).toBe(15);
    expect(snap.limit).toBe(2000);
    expect(Math.abs(snap.resetAt!.getTime() - (Date.now() + 120_000))).toBeLessThan(1_000);
    await client.list('/registrants'); // 15 -> 5: the next list call does not fit
    await expect(client.list('/registrants')).rejects.toBeInstanceOf(BudgetExhaustedError);
  });

  it('the limit header overrides the configured limit', async () => {
    const svc = fakeService(withToken(() => ({ ...page(), headers: rateHeaders(4989, 590, 5000) })));
    const client = makeClient(svc);
    await client.list('/registrants');
    expect(client.ledger.snapshot()).toMatchObject({ limit: 5000, remaining: 4989 });
  });
});

describe('429', () => {
  it('waits X-Rate-Limit-Reset, then retries; counted', async () => {
    const svc = fakeService(
      withToken((_r, n) =>
        n === 0
          ? {
              status: 429,
              body: { name: 'Too Many Requests', message: 'Rate limit exceeded.', code: 0, status: 429 },
              headers: rateHeaders(0, 1),
            }
          : page(),
      ),
    );
    const client = makeClient(svc);
    const waits: WaitEvent[] = [];
    client.on('wait', (e) => waits.push(e));
    const started = Date.now();
    await client.list('/registrants');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(svc.dataCalls()).toHaveLength(2);
    expect(client.stats().rejected429).toBe(1);
    expect(waits[0]).toMatchObject({ reason: '429' });
    expect(client.stats().spent.list).toBe(10); // the refused call is not charged
  });

  it('without a reset header waits a backoff capped at the window', async () => {
    const svc = fakeService(withToken((_r, n) => (n < 2 ? { status: 429, body: '' } : page())));
    const client = makeClient(svc, { rateLimit: { limit: 2000, windowMs: 200 } });
    const waits: WaitEvent[] = [];
    client.on('wait', (e) => waits.push(e));
    const started = Date.now();
    await client.list('/registrants');
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    // Each pause the client chose is capped at the window (what it decided, not how fast the machine ran).
    expect(waits).toHaveLength(2);
    for (const w of waits) expect(w.ms).toBeLessThanOrEqual(200);
    expect(client.stats().rejected429).toBe(2);
  });

  it('a 429 while the headers say credits are left is transient: a short pause, not the window', async () => {
    const svc = fakeService(
      withToken((_r, n) => (n === 0 ? { status: 429, body: '', headers: rateHeaders(1500, 500) } : page())),
    );
    const client = makeClient(svc);
    const waits: WaitEvent[] = [];
    client.on('wait', (e) => waits.push(e));
    await client.list('/registrants');
    expect(waits).toHaveLength(1);
    expect(waits[0]!.reason).toBe('429');
    // A short pause, not the 500 s the Reset header names.
    expect(waits[0]!.ms).toBeLessThan(1_000);
    expect(client.stats().rejected429).toBe(1);
  });

  it('a 429 whose reset is beyond maxWait stops with max-wait', async () => {
    const svc = fakeService(withToken(() => ({ status: 429, body: '', headers: rateHeaders(0, 300) })));
    const client = makeClient(svc, { maxWaitMs: 5_000 });
    const err = (await client.list('/registrants').catch((e: unknown) => e)) as BudgetExhaustedError;
    expect(err).toBeInstanceOf(BudgetExhaustedError);
    expect(err.reason).toBe('max-wait');
    expect(svc.dataCalls()).toHaveLength(1);
  });

  it('endless 429s end in a RateLimitedError', async () => {
    const svc = fakeService(withToken(() => ({ status: 429, body: '', headers: rateHeaders(0, 0) })));
    const client = makeClient(svc, { retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 1 } });
    await expect(client.list('/registrants')).rejects.toBeInstanceOf(RateLimitedError);
    expect(svc.dataCalls()).toHaveLength(11);
  });
});
