/**
 * `evsync serve` / `evsync schedule` as a real process (`node --import tsx src/cli/main.ts ...`), so a test can
 * hold the warehouse from another process, signal it, kill it, and see what a user sees on its stderr.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { socketPathFor } from '../../src/daemon/socket.js';
import { waitForText } from '../cli/helpers.js';
import { ROOT } from '../helpers/reliability.js';

const MAIN = join(ROOT, 'src', 'cli', 'main.ts');

export interface DaemonProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Everything it printed on stderr so far. */
  stderr(): string;
  /** The delivery URL (serve only). */
  url: string | null;
  /** The admin address (status page, /status.json, /metrics), as it said at start. */
  admin: string | null;
  /** Resolves with how it ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then the exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The environment of the daemon: the machine's (PATH...) without any EVSYNC_* of the developer, then `env`. */
function daemonEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('EVSYNC_')));
  return { ...base, NO_COLOR: '1', ...env };
}

/** Starts the daemon and resolves once it says its socket answers (and, for serve, where it listens). */
export async function spawnDaemon(argv: string[], env: Record<string, string>): Promise<DaemonProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...argv], {
    cwd: ROOT,
    env: daemonEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stderr?.on('data', (d: Buffer) => {
    text += d.toString();
  });
  child.stdout?.resume();
  const exited = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  let ended = false;
  void exited.then(() => {
    ended = true;
  });
  await waitForText(() => (ended ? `${text}\n[exited]` : text), /answered here \(socket|\[exited\]/);
  if (ended) throw new Error(`the daemon exited at start: ${text}`);
  const url = /listening on (http:\/\/\S+\/webhooks)/.exec(text)?.[1] ?? null;
  // The default port may be another daemon's: then it says where it listens instead.
  const admin =
    /status page is on (http:\/\/[^/\s]+)\//.exec(text)?.[1] ??
    /status page on (http:\/\/[^/\s]+)\//.exec(text)?.[1] ??
    null;
  return {
    child,
    pid: child.pid ?? 0,
    stderr: () => text,
    url,
    admin,
    exited,
    stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A query sent on the daemon's socket by hand: the test decides when the client goes away (`socket.destroy()`). */
export function rawQuery(db: string, sql: string, o: { timeoutMs?: number } = {}): Socket {
  const socket = connect(socketPathFor(db));
  socket.on('error', () => undefined);
  socket.write(`${JSON.stringify({ op: 'query', sql, form: 'json', allowRead: [], ...o })}\n`);
  return socket;
}

/** The answer a raw query's socket receives (null when the daemon closed it without one). */
export function answerOf(socket: Socket): Promise<{ ok: boolean; error?: string } | null> {
  return new Promise((resolve) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('close', () => {
      const line = text.split('\n')[0] ?? '';
      try {
        resolve(line ? (JSON.parse(line) as { ok: boolean; error?: string }) : null);
      } catch {
        resolve(null);
      }
    });
  });
}

export { childrenOf } from '../../bench/processes.js';

/** What a process is, from /proc: its state and command line (null when no such process exists). */
export function processInfo(pid: number): { state: string; command: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    return { state: stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '?', command };
  } catch {
    return null;
  }
}

/**
 * Daemons a test file starts, each killed after its test if it still runs (a failed assertion must not leave a
 * process holding a warehouse). `start` spawns one and keeps it for the cleanup.
 */
export function useDaemons(): { start(argv: string[], env: Record<string, string>): Promise<DaemonProcess> } {
  const started: DaemonProcess[] = [];
  afterEach(async () => {
    for (const d of started.splice(0)) {
      if (d.child.exitCode === null && d.child.signalCode === null) {
        d.child.kill('SIGKILL');
        await d.exited;
      }
    }
  });
  return {
    async start(argv, env) {
      const d = await spawnDaemon(argv, env);
      started.push(d);
      return d;
    },
  };
}

/** Checks `condition` until it holds: the test's own timeout bounds the wait; nothing here measures time. */
export async function eventually(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 50));
}
