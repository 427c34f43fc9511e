/**
 * Scenarios 4 and 5: the local pipeline. A backfill of registrants from the unthrottled `large` simulator (over a
 * million records in the full run) against merely downloading the same pages with the same concurrency; and the
 * syncing process's peak RSS at two sizes. The simulator, the sync and the baseline each run in their own process:
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
import { type SimProcess, startSimProcess } from './sim-process.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'pipeline-child.js');
const CONCURRENCY = 2;

async function runChild(sim: SimProcess, args: string[]): Promise<ChildReport> {
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
function pickEvents(counts: [number, number][], target: number | null): { ids: number[]; rows: number } {
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

export async function pipelineScenarios(o: BenchOptions): Promise<ScenarioResult[]> {
  const sim = await startSimProcess({ size: 'large', rateLimit: '10000000/600' });
  try {
    const events = (await (await fetch(`${sim.baseUrl.replace(/\/v1$/, '/_control')}/truth?stream=events`)).json()) as {
      records: { id: number }[];
    };
    const counter = new ScopeCounter(sim.baseUrl, sim.accounts[0]!.encoded);
    const counts: [number, number][] = [];
    for (const e of events.records) counts.push([e.id, await counter.count('registrants', e.id)]);
    const smallTarget = o.quick ? 10_000 : 100_000;
    const small = pickEvents(counts, smallTarget);
    const big = o.quick ? pickEvents(counts, 100_000) : pickEvents(counts, null);
    const bigLabel = o.quick ? '~100k rows' : 'every event';

    const s = await measure(sim, `~${smallTarget / 1000}k rows (${small.ids.length} events)`, small.ids, o);
    const b = await measure(sim, `${bigLabel} (${big.ids.length} events)`, o.quick ? big.ids : null, o);

    const rowsPerSecond = (rows: number, ms: number) => Math.round(rows / (ms / 1000));
    const out: ScenarioResult[] = [];
    out.push(
      figure(
        `local pipeline: backfill ${b.rows} registrants (large) vs download`,
        'sync wall / download wall',
        round(b.sync.wallMs / b.baseline.wallMs, 2),
        1.5,
        '<=',
        `sync ${seconds(b.sync.wallMs)}, download ${seconds(b.baseline.wallMs)} of the same ${b.baseline.pages} pages ` +
          `(${round(b.baseline.bytes / 1e6, 0)} MB), concurrency ${CONCURRENCY}; ` +
          `at ${s.rows} rows: sync ${seconds(s.sync.wallMs)}, download ${seconds(s.baseline.wallMs)}`,
      ),
    );
    out.push(
      figure(
        `local pipeline: rows per second (${b.rows} rows)`,
        'rows/s',
        rowsPerSecond(b.rows, b.sync.wallMs),
        null,
        null,
        `download alone: ${rowsPerSecond(b.rows, b.baseline.wallMs)} rows/s`,
      ),
    );
    out.push(
      figure(
        `peak RSS: backfill of ${b.rows} rows`,
        'MB',
        mb(b.sync.maxRssKb),
        500,
        '<',
        `syncing process maxRSS; at its end rss ${b.sync.endMemoryMb.rss} MB of which V8 heap ${b.sync.endMemoryMb.heapUsed} MB, ` +
          `external ${b.sync.endMemoryMb.external} MB (the rest is native: DuckDB); the download alone peaked at ${mb(b.baseline.maxRssKb)} MB`,
      ),
    );
    out.push(
      figure(
        `peak RSS: ${b.rows} rows vs ${s.rows} rows`,
        'ratio',
        round(b.sync.maxRssKb / s.sync.maxRssKb, 2),
        1.2,
        '<=',
        `${mb(b.sync.maxRssKb)} MB vs ${mb(s.sync.maxRssKb)} MB`,
      ),
    );
    return out;
  } finally {
    await sim.stop();
  }
}
