/**
 * Scenarios 4 and 5: the local pipeline. A backfill of registrants from the unthrottled simulator (120k rows, every
 * event of `large` (1M) and of `xlarge` (5M) in the full run; 10k and 120k in the quick one) against merely
 * downloading the same pages with the same concurrency; the cost per row and the syncing process's peak RSS at each
 * size. The simulator, the sync and the baseline each run in their own process:
 * the simulator so that serving does not share the measured event loop, the measured sides so that each peak RSS
 * (`process.resourceUsage().maxRSS`) is its own.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScopeCounter } from './bounds.js';
import { type BenchOptions, figure, round, type ScenarioResult, seconds, tempDir } from './lib.js';
import type { ChildReport } from './pipeline-child.js';
import { simulatorTruth } from './sim-client.js';
import { type SimProcess, startSimProcess } from './sim-process.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'pipeline-child.js');
const CONCURRENCY = 2;

export async function runChild(sim: SimProcess, args: string[]): Promise<ChildReport> {
  const account = sim.accounts[0]!;
  const child = spawn(process.execPath, [CHILD, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      EVSYNC_BASE_URL: sim.baseUrl,
      EVSYNC_CLIENT_ID: account.clientId,
      EVSYNC_CLIENT_SECRET: account.clientSecret,
      EVSYNC_CREDENTIALS: account.encoded,
    },
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const [code] = await once(child, 'exit');
  const line = out.trim().split('\n').pop() ?? '';
  if (code !== 0 || !line.startsWith('{')) throw new Error(`pipeline child ${args[0]} exited with ${String(code)}`);
  return JSON.parse(line) as ChildReport;
}

/** The first events (in id order) whose registrants add up to at least `target`; all of them when target is null. */
export function pickEvents(counts: [number, number][], target: number | null): { ids: number[]; rows: number } {
  const ids: number[] = [];
  let rows = 0;
  for (const [id, n] of counts) {
    if (target !== null && rows >= target) break;
    if (n === 0) continue;
    ids.push(id);
    rows += n;
  }
  return { ids, rows };
}

interface Measured {
  rows: number;
  sync: ChildReport;
  baseline: ChildReport;
}

async function measure(sim: SimProcess, label: string, events: number[] | null, o: BenchOptions): Promise<Measured> {
  const tmp = tempDir();
  try {
    const requests = tmp.path('requests.txt');
    const eventArgs = events ? ['--events', events.join(',')] : [];
    o.log(`pipeline: sync of registrants, ${label}`);
    const sync = await runChild(sim, [
      'sync',
      '--db',
      tmp.path('bench.duckdb'),
      '--requests',
      requests,
      '--concurrency',
      String(CONCURRENCY),
      ...eventArgs,
    ]);
    if (sync.status !== 'done') throw new Error(`pipeline: sync ended ${sync.status}`);
    o.log(`pipeline: baseline download of the same ${sync.pages} pages`);
    const baseline = await runChild(sim, ['baseline', '--requests', requests, '--concurrency', String(CONCURRENCY)]);
    return { rows: sync.rows, sync, baseline };
  } finally {
    tmp.remove();
  }
}

const mb = (kb: number) => round(kb / 1024, 1);

interface Size {
  label: string;
  rows: number;
  sync: ChildReport;
  baseline: ChildReport;
}

/** Per-event registrant counts of a simulator's first account, in event id order. */
export async function eventCounts(sim: SimProcess): Promise<[number, number][]> {
  const events = { records: (await simulatorTruth(sim.baseUrl, 'events')) as { id: number }[] };
  const counter = new ScopeCounter(sim.baseUrl, sim.accounts[0]!.encoded);
  const counts: [number, number][] = [];
  for (const e of events.records) counts.push([e.id, await counter.count('registrants', e.id)]);
  return counts;
}

/**
 * Quick: ~10k and ~100k rows of the `large` simulator. Full: ~100k (120k) and every event of `large` (1M), then
 * every event of `xlarge` (5M), each simulator in a process of its own.
 */
