/**
 * The daemon users leave running, attacked as a user would: `serve` and `schedule` as real processes, every other
 * command from "another shell". It holds the writer lock until it exits whatever a query does; a query through it
 * is bounded, cancelled when its client goes away, and never holds up deliveries; SIGTERM ends it while a query
 * runs; `schedule` answers status and query as serve does.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { run } from '../cli/helpers.js';
import { compareStream } from '../helpers/harness.js';
import { eventually, rawQuery, useDaemons } from './daemon-process.js';
import { CAPTURED, mutateEach, useServeEnv } from './helpers.js';

const SECRET = 'daemon-test-secret-5e0b7a1c9d2f4e68';
const STREAMS = CAPTURED.join(',');
/** Counting a trillion rows takes minutes on any machine: a query that is still running when the test acts. */
const ENDLESS = 'select count(*) as n from range(1000000000000)';

let sim: Simulator;
let dir: string;
let env: Record<string, string>;
useServeEnv({ seed: 11, db: 'daemon.duckdb', secret: SECRET }, (e) => {
  ({ sim, dir, env } = e);
});

const daemons = useDaemons();

interface StatusWithDaemon {
  servedBy?: string;
  daemon?: { command?: string; pid?: number; queriesRunning?: number; catchUpPendingSince: string | null };
  unavailable: { stream: string }[];
}

async function status(): Promise<StatusWithDaemon> {
  const r = await run(['status', '--json'], { cwd: dir, env });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as StatusWithDaemon;
}

describe('the daemon', () => {
  it('holds the writer lock whatever a query does; queries are bounded, cancellable, and never hold up deliveries', async () => {
    expect((await run(['backfill', '--streams', STREAMS], { cwd: dir, env })).code).toBe(0);
    const d = await daemons.start(
      ['serve', '--listen', '127.0.0.1:0', '--streams', STREAMS, '--no-catch-up', '--query-max-rows', '1000'],
      env,
    );
    const install = await run(['webhooks', 'install', '--url', d.url!, '--streams', STREAMS], { cwd: dir, env });
    expect(install.code, install.stderr).toBe(0);

    // A query through the daemon, then every writer from another process: refused, naming the daemon.
    const count = await run(['query', 'select count(*) as n from registrants', '--format', 'json'], { cwd: dir, env });
    expect(count.code, count.stderr).toBe(0);
    expect(JSON.parse(count.stdout)[0].n).toBe(sim.truth('registrants').records.length);
    for (const argv of [
      ['sync', '--streams', 'events'],
      ['backfill', '--streams', 'events'],
      ['export', '--out', join(dir, 'out')],
    ]) {
      const r = await run(argv, { cwd: dir, env });
      expect(r.code, `${argv[0]}: ${r.stderr}`).toBe(1);
      expect(r.stderr).toContain(`(PID ${d.pid})`);
    }

    // Bounded: a result past the row bound is refused with a pointer to export; a query past its time is cancelled.
    const big = await run(['query', 'select range as r from range(5000)'], { cwd: dir, env });
    expect(big.code).toBe(1);
    expect(big.stderr).toContain('more than 1,000 rows');
    expect(big.stderr).toContain('evsync export');
    // The bound that binds is named, with how to change it: the daemon's own here, the client's when smaller.
    expect(big.stderr).toContain('restart the daemon with a larger --query-max-rows');
    expect(big.stderr).not.toContain('raise --max-rows');
    const mine = await run(['query', 'select range as r from range(5000)', '--max-rows', '10'], { cwd: dir, env });
    expect(mine.code).toBe(1);
    expect(mine.stderr).toContain('more than 10 rows');
    expect(mine.stderr).toContain('raise --max-rows');
    // A refused statement is refused before the daemon copies anything or starts a worker.
    const copy = await run(['query', "copy (select 1) to 'x.csv'"], { cwd: dir, env });
    expect(copy.code).toBe(1);
    expect(copy.stderr).toContain('COPY is refused');
    const slow = await run(['query', ENDLESS, '--timeout', '1'], { cwd: dir, env });
    expect(slow.code).toBe(1);
    expect(slow.stderr).toContain('ran longer than 1 s');
    expect((await status()).daemon?.queriesRunning).toBe(0);

    // A query still running while the service delivers a burst of changes: every delivery is answered (within the
    // service's own 10 s delivery timeout) and applied; then its client goes away and the daemon stops it.
    const abandoned = rawQuery(env.EVSYNC_DB!, ENDLESS);
    await eventually(async () => (await status()).daemon?.queriesRunning === 1);
    const since = sim.webhooks.deliveries().at(-1)?.id ?? 0;
    mutateEach(sim, 5);
    expect(await sim.webhooks.idle()).toBe(true);
    // (The account's other webhooks point at hosts the simulator may not call: only ours count.)
    const deliveries = sim.webhooks.deliveries(since).filter((x) => x.url === d.url);
    expect(deliveries.length).toBeGreaterThan(0);
    expect(deliveries.filter((x) => x.status !== 'delivered')).toEqual([]);
    // Applied too while the query runs (the applier never waits for it).
    await eventually(async () => /^evsync_webhook_pending 0$/m.test(await (await fetch(`${d.admin}/metrics`)).text()));
    expect((await status()).daemon?.queriesRunning).toBe(1);
    abandoned.destroy();
    await eventually(async () => (await status()).daemon?.queriesRunning === 0);

    // SIGTERM while a query runs: the daemon cancels it and exits cleanly.
    const inFlight = rawQuery(env.EVSYNC_DB!, ENDLESS);
    await eventually(async () => (await status()).daemon?.queriesRunning === 1);
    const exit = await d.stop();
    inFlight.destroy();
    expect(exit, d.stderr()).toEqual({ code: 0, signal: null });
    expect(d.stderr()).toContain('serve stopped');

    // The lock went with the process, not before: now a sync runs, and every change arrived by webhook.
    const w = await Warehouse.open(env.EVSYNC_DB!, { readOnly: true });
    try {
      for (const s of CAPTURED) {
        const diff = await compareStream(sim, w, s);
        expect({ s, ...diff }).toEqual({ s, missing: [], extra: [], changed: [] });
      }
    } finally {
      await w.close();
    }
    expect((await run(['sync', '--streams', 'events'], { cwd: dir, env })).code).toBe(0);
  });

  it('schedule holds the warehouse and answers status and query from another shell', async () => {
    const d = await daemons.start(['schedule', '--cron', '0 3 * * *', '--streams', 'events'], env);
    const s = await status();
    expect(s.servedBy).toBe(`evsync schedule (PID ${d.pid})`);
    expect(s.daemon).toMatchObject({ command: 'schedule', pid: d.pid, queriesRunning: 0 });
    const q = await run(['query', 'select count(*) as n from events', '--format', 'json'], { cwd: dir, env });
    expect(q.code, q.stderr).toBe(0);
    expect(JSON.parse(q.stdout)[0].n).toBe(sim.truth('events').records.length);
    const sync = await run(['sync', '--streams', 'events'], { cwd: dir, env });
    expect(sync.code).toBe(1);
    expect(sync.stderr).toContain(`(PID ${d.pid})`);
    expect(await d.stop()).toEqual({ code: 0, signal: null });
    expect(d.stderr()).toContain('schedule stopped after 0 run(s)');
  });
});
