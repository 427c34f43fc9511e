/**
 * The measured side of the archive scenario's rebuild (bench/archive.ts), in a process of its own so its CPU time and
 * peak RSS are the rebuild's alone: opens the warehouse at `--db` (a copy: it is changed) as the binary would, runs
 * `rebuild` of `--streams` (not a dry run: replay into the scratch, compare, swap in), closes. Prints one JSON line.
 *
 *   node dist/bench/archive-rebuild-child.js --db <copy.duckdb> [--streams registrants] [--dry-run]
 *
 * `--dry-run` replays and compares without the swap: to tell which of the two a failure or the peak is in.
 */
// First, as the binary does: Node's heap policy while the heap is small (src/cli/apply-heap-policy.ts).
import '../src/cli/apply-heap-policy.js';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { rebuild } from '../src/sync/rebuild/rebuild.js';
import type { TableChange } from '../src/warehouse/index.js';
import { Warehouse } from '../src/warehouse/index.js';

export interface RebuildReport {
  streams: string[];
  /** The rebuild call alone (replay, compare, swap), and open to close of the warehouse around it. */
  rebuild: { wallMs: number; cpuMs: number };
  total: { wallMs: number; cpuMs: number };
  /** The process's peak RSS (VmHWM: the kernel's, nothing missed between samples) and the highest sampled per phase. */
  peakRssMb: number;
  peakByPhaseMb: Record<Phase, number>;
  /** Seconds into the rebuild when the replay's progress reported, to see where the time goes. */
  progress: { atMs: number; seq: number; pages: number; records: number; rssMb: number }[];
  /** Into the rebuild when the last op was replayed (then: compare and swap), null when it was not reached. */
  replayMs: number | null;
  replayed: { seq: number; last: number; pages: number; records: number };
  /** The rebuild failed: in which phase, with what (the figures above are up to the failure). */
  error: string | null;
  changes: TableChange[];
  applied: boolean;
  rowsAfter: Record<string, number>;
  /** The live warehouse's close failed with this (its archive's roll-up), or null. */
  closeError: string | null;
}

type Phase = 'open' | 'replay' | 'compare + swap' | 'close';

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    streams: { type: 'string', default: 'registrants' },
    'dry-run': { type: 'boolean', default: false },
  },
});
if (!values.db) throw new Error('--db is required');
const streams = values.streams.split(',');

const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};
/** VmHWM from /proc (kB): the peak of the resident set, DuckDB's native memory included. */
const vmHwmMb = () => {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : 0;
};
let phase: Phase = 'open';
const peakByPhaseMb: Record<Phase, number> = { open: 0, replay: 0, 'compare + swap': 0, close: 0 };
// The sample says in which phase the peak falls; VmHWM gives the peak itself.
const sampler = setInterval(() => {
  peakByPhaseMb[phase] = Math.max(peakByPhaseMb[phase], Math.round(process.memoryUsage.rss() / 1_048_576));
}, 20);

const w0 = performance.now();
const c0 = cpuMs();
const live = await Warehouse.open(values.db);
const progress: RebuildReport['progress'] = [];
phase = 'replay';
const r0 = performance.now();
const rc0 = cpuMs();
let lastLogged = 0;
let replayMs: number | null = null;
// A rebuild that fails is reported (its error, how far it got, its time and memory), not thrown: the figures of a
// failed rebuild are what the bench is for.
let error: string | null = null;
let result: Awaited<ReturnType<typeof rebuild>> | null = null;
try {
  result = await rebuild({
    live,
    streams,
    dryRun: values['dry-run'],
    onProgress: (p) => {
      const atMs = Math.round(performance.now() - r0);
      if (p.seq >= p.last) replayMs = atMs;
      if (atMs - lastLogged < 2000 && p.seq < p.last) return;
      lastLogged = atMs;
      const rssMb = Math.round(process.memoryUsage.rss() / 1_048_576);
      progress.push({ atMs, seq: p.seq, pages: p.pages, records: p.records, rssMb });
      process.stderr.write(
        `archive-rebuild-child: ${atMs} ms, op ${p.seq}/${p.last}, ${p.records} records, ${rssMb} MiB\n`,
      );
      // After the last op replayed, rebuild compares and swaps.
      if (p.seq >= p.last) phase = 'compare + swap';
    },
  });
} catch (err) {
  error = `${phase}: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`;
  process.stderr.write(`archive-rebuild-child: the rebuild failed in ${error}\n`);
}
const rebuildTimes = { wallMs: Math.round(performance.now() - r0), cpuMs: Math.round(cpuMs() - rc0) };
const rowsAfter: Record<string, number> = {};
for (const s of streams) {
  rowsAfter[s] = Number((await live.query(`SELECT count(*) AS n FROM "${s}"`)).rows[0]?.n);
}
const last = progress[progress.length - 1];
phase = 'close';
// A failed close (the archive's roll-up) is reported, not thrown: the rebuild's figures above stand without it.
let closeError: string | null = null;
await live.close().catch((err: unknown) => {
  closeError = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? 'failed';
  process.stderr.write(`archive-rebuild-child: the warehouse's close failed: ${closeError}\n`);
});
clearInterval(sampler);
const report: RebuildReport = {
  streams,
  rebuild: rebuildTimes,
  total: { wallMs: Math.round(performance.now() - w0), cpuMs: Math.round(cpuMs() - c0) },
  peakRssMb: vmHwmMb(),
  peakByPhaseMb,
  progress,
  replayMs,
  replayed: result?.replayed ?? {
    seq: last?.seq ?? 0,
    last: 0,
    pages: last?.pages ?? 0,
    records: last?.records ?? 0,
  },
  changes: result?.changes ?? [],
  applied: result?.applied ?? false,
  error,
  rowsAfter,
  closeError,
};
process.stdout.write(`${JSON.stringify(report)}\n`);
