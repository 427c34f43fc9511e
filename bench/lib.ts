/**
 * What every scenario shares: the result shape written to bench/results/latest.json, the options a run was started
 * with, and small helpers (timing, temporary databases, logging to stderr so stdout stays the table).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type Comparison = '==' | '<=' | '<' | '>=';

/** One measured figure. `target` and `op` are null for figures shown for contrast only (they always pass). */
export interface ScenarioResult {
  name: string;
  metric: string;
  value: number;
  target: number | null;
  op: Comparison | null;
  ok: boolean;
  /** What the figure was computed from (spent and bound, sizes, timings), for a reader checking it. */
  detail?: string;
}

export interface BenchOptions {
  quick: boolean;
  log: (message: string) => void;
}

/** Ratios are compared at 2 decimals when the target is an exact 1.00: 1.004 is reported, not rounded to pass. */
export function figure(
  name: string,
  metric: string,
  value: number,
  target: number | null,
  op: Comparison | null,
  detail?: string,
): ScenarioResult {
  let ok = true;
  if (target !== null && op !== null) {
    if (op === '==') ok = value === target;
    else if (op === '<=') ok = value <= target;
    else if (op === '>=') ok = value >= target;
    else ok = value < target;
  }
  return { name, metric, value, target, op, ok, ...(detail ? { detail } : {}) };
}

export function round(value: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export interface TempDir {
  dir: string;
  path(name: string): string;
  remove(): void;
}

export function tempDir(prefix = 'evsync-bench-'): TempDir {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    dir,
    path: (name) => join(dir, name),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export function stderrLog(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** The figures as a table for a person: ok or MISS, the scenario, the metric, its value and target. */
export function formatTable(results: readonly ScenarioResult[]): string {
  const rows = results.map((r) => [
    r.ok ? 'ok' : 'MISS',
    r.name,
    r.metric,
    String(r.value),
    r.target === null ? '-' : `${r.op === '==' ? '=' : r.op} ${r.target}`,
  ]);
  const head = ['', 'scenario', 'metric', 'value', 'target'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/**
 * Runs a bench child (`node <args>`: a process of its own, so its CPU time and memory are its alone); its last
 * stdout line is its JSON report.
 */
export async function jsonChild<T>(args: string[]): Promise<T> {
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const [code] = await once(proc, 'exit');
  const line = out.trim().split('\n').pop() ?? '';
  if (code !== 0 || !line.startsWith('{')) throw new Error(`${args.join(' ')} exited with ${String(code)}`);
  return JSON.parse(line) as T;
}
