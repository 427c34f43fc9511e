/**
 * `evsync serve` as a user runs it, with a catch-up longer than the time between two ticks (issue 33): the cron
 * ticks are not skipped while it runs. Each tick stops the catch-up's slice after its pages in flight, polls the
 * stream no webhook feeds, then the catch-up goes on where it stopped; `status` shows the catch-up owed and its
 * slices as runs of their own kind; a daemon killed during a slice resumes that slice's catch-up at its next start.
 * The ticks are the daemon's own cron, every 2 seconds; the service answers in 500 ms, so the catch-up (10 items, two
 * at a time) spans more than one tick. (Its waits for the window beside the rest are shown on one clock in
 * catch-up-lanes.test.ts: this process's windows run in real time.)
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { run, simulatorEnv, tempDir } from '../cli/helpers.js';
import { eventually, useDaemons } from './daemon-process.js';

let sim: Simulator;
let env: Record<string, string>;
let dir: string;
let cleanup: () => void;

beforeAll(async () => {
  sim = await startSimulator({
    size: 'tiny',
    seed: 5,
    rateLimit: { credits: 1_000_000, windowSeconds: 600 },
    faults: { latencyMs: 500 },
  });
  ({ dir, cleanup } = tempDir());
  env = {
    ...simulatorEnv(sim, { db: join(dir, 'ticks.duckdb') }),
    EVSYNC_WEBHOOK_SECRET: 'daemon-ticks-secret-5f4e3d2c1b0a',
  };
});

afterAll(async () => {
  await sim?.close();
  cleanup?.();
});

const daemons = useDaemons();

interface StatusDoc {
  daemon: { catchUpPendingSince: string | null };
  runs: { runId: string; kind: string; status: string }[];
}

async function status(): Promise<StatusDoc> {
  return JSON.parse((await run(['status', '--json'], { cwd: dir, env })).stdout) as StatusDoc;
}

const ARGV = ['serve', '--listen', '127.0.0.1:0', '--streams', 'registrants,transactions', '--cron', '*/2 * * * * *'];
const STOPPED = /catch-up not complete \(partial\): it stopped for the tick/;

describe('serve during a long catch-up', () => {
  it('keeps the ticks: each stops the catch-up for the polled stream, then the catch-up goes on, killed or not', async () => {
    const first = await daemons.start(ARGV, env);
    await eventually(() => STOPPED.test(first.stderr()));
    // While it is owed: pending, its slices recorded as runs of their own kind.
    const owed = await status();
    expect(owed.daemon.catchUpPendingSince).not.toBeNull();
    expect(owed.runs).toContainEqual(expect.objectContaining({ kind: 'catch-up', status: 'partial' }));
    expect(first.stderr()).toMatch(
      /tick at \S+ during the catch-up: it stops after its pages in flight \(state saved\), the tick's runs come first/,
    );
    // The slice that yielded is no alarm: said at info level, as "the next run resumes".
    expect(first.stderr()).toMatch(
      /reconcile #1: partial.*the catch-up stopped: the tick at \S+ is due \(the next run resumes\)/,
    );
    await eventually(() => first.stderr().includes('tick during the catch-up: transactions polled first'));
    // Killed during the next slice: its run stays `running` in the warehouse, the catch-up owed.
    let killed = '';
    await eventually(async () => {
      const running = (await status()).runs.find((r) => r.kind === 'catch-up' && r.status === 'running');
      killed = running?.runId ?? '';
      return killed !== '' || first.stderr().includes('catch-up complete');
    });
    expect(killed).not.toBe('');
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await daemons.start(ARGV, env);
    await eventually(() => second.stderr().includes('catch-up complete'));
    expect(second.stderr()).toMatch(/a catch-up pending since \S+ goes on/);
    const after = await status();
    expect(after.daemon.catchUpPendingSince).toBeNull();
    expect(new Set(after.runs.map((r) => r.kind))).toEqual(new Set(['catch-up', 'incremental']));
    expect(after.runs.find((r) => r.kind === 'catch-up')?.status).toBe('done');
    const end = await second.stop();
    // A tick's run may be in flight at the stop: cut short, its state saved (3); otherwise 0.
    expect([0, 3]).toContain(end.code);

    // The killed slice is resumed, not started over: the next one carries on its signpost.
    const w = await Warehouse.open(env.EVSYNC_DB!, { readOnly: true });
    try {
      const runs = await w.runs.recent({ limit: 50, kind: 'catch-up' });
      expect(runs.find((r) => r.runId === killed)?.status).toBe('interrupted');
      const next = runs.filter((r) => r.runId > killed).at(-1);
      expect(next?.args.resumeOf).toBe(killed);
      expect(next?.args.signpost).toBe(runs.find((r) => r.runId === killed)?.args.signpost);
    } finally {
      await w.close();
    }
  });
});
