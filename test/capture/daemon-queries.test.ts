/**
 * A dashboard's worth of hostile queries against a running `serve`, as the probe that found the daemon hanging
 * did it: fifty endless queries at once with a short time limit, some of whose clients go away, while the service
 * delivers changes. Queries run in worker processes, so the daemon keeps answering deliveries and /healthz, ends every
 * query by its limit, leaves no worker behind, and stops on SIGTERM with queries running. Past the line of waiting
 * queries a client is told at once that the daemon is busy and when to try again.
 */
import { describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { run } from '../cli/helpers.js';
import { compareStream } from '../helpers/harness.js';
import { answerOf, childrenOf, eventually, processInfo, rawQuery, useDaemons } from './daemon-process.js';
import { CAPTURED, mutateEach, useServeEnv } from './helpers.js';

const SECRET = 'daemon-queries-secret-3c8e1f5a7b9d2046';
const STREAMS = CAPTURED.join(',');
/** Counting a trillion rows takes minutes on any machine: a query that is still running when the test acts. */
const ENDLESS = 'select count(*) as n from range(1000000000000)';
/** The simulator gives each delivery try this long: the answer the README promises (within 1 s) is what it checks. */
const DELIVERY_TIMEOUT_MS = 1000;

let sim: Simulator;
let dir: string;
let env: Record<string, string>;
useServeEnv({ seed: 23, db: 'queries.duckdb', secret: SECRET, deliveryTimeoutMs: DELIVERY_TIMEOUT_MS }, (e) => {
  ({ sim, dir, env } = e);
});

const daemons = useDaemons();

interface DaemonQueries {
  queriesRunning?: number;
  queries?: { running: number; waiting: number; processes: number };
}

async function daemonQueries(): Promise<DaemonQueries> {
  const r = await run(['status', '--json'], { cwd: dir, env });
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { daemon?: DaemonQueries }).daemon ?? {};
}

/** Asks /healthz until stopped; counts the answers that were not 200 or did not come. */
function watchHealth(origin: string): { stop(): Promise<{ asked: number; failed: string[] }> } {
  let stopped = false;
  const failed: string[] = [];
  let asked = 0;
  const loop = (async () => {
    while (!stopped) {
      asked++;
      try {
        // The bound is the daemon's: a receiver that cannot answer within the service's own 10 s has failed.
        const r = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(10_000) });
        if (r.status !== 200) failed.push(`status ${r.status}`);
        await r.body?.cancel();
      } catch (err) {
        failed.push(err instanceof Error ? err.message : String(err));
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { asked, failed };
    },
  };
}