async function measureSizes(o: BenchOptions): Promise<Size[]> {
  const out: Size[] = [];
  const large = await startSimProcess({ size: 'large', rateLimit: '10000000/600' });
  try {
    const counts = await eventCounts(large);
    const targets: (number | null)[] = o.quick ? [10_000, 100_000] : [100_000, null];
    for (const target of targets) {
      const pick = pickEvents(counts, target);
      const label =
        target === null
          ? `every event of large (${pick.ids.length})`
          : `~${target / 1000}k rows (${pick.ids.length} events)`;
      const m = await measure(large, label, target === null ? null : pick.ids, o);
      out.push({ label, ...m });
    }
  } finally {
    await large.stop();
  }
  if (o.quick) return out;
  const xlarge = await startSimProcess({ size: 'xlarge', rateLimit: '10000000/600' });
  try {
    const label = 'every event of xlarge';
    const m = await measure(xlarge, label, null, o);
    out.push({ label, ...m });
  } finally {
    await xlarge.stop();
  }
  return out;
}

export async function pipelineScenarios(o: BenchOptions): Promise<ScenarioResult[]> {
  const sizes = await measureSizes(o);
  const rowsPerSecond = (rows: number, ms: number) => Math.round(rows / (ms / 1000));
  const usPerRow = (s: Size) => (s.sync.wallMs * 1000) / s.rows;
  const out: ScenarioResult[] = [];
  for (const s of sizes) {
    const large = s.rows >= 1_000_000;
    out.push(
      figure(
        `local pipeline: backfill ${s.rows} registrants vs download`,
        'sync wall / download wall',
        round(s.sync.wallMs / s.baseline.wallMs, 2),
        large || s === sizes[sizes.length - 1] ? 1.5 : null,
        large || s === sizes[sizes.length - 1] ? '<=' : null,
        `${s.label}: sync ${seconds(s.sync.wallMs)}, download ${seconds(s.baseline.wallMs)} of the same ` +
          `${s.baseline.pages} pages (${round(s.baseline.bytes / 1e6, 0)} MB), concurrency ${CONCURRENCY}; ` +
          `${rowsPerSecond(s.rows, s.sync.wallMs)} rows/s (download alone ${rowsPerSecond(s.rows, s.baseline.wallMs)}), ` +
          `${round(usPerRow(s), 1)} us per row`,
      ),
    );
  }
  const first = sizes[0]!;
  const last = sizes[sizes.length - 1]!;
  // RSS at the largest size against the 1M run (full) or the smaller run (quick).
  const reference = sizes.length > 2 ? sizes[1]! : first;
  out.push(
    figure(
      `local pipeline: cost per row at ${last.rows} rows vs ${first.rows} rows`,
      'ratio',
      round(usPerRow(last) / usPerRow(first), 2),
      1.1,
      '<=',
      sizes.map((s) => `${s.rows} rows: ${round(usPerRow(s), 1)} us/row (sync wall / rows)`).join('; '),
    ),
  );
  out.push(
    figure(
      `peak RSS: backfill of ${last.rows} rows`,
      'MB',
      mb(last.sync.maxRssKb),
      400,
      '<',
      `syncing process maxRSS; at its end rss ${last.sync.endMemoryMb.rss} MB of which V8 heap ${last.sync.endMemoryMb.heapUsed} MB, ` +
        `external ${last.sync.endMemoryMb.external} MB (the rest is native: DuckDB); the download alone peaked at ` +
        `${mb(last.baseline.maxRssKb)} MB; ` +
        sizes.map((s) => `${s.rows} rows: ${mb(s.sync.maxRssKb)} MB`).join(', '),
    ),
  );
  out.push(
    figure(
      `peak RSS: ${last.rows} rows vs ${reference.rows} rows`,
      'ratio',
      round(last.sync.maxRssKb / reference.sync.maxRssKb, 2),
      1.1,
      '<=',
      `${mb(last.sync.maxRssKb)} MB vs ${mb(reference.sync.maxRssKb)} MB`,
    ),
  );
  return out;
}

