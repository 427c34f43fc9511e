/**
 * The daemon's safety net, as a user meets it: a restart after an outage catches up on what the service sent while
 * nothing listened (past events included, with no sync run by hand), and a reconciliation treats a path the
 * account does not serve as `sync` does (recorded unavailable, not a failed run).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { run } from '../cli/helpers.js';
import { compareStream } from '../helpers/harness.js';
import { startProxy } from '../helpers/proxy.js';
import { eventually, useDaemons } from './daemon-process.js';
import { CAPTURED, mutateEach, useServeEnv } from './helpers.js';

const SECRET = 'daemon-catch-up-secret-8a7f6e5d4c3b';
const STREAMS = CAPTURED.join(',');
/** Never fires during a test: the runs seen here are the catch-ups at start. */
const QUIET_CRON = '0 3 * * *';

let sim: Simulator;
let dir: string;
let env: Record<string, string>;
useServeEnv({ seed: 11, db: 'outage.duckdb', secret: SECRET }, (e) => {
  ({ sim, dir, env } = e);
});

const daemons = useDaemons();

/** Events that ended more than 30 days before the simulator's now: polled once a day by a plain sync. */
function pastEventIds(): Set<number> {
  const now = sim.now().getTime();
  const past = sim
    .truth('events')
    .records.filter(
      (e) => typeof e.end_date === 'string' && now - Date.parse(`${e.end_date}T23:59:59Z`) > 30 * 86_400_000,
    );
  return new Set(past.map((e) => Number(e.id)));
}

async function differences(db: string): Promise<Record<string, Awaited<ReturnType<typeof compareStream>>>> {
  const w = await Warehouse.open(db, { readOnly: true });
  try {
    const out: Record<string, Awaited<ReturnType<typeof compareStream>>> = {};
    for (const s of CAPTURED) out[s] = await compareStream(sim, w, s);
    return out;
  } finally {
    await w.close();
  }
}

