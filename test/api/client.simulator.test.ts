import { afterEach, describe, expect, it } from 'vitest';
import { simulatorClient } from '../../bench/sim-client.js';
import { ApiClient, type ClientOptions } from '../../src/api/index.js';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../src/simulator/index.js';

/** The client against the embedded simulator over real HTTP on loopback (the simulator states the service itself). */

let sim: Simulator | undefined;
let client: ApiClient | undefined;
afterEach(async () => {
  await client?.close();
  await sim?.close();
  client = undefined;
  sim = undefined;
});

async function setup(simOptions: SimulatorOptions = {}, clientOptions: Partial<ClientOptions> = {}) {
  sim = await startSimulator({ size: 'tiny', port: 0, host: '127.0.0.1', ...simOptions });
  client = simulatorClient(sim, {
    retry: { attempts: 6, baseDelayMs: 5, maxDelayMs: 50 },
    ...clientOptions,
  });
  return { sim, client };
}

async function collectIds(c: ApiClient, path: string, perPage: number, params: Record<string, number> = {}) {
  const ids: number[] = [];
  let calls = 0;
  for await (const page of c.keyset<{ id: number }>(path, { perPage, fields: ['id'], params })) {
    calls += 1;
    for (const item of page.items) ids.push(Number(item.id));
  }
  return { ids, calls };
}

describe('client against the simulator', () => {
  it('gets a token (key + secret or pre-encoded) and calibrates the server clock', async () => {
    const { sim, client } = await setup();
    sim.advanceClock(3600); // the simulated server runs an hour ahead
    await client.ensureToken();
    expect(Math.abs(client.serverNow().getTime() - sim.now().getTime())).toBeLessThan(1500);
    expect(client.tokenExpiresAt!.getTime() - sim.now().getTime()).toBeGreaterThan(1700_000);
    const encoded = new ApiClient({ baseUrl: sim.baseUrl, credentials: { encoded: sim.accounts[1]!.encoded } });
    await encoded.ensureToken();
    await encoded.close();
    expect(sim.counters(0).tokenCalls).toBe(1);
    expect(sim.counters(1).tokenCalls).toBe(1);
  });

  it('walks a real stream by keyset: every id once, exactly ceil(n / perPage) list calls', async () => {
    const { sim, client } = await setup();
    const truth = sim.truth('events').records.map((r) => Number(r.id));
    expect(truth.length).toBeGreaterThanOrEqual(3);
    // perPage 1 and truth.length divide the row count exactly: no extra empty call either way.
    for (const perPage of [1, 2, truth.length, 1000]) {
      sim.resetCounters();
      const { ids, calls } = await collectIds(client, '/events', perPage);
      expect(ids).toEqual([...truth].sort((a, b) => a - b));
      const expected = Math.max(1, Math.ceil(truth.length / perPage));
      expect(calls).toBe(expected);
      expect(sim.counters(0).listCalls).toBe(expected);
    }
    // The client's own count agrees with the server's.
    expect(client.stats().spent.list).toBeGreaterThan(0);
  });

  it('walks event-scoped registrants with search conditions', async () => {
    const { sim, client } = await setup();
    const regs = sim.truth('registrants').records;
    const eventId = Number(regs[0]!.event_id);
    const expected = regs.filter((r) => Number(r.event_id) === eventId).map((r) => Number(r.id));
    const { ids } = await collectIds(client, '/registrants', 7, { event_id: eventId });
    expect(ids).toEqual(expected.sort((a, b) => a - b));
  });

  it('recovers from injected faults without losing or repeating rows', async () => {
    const { sim, client } = await setup({
      faults: { errorRate: 0.15, resetRate: 0.1, malformedRate: 0.1, storm429Rate: 0.05 },
    });
    const truth = sim.truth('registrants').records;
    const eventId = Number(truth[0]!.event_id);
    const expected = truth.filter((r) => Number(r.event_id) === eventId).map((r) => Number(r.id));
    const { ids } = await collectIds(client, '/registrants', 5, { event_id: eventId });
    expect(ids).toEqual(expected.sort((a, b) => a - b));
    expect(client.stats().retries).toBeGreaterThan(0);
    // Every charged call was counted by the client too (retries are charged again).
    expect(client.stats().spent.list).toBe(sim.counters(0).listCalls * 10);
  });

  it('refreshes the token after the server clock passes expires_at (401 then retry)', async () => {
    const { sim, client } = await setup();
    await client.list('/events', { perPage: 1 });
    sim.advanceClock(1900);
    await client.list('/events', { perPage: 1 });
    expect(client.stats().tokenRefreshes).toBe(2);
    expect(sim.counters(0).tokenCalls).toBe(2);
  });

  for (const omitResetHeader of [false, true]) {
    it(`stays within a compressed window without a single 429${omitResetHeader ? ' (no Reset header)' : ''}`, async () => {
      const { sim, client } = await setup(
        { rateLimit: { credits: 50, windowSeconds: 2 }, faults: { omitResetHeader } },
        { rateLimit: { limit: 50, windowMs: 2000 }, concurrency: 4 },
      );
      const planned: number[] = [];
      client.on('wait', (w) => planned.push(w.ms));
      const started = Date.now();
      // 1 token credit + 12 list calls = 121 credits: three windows, so two waits of about 2 s.
      await Promise.all(Array.from({ length: 12 }, () => client.list('/events', { perPage: 1 })));
      const elapsed = Date.now() - started;
      expect(sim.counters(0).rejected429).toBe(0);
      expect(sim.counters(0).listCalls).toBe(12);
      expect(elapsed).toBeGreaterThanOrEqual(3_900);
      // The waits the client planned add up to about two windows (wall time would also count the machine's speed).
      expect(client.stats().waitMs).toBeGreaterThan(3_000);
      // No call ever planned to wait longer than a window (the wall time would also measure the machine's speed).
      expect(Math.max(...planned)).toBeLessThanOrEqual(2_000 + 300);
    });
  }

  it('maxWait 0 on a compressed window ends in BudgetExhaustedError with resetAt', async () => {
    const { client } = await setup(
      { rateLimit: { credits: 50, windowSeconds: 2 } },
      { rateLimit: { limit: 50, windowMs: 2000 }, maxWaitMs: 0 },
    );
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => client.list('/events', { perPage: 1 })));
    const rejected = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(4);
    expect(rejected).toHaveLength(2);
    for (const e of rejected) {
      expect(e).toMatchObject({ name: 'BudgetExhaustedError', reason: 'max-wait', needed: 10 });
      expect(e.resetAt.getTime() - Date.now()).toBeLessThanOrEqual(2_100);
    }
  });
});
