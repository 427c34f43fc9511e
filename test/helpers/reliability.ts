/**
 * Shared by the reliability suite (test/reliability): the reduced/full switch, exact-equality assertions against
 * the source, and a sync run in a child process that can be killed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { compareStream } from './harness.js';

/** `EVSYNC_RELIABILITY=full` runs the fuller form (more seeds, trials and streams); default is the reduced one. */
export const FULL = process.env.EVSYNC_RELIABILITY === 'full';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The warehouse's current rows of each stream equal the source's records, value by value. */
export async function expectEqualToSource(
  sim: Simulator,
  warehouse: Warehouse,
  streams: readonly string[],
): Promise<void> {
  for (const name of streams) {
    const diff = await compareStream(sim, warehouse, name);
    expect({
      stream: name,
      missing: diff.missing.slice(0, 5),
      extra: diff.extra.slice(0, 5),
      changed: diff.changed.slice(0, 5),
      counts: [diff.missing.length, diff.extra.length, diff.changed.length],
    }).toEqual({ stream: name, missing: [], extra: [], changed: [], counts: [0, 0, 0] });
  }
}

/** `expectEqualToSource` on the warehouse file at `db`, opened for the comparison and closed after it. */
export async function expectFileEqualToSource(sim: Simulator, db: string, streams: readonly string[]): Promise<void> {
  const warehouse = await Warehouse.open(db);
  try {
    await expectEqualToSource(sim, warehouse, streams);
  } finally {
    await warehouse.close();
  }
}

/** A deterministic generator (mulberry32), so a failing random trial can be replayed from its seed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYNC_CHILD = join(ROOT, 'test', 'reliability', 'fixtures', 'sync-child.ts');

/** The JS stack and the open libuv handles from a Node diagnostic report. */
function hangSummary(reportText: string): string {
  if (!reportText) return '(no diagnostic report)';
  try {
    const r = JSON.parse(reportText) as {
      javascriptStack?: { message?: string; stack?: string[] };
      libuv?: { type?: string; is_active?: boolean; remoteEndpoint?: unknown }[];
    };
    const handles = (r.libuv ?? [])
      .filter((h) => h.is_active)
      .map((h) => `${h.type}${h.remoteEndpoint ? ` ${JSON.stringify(h.remoteEndpoint)}` : ''}`);
    return `stack: ${(r.javascriptStack?.stack ?? []).slice(0, 12).join(' | ')}\nactive handles: ${handles.join(', ')}`;
  } catch {
    return reportText.slice(0, 2000);
  }
}

export interface ChildSyncResult {
  status: string;
  credits: { list: number; other: number; token: number; total: number };
  errors: string[];
}

export interface ChildRun {
  child: ChildProcess;
  /** Resolves with the exit code (null when killed) and the final JSON line, if one was printed. */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; result: ChildSyncResult | null }>;
  /** Resolves when the child has reported this many loaded pages (never, if it finishes first). */
  pages(n: number): Promise<void>;
}

/**
 * `node --import tsx test/reliability/fixtures/sync-child.ts <baseUrl> <clientId> <secret> <db> <streams> <mode>`:
 * a sync in its own process, printing `page <n>` after each loaded page and one JSON line at the end.
 */
export function spawnSyncChild(args: {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  db: string;
  streams: string;
  mode?: 'backfill' | 'incremental';
  /** The child is killed and the run fails when it has not ended by then. Default 90 s. */
  timeoutMs?: number;
}): ChildRun {
  const reports = mkdtempSync(join(tmpdir(), 'evsync-child-report-'));
  const child = spawn(
    process.execPath,
    [
      // On SIGUSR2 the child writes a diagnostic report (JS stack, open handles): how a hang is explained.
      '--report-on-signal',
      '--report-signal=SIGUSR2',
      `--report-directory=${reports}`,
      '--import',
      'tsx',
      SYNC_CHILD,
      args.baseUrl,
      args.clientId,
      args.clientSecret,
      args.db,
      args.streams,
      args.mode ?? 'backfill',
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let loaded = 0;
  let result: ChildSyncResult | null = null;
  const waiters: { n: number; resolve: () => void }[] = [];
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const lines = createInterface({ input: child.stdout! });
  lines.on('line', (line) => {
    if (line.startsWith('page ')) {
      loaded += 1;
      for (const w of waiters.filter((x) => x.n <= loaded)) w.resolve();
    } else if (line.startsWith('{')) {
      result = JSON.parse(line) as ChildSyncResult;
    }
  });
  // A child that never ends is a finding (a hang), not a test timeout: kill it and say where it was.
  let hung = false;
  const watchdog = setTimeout(() => {
    hung = true;
    child.kill('SIGUSR2');
    setTimeout(() => child.kill('SIGKILL'), 2000).unref();
  }, args.timeoutMs ?? 90_000);
  const done = once(child, 'exit').then(([code, signal]) => {
    clearTimeout(watchdog);
    const report = readdirSync(reports).map((f) => readFileSync(join(reports, f), 'utf8'))[0] ?? '';
    rmSync(reports, { recursive: true, force: true });
    if (hung) {
      throw new Error(
        `sync child hung: killed after ${args.timeoutMs ?? 90_000} ms, ${loaded} pages; ${stderr.slice(-2000)}\n${hangSummary(report)}`,
      );
    }
    if (code !== 0 && code !== 3 && signal === null) {
      throw new Error(`sync child exited with ${String(code)}: ${stderr.slice(-2000)}`);
    }
    return { code: code as number | null, signal: signal as NodeJS.Signals | null, result };
  });
  return {
    child,
    done,
    pages: (n) =>
      new Promise<void>((resolve) => {
        if (loaded >= n) resolve();
        else waiters.push({ n, resolve });
      }),
  };
}
