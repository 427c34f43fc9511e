/**
 * How runs end and what the next one does with it: the service killed and restarted mid-run (the rerun resumes
 * and buys no page again), an unreachable service (stop early, one line), a stop during a rate-limit wait (at
 * once, checkpoint and credits recorded), a warehouse of another account (refused), filters that match nothing.
 * Faults come by count (the n-th page) or by the client's own events, never by the wall clock.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { simulatorClient } from '../../bench/sim-client.js';
import type { ApiClient } from '../../src/api/index.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { runSync, type SyncOptions } from '../../src/sync/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { expectEqualToSource } from '../helpers/reliability.js';

const STREAMS = ['events', 'registrants', 'sessions', 'contacts'];
const BACKFILL: SyncOptions = { mode: 'backfill', streams: STREAMS.join(','), lagSeconds: 0, concurrency: 2 };
/** Pages that may be in flight when the service dies: two walks, each with its next page prefetched. */
const IN_FLIGHT = 4;

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
  cleanup = [];
});

function clientFor(sim: Simulator, account = 0): ApiClient {
  const client = simulatorClient(sim, { retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 } }, account);
  cleanup.push(() => client.close());
  return client;
}

async function tempWarehouse(): Promise<Warehouse> {
  const dir = mkdtempSync(join(tmpdir(), 'evsync-stops-'));
  const warehouse = await Warehouse.open(join(dir, 'w.duckdb'));
  cleanup.push(async () => {
    await warehouse.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return warehouse;
}

async function harness(options: Parameters<typeof startHarness>[0] = {}): Promise<Harness> {
  const h = await startHarness(options);
  cleanup.push(() => h.close());
  return h;
}

describe('the service killed mid-run, then back', () => {
  it('the failed run stops early with one line, and the rerun resumes it: no page bought twice', async () => {
    const clean = await harness();
    await runSync(clean.client(), clean.warehouse, BACKFILL);
    const cleanCalls = clean.sim.counters().listCalls;

    const first = await startSimulator({ size: 'tiny', seed: 7, port: 0 });
    const port = Number(new URL(first.baseUrl).port);
    const warehouse = await tempWarehouse();
    let pages = 0;
    let killed: Promise<void> | null = null;
    const failed = await runSync(clientFor(first), warehouse, {
      ...BACKFILL,
      onProgress: (e) => {
        if (e.type === 'page' && ++pages === 6) killed = first.close();
      },
    });
    await killed;
    const firstCalls = first.counters().listCalls;
    expect(failed.status).toBe('failed');
    expect(failed.reason).toMatch(/^service unreachable: /);
    // Stopped early: a few items failed (each after its retries), the rest were never started.
    expect(failed.items.failed).toBeLessThanOrEqual(3 + 2);
    expect(failed.items.pending).toBeGreaterThan(0);
    // One grouped line per stream and cause, with no query strings (they listed every field).
    expect(failed.errors.length).toBeLessThanOrEqual(STREAMS.length + 1);
    expect(failed.errors.join('\n')).not.toMatch(/fields=/);

    const again = await startSimulator({ size: 'tiny', seed: 7, port });
    cleanup.push(() => again.close());
    const resumed = await runSync(clientFor(again), warehouse, BACKFILL);
    expect(resumed.status).toBe('done');
    expect(resumed.resumed).toBe(failed.runId);
    expect(firstCalls + again.counters().listCalls).toBeGreaterThanOrEqual(cleanCalls);
    expect(firstCalls + again.counters().listCalls).toBeLessThanOrEqual(cleanCalls + IN_FLIGHT);
    await expectEqualToSource(again, warehouse, STREAMS);
  });
});

describe('a stop during a rate-limit wait', () => {
  it('ends the run at once with its checkpoint and its credits recorded', async () => {
    // 1 token credit + 2 list calls fit the window; the third call would wait ten minutes.
    const h = await harness({ rateLimit: { credits: 21, windowSeconds: 600 } });
    const client = h.client({ rateLimit: { limit: 21, windowMs: 600_000 } });
    const stop = new AbortController();
    client.on('wait', () => stop.abort(new Error('SIGINT')));
    const result = await runSync(client, h.warehouse, { ...BACKFILL, signal: stop.signal });
    expect(stop.signal.aborted).toBe(true);
    expect(result.status).toBe('partial');
    expect(result.reason).toBe('stop requested');
    expect(result.credits.list).toBe(20);
    const [run] = await h.warehouse.runs.recent({ limit: 1 });
    expect(run).toMatchObject({ runId: result.runId, status: 'partial', credits: { list: 20, token: 1, total: 21 } });
    // What was read is stored and checkpointed: the events.
    expect((await h.warehouse.tableCounts()).events).toBe(h.sim.truth('events').records.length);
  });
});

describe('a stop while a call is slow to answer', () => {
  it('aborts the call in flight: the run ends at once with its checkpoints, not when the answer comes', async () => {
    // Every answer after the token takes two minutes (longer than the test's own time limit).
    const h = await harness({ faults: { slowRate: 1, slowMs: 120_000 } });
    const client = h.client({ timeouts: { headersMs: 300_000, bodyMs: 300_000 } });
    const stop = new AbortController();
    const running = runSync(client, h.warehouse, { ...BACKFILL, signal: stop.signal });
    // The service has the first list call in hand (charged, answer held back): stop now, mid-call.
    while (h.sim.counters().listCalls === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    stop.abort(new Error('SIGTERM'));
    const result = await running;
    expect(result.status).toBe('partial');
    expect(result.reason).toBe('stop requested');
    expect(result.items.failed).toBe(0);
    const [run] = await h.warehouse.runs.recent({ limit: 1 });
    expect(run?.status).toBe('partial');
  });
});

describe('one warehouse, one account', () => {
  it('a run with another account is refused (exit 2) and leaves the warehouse as it was', async () => {
    const h = await harness();
    await runSync(h.client(), h.warehouse, BACKFILL);
    const before = await h.warehouse.tableCounts();
    const runs = (await h.warehouse.runs.recent({ limit: 10 })).length;
    const other = clientFor(h.sim, 1);
    const err = await runSync(other, h.warehouse, BACKFILL).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'AccountMismatchError' });
    const message = (err as Error).message;
    expect(message).toContain(h.sim.accounts[0]!.clientId);
    expect(message).toContain(h.sim.accounts[1]!.clientId);
    expect(message).toMatch(/--db/);
    expect(message).not.toContain(h.sim.accounts[1]!.clientSecret);
    expect(await h.warehouse.tableCounts()).toEqual(before);
    expect(await h.warehouse.runs.recent({ limit: 10 })).toHaveLength(runs);
    expect(other.stats().credits.list).toBe(0);
  });
});

describe('filters that match nothing', () => {
  it('an unknown event id, a status no event has, or an empty date range is refused naming what exists', async () => {
    const h = await harness();
    const ids = h.sim
      .truth('events')
      .records.map((e) => Number(e.id))
      .sort((a, b) => a - b);
    const tries: [Partial<SyncOptions>, RegExp][] = [
      [{ events: [999_999] }, new RegExp(`--events 999999 \\(event ids here: ${ids[0]}, `)],
      [{ eventStatus: ['bogus'] }, /--event-status bogus \(statuses here: [a-z]+/],
      [{ eventsFrom: '1990-01-01', eventsTo: '1990-12-31' }, /events start \d{4}-\d\d-\d\d to \d{4}/],
    ];
    for (const [filters, message] of tries) {
      const err = await runSync(h.client(), h.warehouse, { ...BACKFILL, ...filters }).catch((e: unknown) => e);
      expect(err, JSON.stringify(filters)).toMatchObject({ name: 'SyncUsageError' });
      expect((err as Error).message).toMatch(message);
    }
    // Nothing event-scoped was asked for.
    const byPath = h.sim.counters().byPath;
    expect(Object.keys(byPath).filter((p) => p.includes('registrants'))).toEqual([]);
  });

  it('a range whose start is after its end is refused before any call', async () => {
    const h = await harness();
    const client = h.client();
    const err = await runSync(client, h.warehouse, {
      ...BACKFILL,
      eventsFrom: '2026-06-01',
      eventsTo: '2026-01-01',
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'SyncUsageError', message: expect.stringMatching(/is after --events-to/) });
    expect(h.sim.counters().tokenCalls + h.sim.counters().listCalls).toBe(0);
  });
});
