/**
 * The daemon's publisher on a `medium` warehouse (every stream): what one publish costs in time, CPU, bytes and
 * peak RSS, for a first (full) publish and for one of a few touched partitions whose rows did not change (nothing
 * written), Parquet and snapshot together (on `large`, with a change: bench/publish-large.ts). Then
 * `reader-freshness` (reader-freshness.ts): `evsync serve --parquet-out --snapshot` with webhooks, registrant changes
 * at 2/s, and another process reading both outputs: change to visible, at the default cadence and at 10 s.
 *
 *   npx tsx bench/publish.ts [--size medium] [--db path] [--json out.json] [--only publish,reader-freshness]
 *   npm run build && node dist/bench/publish.js --only reader-freshness [--quick]   (small, 90 s per cadence)
 *
 * The warehouse is built once (kept with --db, reused when the file exists) by a backfill of every stream from the
 * unthrottled simulator; the measurement runs in a child process (publish-child.ts) so its memory is its own.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { SimulatorSize } from '../src/simulator/index.js';
import { type BenchOptions, figure, round, type ScenarioResult, seconds, stderrLog, tempDir } from './lib.js';
import type { PublishReport } from './publish-child.js';
import { type ReaderOutcome, type ReaderPlan, readerFigures, readerFreshness } from './reader-freshness.js';
import { backfillAll } from './sim-warehouse.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const EXT = extname(fileURLToPath(import.meta.url));
const CHILD = join(HERE, `publish-child${EXT}`);

async function measure(db: string, out: string): Promise<PublishReport> {
  const args = [...(EXT === '.ts' ? ['--import', 'tsx'] : []), CHILD, '--db', db, '--out', out];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  child.stdout.on('data', (d: Buffer) => (text += d.toString()));
  const [code] = await once(child, 'exit');
  const line = text.trim().split('\n').pop() ?? '';
  if (code !== 0 || !line.startsWith('{')) throw new Error(`publish-child exited with ${String(code)}`);
  return JSON.parse(line) as PublishReport;
}

const mib = (bytes: number | null) => round((bytes ?? 0) / 1024 / 1024, 1);

export const PUBLISH_PARTS = ['publish', 'reader-freshness'] as const;
export type PublishPart = (typeof PUBLISH_PARTS)[number];

export interface PublishBenchOptions extends BenchOptions {
  size?: SimulatorSize;
  db?: string;
  only?: readonly PublishPart[];
  /** Receives each reader-freshness outcome (the figures hold a summary). */
  outcomes?: ReaderOutcome[];
}

export async function publishScenarios(o: PublishBenchOptions): Promise<ScenarioResult[]> {
  const size: SimulatorSize = o.size ?? (o.quick ? 'small' : 'medium');
  const tmp = tempDir('evsync-bench-publish-');
  try {
    const db = o.db ?? tmp.path('publish.duckdb');
    if (!existsSync(db)) {
      const started = Date.now();
      await backfillAll(db, size, o.log);
      o.log(`warehouse (${size}) built in ${seconds(Date.now() - started)}`);
    }
    const results: ScenarioResult[] = [];
    const only = o.only ?? PUBLISH_PARTS;
    if (only.includes('publish')) results.push(...(await publishCost(db, tmp.dir, size)));
    if (only.includes('reader-freshness')) {
      const plan: ReaderPlan = { size, seconds: o.quick ? 90 : 300, rate: 2 };
      for (const cadence of [null, 10]) {
        const outcome = await readerFreshness(plan, cadence, db, tmp.dir, o.log);
        o.outcomes?.push(outcome);
        results.push(...readerFigures(size, plan, outcome));
      }
    }
    return results;
  } finally {
    tmp.remove();
  }
}

async function publishCost(db: string, dir: string, size: SimulatorSize): Promise<ScenarioResult[]> {
  const r = await measure(db, dir);
  const total = Object.values(r.rows).reduce((a, b) => a + b, 0);
  const load = loadavg()[0]?.toFixed(2);
  const name = (what: string) => `publish: ${what} (${size})`;
  const detail = (s: PublishReport['full']) =>
    `Parquet ${mib(s.lastParquet?.bytes ?? 0)} MiB in ${seconds(s.lastParquet?.ms ?? 0)} (${s.lastParquet?.tables ?? 0} tables), snapshot ${mib(s.lastSnapshot?.bytes ?? 0)} MiB in ${seconds(s.lastSnapshot?.ms ?? 0)}`;
  return [
    figure(
      name('first publish, every table to Parquet + snapshot'),
      's',
      round((r.full.lastDurationMs ?? 0) / 1000, 2),
      null,
      null,
      `${detail(r.full)}; CPU ${seconds(r.full.lastCpuMs ?? 0)}; ${total} rows in ${Object.keys(r.rows).length} tables (warehouse ${mib(statSync(db).size)} MiB); load average ${load} on ${cpus().length} cores`,
    ),
    figure(
      name('first publish'),
      'peak RSS MB',
      r.fullPeakRssMb,
      null,
      null,
      `RSS after opening the warehouse ${r.rssAfterOpenMb} MB`,
    ),
    figure(
      name('touched, unchanged publish, 3 partitions + snapshot'),
      's',
      round((r.incremental.lastDurationMs ?? 0) / 1000, 2),
      null,
      null,
      `${detail(r.incremental)}; CPU ${seconds(r.incremental.lastCpuMs ?? 0)}; touched ${JSON.stringify(r.touched)}`,
    ),
    figure(
      name('touched, unchanged publish'),
      'peak RSS MB',
      r.incrementalPeakRssMb,
      null,
      null,
      `4 more alike: ${r.repeated.map((x) => `${x.ms} ms, snapshot ${mib(x.snapshotBytes)} MiB`).join('; ')}`,
    ),
  ];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      size: { type: 'string' },
      quick: { type: 'boolean', default: false },
      db: { type: 'string' },
      json: { type: 'string' },
      only: { type: 'string' },
    },
  });
  const only = (values.only?.split(',') ?? PUBLISH_PARTS) as PublishPart[];
  for (const k of only) if (!PUBLISH_PARTS.includes(k)) throw new Error(`--only: ${k}? (${PUBLISH_PARTS.join(', ')})`);
  const quick = values.quick === true;
  const outcomes: ReaderOutcome[] = [];
  const results = await publishScenarios({
    quick,
    log: stderrLog,
    size: (values.size ?? (quick ? 'small' : 'medium')) as SimulatorSize,
    ...(values.db ? { db: values.db } : {}),
    only,
    outcomes,
  });
  const text = `${JSON.stringify({ node: process.version, loadAverage: loadavg(), results, outcomes }, null, 2)}\n`;
  if (values.json) writeFileSync(values.json, text);
  process.stdout.write(text);
}
