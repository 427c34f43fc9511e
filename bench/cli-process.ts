/**
 * The evsync CLI as a process of its own, the way a user runs it: from source under tsx when the bench runs from
 * source, else the compiled dist/src/cli/main.js (as `npm run bench` runs it). Its stderr goes to a file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Simulator } from '../src/simulator/index.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const ROOT = FROM_SOURCE ? join(HERE, '..') : join(HERE, '..', '..');

export function cli(args: string[], env: Record<string, string>, cwd: string, logFile: string): ChildProcess {
  // The child runs in a temporary folder: tsx is named by its resolved location, not looked up from there.
  const main = FROM_SOURCE
    ? ['--import', import.meta.resolve('tsx'), join(ROOT, 'src/cli/main.ts')]
    : [join(ROOT, 'dist/src/cli/main.js')];
  const child = spawn(process.execPath, [...main, ...args], {
    cwd,
    env: { ...process.env, ...env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.pipe(createWriteStream(logFile));
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  child.once('exit', () => process.off('exit', kill));
  return child;
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

/** The first line `evsync serve --json` prints: where it listens for deliveries and serves its metrics. */
export async function serveListening(
  child: ChildProcess,
  logFile: string,
): Promise<{ listening: string; metrics: string }> {
  const line = await Promise.race([
    once(createInterface({ input: child.stdout! }), 'line').then(([l]) => String(l)),
    once(child, 'exit').then(() => {
      throw new Error(`evsync serve exited before listening (see ${logFile})`);
    }),
  ]);
  return JSON.parse(line) as { listening: string; metrics: string };
}

/** The environment of an evsync process working `db` against the simulator's first account. */
export function simulatorEnv(sim: Simulator, db: string, webhookSecret: string): Record<string, string> {
  const a = sim.accounts[0]!;
  return {
    EVSYNC_BASE_URL: sim.baseUrl,
    EVSYNC_CLIENT_ID: a.clientId,
    EVSYNC_CLIENT_SECRET: a.clientSecret,
    EVSYNC_DB: db,
    EVSYNC_WEBHOOK_SECRET: webhookSecret,
  };
}
