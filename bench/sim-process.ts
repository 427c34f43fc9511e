/**
 * The simulator in a process of its own (bench/sim-child.ts), so that serving pages does not share
 * an event loop with the code being measured. Control endpoints give counters and ground truth over HTTP.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { CallCounters, SimulatorSize } from '../src/simulator/index.js';

/** dist/bench/sim-child.js (built: `npm run bench` builds first): the CLI's `simulator` command, every size. */
const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'sim-child.js');

export interface SimAccount {
  clientId: string;
  clientSecret: string;
  encoded: string;
}

export interface SimProcess {
  baseUrl: string;
  accounts: SimAccount[];
  pid: number;
  counters(account?: number): Promise<CallCounters>;
  resetCounters(): Promise<void>;
  stop(): Promise<void>;
}

export interface SimProcessOptions {
  size: SimulatorSize;
  seed?: number;
  /** `<credits>/<seconds>`. */
  rateLimit?: string;
  faults?: string;
}

function isStartLine(v: unknown): v is { baseUrl: string; accounts: SimAccount[] } {
  if (!v || typeof v !== 'object') return false;
  const o = v as { baseUrl?: unknown; accounts?: unknown };
  return typeof o.baseUrl === 'string' && Array.isArray(o.accounts);
}

export async function startSimProcess(o: SimProcessOptions): Promise<SimProcess> {
  const args = [CHILD, '--size', o.size, '--seed', String(o.seed ?? 1)];
  if (o.rateLimit) args.push('--rate-limit', o.rateLimit);
  if (o.faults) args.push('--faults', o.faults);
  const child: ChildProcess = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  // A simulator left behind would keep the bench (and the machine) busy: it goes when this process goes.
  const killChild = () => child.kill('SIGKILL');
  process.once('exit', killChild);
  let parsed: { baseUrl: string; accounts: SimAccount[] };
  try {
    const lines = createInterface({ input: child.stdout! });
    const first = await Promise.race([
      once(lines, 'line').then(([line]) => String(line)),
      once(child, 'exit').then(([code]) => {
        throw new Error(`simulator process exited with ${String(code)} before listening`);
      }),
    ]);
    lines.close();
    const value: unknown = JSON.parse(first);
    if (!isStartLine(value)) throw new Error(`simulator process printed an unexpected line: ${first.slice(0, 200)}`);
    parsed = value;
  } catch (err) {
    killChild();
    process.off('exit', killChild);
    throw err;
  }
  const control = parsed.baseUrl.replace(/\/v1$/, '/_control');
  const pid = child.pid ?? -1;
  return {
    baseUrl: parsed.baseUrl,
    accounts: parsed.accounts,
    pid,
    async counters(account = 0) {
      const res = await fetch(`${control}/counters?account=${account}`);
      return (await res.json()) as CallCounters;
    },
    async resetCounters() {
      await fetch(`${control}/counters/reset`, { method: 'POST' });
    },
    async stop() {
      process.off('exit', killChild);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