describe('the daemon after an outage', () => {
  it('catches up at restart on what the service gave up delivering, past events included', async () => {
    expect((await run(['backfill', '--streams', STREAMS], { cwd: dir, env })).code).toBe(0);
    const argv = ['serve', '--listen', '127.0.0.1:0', '--streams', STREAMS, '--cron', QUIET_CRON];
    const first = await daemons.start(argv, env);
    await eventually(() => first.stderr().includes('catch-up complete'));
    const install = await run(['webhooks', 'install', '--url', first.url!, '--streams', STREAMS], { cwd: dir, env });
    expect(install.code, install.stderr).toBe(0);

    // The outage: the daemon dies, changes go on, the service gives up every delivery (nothing listens).
    first.child.kill('SIGKILL');
    await first.exited;
    const since = sim.webhooks.deliveries().at(-1)?.id ?? 0;
    for (let i = 0; i < 20; i++) {
      sim.mutate(5, { streams: ['registrants'] });
      sim.advanceClock(1);
    }
    mutateEach(sim, 2);
    expect(await sim.webhooks.idle()).toBe(true);
    const ours = sim.webhooks.deliveries(since).filter((x) => x.url === first.url);
    expect(ours.length).toBeGreaterThan(0);
    expect(ours.filter((x) => x.status === 'delivered')).toEqual([]);

    // The warehouse is behind, in past events too (which a plain sync polls once a day).
    const before = await differences(env.EVSYNC_DB!);
    const registrantsBehind = [...before.registrants!.missing, ...before.registrants!.changed.map((c) => c.key)];
    expect(registrantsBehind.length).toBeGreaterThan(0);
    const past = pastEventIds();
    expect(past.size).toBeGreaterThan(0);
    const truth = new Map(sim.truth('registrants').records.map((r) => [String(r.id), Number(r.event_id)]));
    const behindInPast = registrantsBehind.filter((key) => past.has(truth.get(String(key)) ?? -1));
    expect(behindInPast.length).toBeGreaterThan(0);

    // The restart: the catch-up runs by itself, says how long nothing listened and what it will cost (a lower
    // bound: pages it has not seen are priced at one), and ends equal to the source.
    const credits = sim.counters().credits;
    const second = await daemons.start(argv, env);
    expect(second.stderr()).toMatch(/previous daemon's last heartbeat was .* ago/);
    const said = /catch-up: (\d+) work items, at least ([\d,]+) credits/.exec(second.stderr());
    expect(said, second.stderr()).not.toBeNull();
    await eventually(() => second.stderr().includes('catch-up complete'));
    expect(second.stderr()).toMatch(/reconcile #1: done/);
    const spent = sim.counters().credits - credits;
    expect(Number(said![2]!.replaceAll(',', ''))).toBeLessThanOrEqual(spent);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
    const after = await differences(env.EVSYNC_DB!);
    for (const s of CAPTURED) expect({ s, ...after[s] }).toEqual({ s, missing: [], extra: [], changed: [] });
  });

  it('goes on with a catch-up the budget cannot finish in the next runs, and status says it is owed', async () => {
    const db = join(dir, 'budget.duckdb');
    const small = { ...env, EVSYNC_DB: db };
    expect((await run(['backfill', '--streams', STREAMS], { cwd: dir, env: small })).code).toBe(0);
    // 40 credits a run (4 list calls): the catch-up of the eight streams over three events takes several runs.
    const d = await daemons.start(
      ['serve', '--listen', '127.0.0.1:0', '--streams', STREAMS, '--cron', '* * * * * *', '--budget', '40'],
      small,
    );
    await eventually(() => d.stderr().includes('catch-up not complete (partial)'));
    const owed = await run(['status', '--json'], { cwd: dir, env: small });
    const report = JSON.parse(owed.stdout) as { daemon: { catchUpPendingSince: string | null } };
    expect(report.daemon.catchUpPendingSince).toMatch(/^\d{4}-\d\d-\d\dT/);
    const text = await run(['status'], { cwd: dir, env: small });
    expect(text.stdout).toContain('a catch-up owed since');
    await eventually(() => d.stderr().includes('catch-up complete'));
    const runs = [...d.stderr().matchAll(/reconcile #(\d+): (\w+)/g)].map((m) => m[2]);
    expect(runs.length).toBeGreaterThan(1);
    expect(runs.at(-1)).toBe('done');
    const after = await run(['status', '--json'], { cwd: dir, env: small });
    expect((JSON.parse(after.stdout) as typeof report).daemon.catchUpPendingSince).toBeNull();
    expect(await d.stop()).toEqual({ code: 0, signal: null });
  });

  it('records a path that answers 404 as unavailable in its reconciliation, as sync does', async () => {
    const proxy = await startProxy(sim.baseUrl, {
      notFound: (path) => ['/packages', '/speakers', '/sponsors'].includes(path),
    });
    try {
      const proxied = { ...env, EVSYNC_BASE_URL: proxy.baseUrl, EVSYNC_DB: join(dir, 'partial-account.duckdb') };
      const d = await daemons.start(['serve', '--listen', '127.0.0.1:0', '--cron', QUIET_CRON], proxied);
      await eventually(() => /reconcile #1: /.test(d.stderr()));
      await eventually(() => /catch-up complete|catch-up not complete/.test(d.stderr()));
      expect(d.stderr()).toMatch(/reconcile #1: done/);
      expect(d.stderr()).not.toMatch(/reconcile #1: failed/);
      expect(d.stderr()).toContain('catch-up complete');
      const s = await run(['status', '--json'], { cwd: dir, env: proxied });
      expect(s.code, s.stderr).toBe(0);
      const unavailable = (JSON.parse(s.stdout) as { unavailable: { stream: string }[] }).unavailable.map(
        (u) => u.stream,
      );
      expect(unavailable.sort()).toEqual(['packages', 'speakers', 'sponsors']);
      expect(await d.stop()).toEqual({ code: 0, signal: null });
    } finally {
      await proxy.close();
    }
  });
});