describe('queries through the daemon run in processes of their own', () => {
  it('fifty endless queries, some abandoned, while changes are delivered: all end by their limit, deliveries and /healthz are answered, SIGTERM stops it', async () => {
    expect((await run(['backfill', '--streams', STREAMS], { cwd: dir, env })).code).toBe(0);
    const d = await daemons.start(
      ['serve', '--listen', '127.0.0.1:0', '--streams', STREAMS, '--no-catch-up', '--query-queue', '100'],
      env,
    );
    const install = await run(['webhooks', 'install', '--url', d.url!, '--streams', STREAMS], { cwd: dir, env });
    expect(install.code, install.stderr).toBe(0);
    const health = watchHealth(new URL(d.url!).origin);
    const since = sim.webhooks.deliveries().at(-1)?.id ?? 0;

    // Fifty at once, each with an 8 s limit; ten of their clients go away once the daemon holds them.
    const sockets = Array.from({ length: 50 }, () => rawQuery(env.EVSYNC_DB!, ENDLESS, { timeoutMs: 8000 }));
    const answers = sockets.map(answerOf);
    await eventually(async () => (await daemonQueries()).queriesRunning === 50);
    // Two workers (the default) run two queries once the query copy is made; the rest wait in line, their limit
    // running (before the copy is made, all fifty wait for it).
    await eventually(async () => (await daemonQueries()).queries?.running === 2);
    expect((await daemonQueries()).queries).toEqual({ running: 2, waiting: 48, processes: 2 });
    const workers = childrenOf(d.pid);
    expect(workers.length).toBeGreaterThanOrEqual(2);
    for (const socket of sockets.slice(0, 10)) socket.destroy();

    // The service delivers changes meanwhile: every try is answered within the simulator's 1 s.
    mutateEach(sim, 4);
    expect(await sim.webhooks.idle()).toBe(true);

    const kept = await Promise.all(answers.slice(10));
    for (const answer of kept) {
      expect(answer?.ok).toBe(false);
      expect(answer?.error).toMatch(/ran longer than 8 s \(the time limit\)/);
    }
    await eventually(async () => (await daemonQueries()).queriesRunning === 0);

    // SIGTERM with fifty more running or waiting (the daemon's own 300 s limit): it ends them and exits at once.
    const late = Array.from({ length: 50 }, () => rawQuery(env.EVSYNC_DB!, ENDLESS));
    const lateAnswers = late.map(answerOf);
    await eventually(async () => (await daemonQueries()).queriesRunning === 50);
    const workersNow = childrenOf(d.pid);
    // /healthz answered 200 all along, under both loads (a stopping receiver answers 503 on purpose: not counted).
    const { asked, failed } = await health.stop();
    expect(asked).toBeGreaterThan(0);
    expect(failed).toEqual([]);
    const sent = performance.now();
    const exit = await d.stop();
    const tookMs = performance.now() - sent;
    expect(exit, d.stderr()).toEqual({ code: 0, signal: null });
    expect(tookMs).toBeLessThan(15_000);
    for (const answer of await Promise.all(lateAnswers)) {
      if (answer) expect(answer.error).toMatch(/daemon is stopping/);
    }
    // No worker outlives the daemon.
    // (A zombie is a process that has ended and waits for its new parent to reap it: nothing runs there.)
    const left = [...workers, ...workersNow].map(processInfo).filter((p) => p !== null && p.state !== 'Z');
    expect(left).toEqual([]);

    const deliveries = sim.webhooks.deliveries(since).filter((x) => x.url === d.url);
    expect(deliveries.length).toBeGreaterThan(0);
    const slow = deliveries.flatMap((x) => x.attempts.filter((a) => a.outcome !== 'ok'));
    expect(slow).toEqual([]);
    // And applied: the warehouse equals the service.
    const w = await Warehouse.open(env.EVSYNC_DB!, { readOnly: true });
    try {
      for (const s of CAPTURED) {
        const diff = await compareStream(sim, w, s);
        expect({ s, ...diff }).toEqual({ s, missing: [], extra: [], changed: [] });
      }
    } finally {
      await w.close();
    }
  });

  it('past the line of waiting queries a client is told at once that the daemon is busy, and when to retry', async () => {
    const d = await daemons.start(
      ['schedule', '--cron', '0 3 * * *', '--streams', 'events', '--query-workers', '1', '--query-queue', '1'],
      env,
    );
    const held = [rawQuery(env.EVSYNC_DB!, ENDLESS, { timeoutMs: 60_000 }), rawQuery(env.EVSYNC_DB!, ENDLESS)];
    // Both admitted, the first in the worker (not still waiting for the query copy) and the second in the line.
    await eventually(async () => {
      const { queries } = await daemonQueries();
      return queries?.running === 1 && queries.waiting === 1;
    });
    const busy = await run(['query', 'select 1 as one'], { cwd: dir, env });
    expect(busy.code).toBe(1);
    expect(busy.stderr).toMatch(
      /the daemon is busy: 1 queries running and 1 waiting \(at most 1 and 1\); try again in (\d+) s/,
    );
    // The soonest a place frees for sure is the first query's 60 s limit.
    const seconds = Number(/try again in (\d+) s/.exec(busy.stderr)![1]);
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThanOrEqual(61);
    for (const socket of held) socket.destroy();
    await eventually(async () => (await daemonQueries()).queriesRunning === 0);
    const ok = await run(['query', 'select 1 as one', '--format', 'json'], { cwd: dir, env });
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual([{ one: 1 }]);
    expect(await d.stop()).toEqual({ code: 0, signal: null });
  });
});
