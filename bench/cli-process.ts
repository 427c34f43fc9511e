/**
 * The evsync CLI as a user runs it, from a bench: a long-running command (serve, schedule) in a process of its own
 * with its stderr in a log file, or a one-shot command run to its end. From bench/*.ts (tsx) it runs src/cli/main.ts,
 * from dist/bench/*.js the built dist/src/cli/main.js.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const FROM_SOURCE = import.meta.url.endsWith('.ts');
export const ROOT = FROM_SOURCE ? join(HERE, '..') : join(HERE, '..', '..');

function mainArgs(): string[] {
  // The child runs in a temporary folder: tsx is named by its resolved location, not looked up from there.
  return FROM_SOURCE
    ? ['--import', import.meta.resolve('tsx'), join(ROOT, 'src/cli/main.ts')]
    : [join(ROOT, 'dist/src/cli/main.js')];
}

/** The environment a user sets for evsync against the simulator's first account (`sim.accounts[0]`). */
export function evsyncEnv(
  sim: { baseUrl: string; accounts: readonly { clientId: string; clientSecret: string }[] },
  db: string,
  webhookSecret: string,
): Record<string, string> {
  const a = sim.accounts[0]!;
  return {
    EVSYNC_BASE_URL: sim.baseUrl,
    EVSYNC_CLIENT_ID: a.clientId,
    EVSYNC_CLIENT_SECRET: a.clientSecret,
    EVSYNC_DB: db,
    EVSYNC_WEBHOOK_SECRET: webhookSecret,
  };
}

/** Starts `evsync <args>`; its stderr goes to `logFile`, its stdout is the caller's. Killed if the bench exits. */
export function cli(args: string[], env: Record<string, string>, cwd: string, logFile: string): ChildProcess {
  const child = spawn(process.execPath, [...mainArgs(), ...args], {
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

/** SIGTERM, then the exit. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

export interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `evsync <args>` to its end. */
export async function runCli(args: string[], env: Record<string, string>, cwd: string): Promise<CliOutcome> {
  const started = Date.now();
  const child = spawn(process.execPath, [...mainArgs(), ...args], {
    cwd,
    env: { ...process.env, ...env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr, ms: Date.now() - started };
}

/** Waits until the log file holds `pattern` (a daemon's progress lines), or fails when `child` exits first. */
export async function waitForLog(logFile: string, pattern: RegExp, child: ChildProcess): Promise<void> {
  for (;;) {
    let text = '';
    try {
      text = readFileSync(logFile, 'utf8');
    } catch {
      // Not written yet.
    }
    if (pattern.test(text)) return;
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the evsync process exited before ${String(pattern)}; see ${logFile}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
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
