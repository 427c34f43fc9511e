/**
 * What the daemon scenarios share: an in-process simulator (its ground truth, mutator and delivery journal at hand)
 * with a folder and the environment a user sets, the CLI run against it (backfill, sync, webhooks install), and
 * `evsync serve` in a process of its own, watched through its log and /metrics.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import {
  type CallCounters,
  type Simulator,
  type SimulatorSize,
  startSimulator,
  type WebhookDeliveryOptions,
} from '../src/simulator/index.js';
import { capturedObjects } from '../src/sync/capture/objects.js';
import { Warehouse } from '../src/warehouse/index.js';
import { changeSteadily as changeStreamsSteadily } from './change-stream.js';
import { type CliOutcome, cli, evsyncEnv, runCli, stopChild, waitForLog } from './cli-process.js';
import { type TempDir, tempDir } from './lib.js';

/** The streams whose changes the service pushes (the catalogue's `webhook` fields). */
export const CAPTURED = capturedObjects().map((c) => c.stream.name);
const SECRET = 'bench-daemon-secret-3f9a0c7e51b2d846';
/** Never fires during a scenario: the runs seen are the catch-ups at start. */
const QUIET_CRON = '0 3 * * *';
/**
 * Far above what a scenario spends: the figures are the credits counted, not the time spent waiting for windows
 * (a medium catch-up is more than one 2,000-credit window).
 */
const UNTHROTTLED = { credits: 10_000_000, windowSeconds: 600 };

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface DaemonBench {
  sim: Simulator;
  tmp: TempDir;
  db: string;
  env: Record<string, string>;
  /** `evsync <args>` run to its end in the scenario's folder; throws unless it exits `expect` (default 0). */
  evsync(args: string[], expect?: number | null): Promise<CliOutcome>;
  close(): Promise<void>;
}

export async function startDaemonBench(
  size: SimulatorSize,
  webhookDelivery: WebhookDeliveryOptions = {},
): Promise<DaemonBench> {
  const sim = await startSimulator({ size, seed: 1, rateLimit: UNTHROTTLED, webhookDelivery });
  const tmp = tempDir('evsync-daemon-');
  const db = tmp.path('warehouse.duckdb');
  const env = evsyncEnv(sim, db, SECRET);
  return {
    sim,
    tmp,
    db,
    env,
    async evsync(args, expect = 0) {
      const r = await runCli(args, env, tmp.dir);
      if (expect !== null && r.code !== expect) {
        throw new Error(`evsync ${args[0]} exited ${String(r.code)}: ${r.stderr.slice(-2000)}`);
      }
      return r;
    },
    async close() {
      await sim.close();
      tmp.remove();
    },
  };
}

export interface Serve {
  child: ChildProcess;
  pid: number;
  url: string;
  metrics: string;
  logFile: string;
  /** Resolves once its log says the catch-up at start completed. */
  caughtUp(): Promise<void>;
  /** Resolves once every journaled delivery is applied (/metrics). */
  applied(): Promise<void>;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

/** `evsync serve` on the captured streams, on 127.0.0.1:0, in a process of its own. */
export async function startServe(b: DaemonBench, name: string, extra: string[] = []): Promise<Serve> {
  const logFile = b.tmp.path(`${name}.log`);
  const argv = ['serve', '--listen', '127.0.0.1:0', '--streams', CAPTURED.join(','), '--cron', QUIET_CRON, '--json'];
  const child = cli([...argv, ...extra], b.env, b.tmp.dir, logFile);
  const line = await Promise.race([
    once(createInterface({ input: child.stdout! }), 'line').then(([l]) => String(l)),
    once(child, 'exit').then(() => {
      throw new Error(`evsync serve exited before listening (see ${logFile})`);
    }),
  ]);
  child.stdout!.resume();
  const info = JSON.parse(line) as { listening: string; metrics: string };
  return {
    child,
    pid: child.pid ?? -1,
    url: info.listening,
    metrics: info.metrics,
    logFile,
    caughtUp: () => waitForLog(logFile, /catch-up complete/, child),
    async applied() {
      while (!(await (await fetch(info.metrics)).text()).includes('\nevsync_webhook_pending 0\n')) await sleep(100);
    },
    stop: () => stopChild(child),
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** `evsync webhooks install` for the captured streams, delivering to `url`. */
export async function installWebhooks(b: DaemonBench, url: string): Promise<void> {
  await b.evsync(['webhooks', 'install', '--url', url, '--streams', CAPTURED.join(',')]);
}

/** Calls charged between two readings of the simulator's counters. */
export function spent(before: CallCounters, after: CallCounters): { list: number; other: number; credits: number } {
  return {
    list: after.listCalls - before.listCalls,
    other: after.otherCalls + after.tokenCalls - before.otherCalls - before.tokenCalls,
    credits: after.credits - before.credits,
  };
}

/** Runs `fn` on the warehouse opened read-only (no daemon may hold it then). */
export async function withWarehouse<T>(db: string, fn: (w: Warehouse) => Promise<T>): Promise<T> {
  const w = await Warehouse.open(db, { readOnly: true });
  try {
    return await fn(w);
  } finally {
    await w.close();
  }
}

/** Changes at the service for the captured streams at `perSecond` for `seconds` of real time; resolves with the count. */
export function changeSteadily(sim: Simulator, perSecond: number, seconds: number): Promise<number> {
  return changeStreamsSteadily(sim, perSecond, seconds, CAPTURED);
}