/**
 * One event of 400,000 registrants (simulator size `bigevent`) backfilled by the engine with the bin's memory
 * settings: the syncing process's peak RSS (issue 26: < 400 MB). Run alone: `npm run bench -- --only bigevent`.
 */
export async function bigEventScenarios(o: BenchOptions): Promise<ScenarioResult[]> {
  const sim = await startSimProcess({ size: 'bigevent', rateLimit: '10000000/600' });
  const tmp = tempDir();
  try {
    const counts = await eventCounts(sim);
    const [event, registrants] = counts.reduce((a, b) => (b[1] > a[1] ? b : a));
    o.log(`bigevent: backfill of event ${event}'s ${registrants} registrants`);
    const args = ['sync', '--db', tmp.path('bench.duckdb'), '--requests', tmp.path('requests.txt')];
    const sync = await runChild(sim, [...args, '--concurrency', String(CONCURRENCY), '--events', String(event)]);
    if (sync.status !== 'done') throw new Error(`bigevent: sync ended ${sync.status}`);
    return [
      figure(
        `peak RSS: backfill of one event of ${sync.rows} registrants`,
        'MB',
        mb(sync.maxRssKb),
        400,
        '<',
        `syncing process maxRSS; at its end rss ${sync.endMemoryMb.rss} MB of which V8 heap ${sync.endMemoryMb.heapUsed} MB; ` +
          `sync ${seconds(sync.wallMs)} wall, ${sync.pages} pages, concurrency ${CONCURRENCY}`,
      ),
    ];
  } finally {
    tmp.remove();
    await sim.stop();
  }
}

/** One sync of every event of a simulator size, alone (no baseline download): the syncing process's report. */
async function backfillAll(size: 'large' | 'xlarge', o: BenchOptions): Promise<ChildReport> {
  const sim = await startSimProcess({ size, rateLimit: '10000000/600' });
  const tmp = tempDir();
  try {
    o.log(`backfill: every event of ${size}`);
    const args = ['sync', '--db', tmp.path('bench.duckdb'), '--requests', tmp.path('requests.txt')];
    const sync = await runChild(sim, [...args, '--concurrency', String(CONCURRENCY)]);
    if (sync.status !== 'done') throw new Error(`backfill: sync of ${size} ended ${sync.status}`);
    return sync;
  } finally {
    tmp.remove();
    await sim.stop();
  }
}

/**
 * The backfills alone (issue 26: peak RSS < 400 MB at 5M rows with the bin's settings, <= 1.15x from 1M): every
 * event of `large` (1M) and of `xlarge` (5M) synced by the engine, without the baseline download the pipeline
 * scenarios add. Run alone: `npm run bench -- --only backfill`.
 */
export async function bigBackfillScenarios(o: BenchOptions): Promise<ScenarioResult[]> {
  const oneM = await backfillAll('large', o);
  const fiveM = await backfillAll('xlarge', o);
  const line = (s: ChildReport) =>
    `${s.rows} rows: peak ${mb(s.maxRssKb)} MB, at its end rss ${s.endMemoryMb.rss} MB of which V8 heap ` +
    `${s.endMemoryMb.heapUsed} MB; ${seconds(s.wallMs)} wall, ${s.pages} pages, ${Math.round((s.wallMs * 1000) / s.rows)} us wall per row`;
  return [
    figure(
      `peak RSS: backfill of ${fiveM.rows} registrants (every event of xlarge), alone`,
      'MB',
      mb(fiveM.maxRssKb),
      400,
      '<',
      `syncing process maxRSS, concurrency ${CONCURRENCY}; ${line(fiveM)}`,
    ),
    figure(
      `peak RSS: backfill of ${fiveM.rows} rows vs ${oneM.rows} rows, alone`,
      'ratio',
      round(fiveM.maxRssKb / oneM.maxRssKb, 2),
      1.15,
      '<=',
      `${line(oneM)}; ${line(fiveM)}`,
    ),
  ];
}
