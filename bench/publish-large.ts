/**
 * Readers' copies on `large` (issue 35: a publish costs what changed, at any account size). Two parts:
 *
 * - `publish`: three publishes, first (no outputs yet), unchanged (nothing changed since) and one change (one
 *   registrant), of (a) the snapshot alone (`warehouse.publishSnapshot`) and (b) the daemon's publisher with a Parquet
 *   folder and the snapshot, each mode in a process of its own (publish-large-child.ts) on its own copy of the
 *   warehouse. Per publish: wall and CPU time, bytes written (from the file system, not the reports), peak RSS.
 * - `reader-freshness`: `evsync serve --parquet-out --snapshot --publish-every 5` on a copy of the same warehouse,
 *   registrant changes at 2/s, another process reading both outputs (reader-freshness.ts): change to visible,
 *   deliveries' answer times, and serve's CPU spent publishing.
 *
 *   npx tsx bench/publish-large.ts --db /work/bench-cache/large-reg.duckdb [--only publish,reader-freshness]
 *       [--seconds 300] [--size large]            -> bench/results/publish-large.json (another size: -<size>.json)
 *   npm run bench -- --only publish-large --db <file>      (the same, as a group of `npm run bench`)
 *   npm run bench -- --only publish-large --quick          (small, 90 s of changes: to check it runs)
 *
 * The warehouse is a backfill of `events,registrants,contacts` from the unthrottled simulator of seed BACKFILL_SEED
 * (every stream would take far too long on large): `--db` names it, and it is built there when the file is missing
 * (kept: later runs reuse it). It is never changed: each measurement copies it first.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { SimulatorSize } from '../src/simulator/index.js';
import { ROOT } from './cli-process.js';
import {
  type BenchOptions,
  figure,
  formatTable,
  round,
  type ScenarioResult,
  seconds,
  stderrLog,
  tempDir,
} from './lib.js';
import { machineInfo } from './machine.js';
import type { MeasuredPublish, PublishLargeReport } from './publish-large-child.js';
import { type ReaderOutcome, readerFreshness } from './reader-freshness.js';
import { backfillStreams } from './sim-warehouse.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const EXT = extname(fileURLToPath(import.meta.url));
const CHILD = join(HERE, `publish-large-child${EXT}`);
/** What the warehouse holds: the streams readers' copies are measured on (every stream is far too slow on large). */
export const LARGE_STREAMS = 'events,registrants,contacts';
const CADENCE = 5;
const RATE = 2;

export const PUBLISH_LARGE_PARTS = ['publish', 'reader-freshness'] as const;
export type PublishLargePart = (typeof PUBLISH_LARGE_PARTS)[number];

export interface PublishLargeOptions extends BenchOptions {
  /** Default large (small with `quick`). */
  size?: SimulatorSize;
  /** The warehouse (built there when missing; never changed). Default: built in a temporary folder. */
  db?: string;
  only?: readonly PublishLargePart[];
  /** Seconds of registrant changes for reader-freshness (default 300, 90 with `quick`). */
  seconds?: number;
}

async function measure(mode: PublishLargeReport['mode'], db: string, out: string): Promise<PublishLargeReport> {
  mkdirSync(out, { recursive: true });
  const args = [...(EXT === '.ts' ? ['--import', 'tsx'] : []), '--expose-gc', CHILD, '--mode', mode];
  const child = spawn(process.execPath, [...args, '--db', db, '--out', out], { stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  child.stdout.on('data', (d: Buffer) => (text += d.toString()));
  const [code] = await once(child, 'exit');
  const line = text.trim().split('\n').pop() ?? '';
  if (code !== 0 || !line.startsWith('{')) throw new Error(`publish-large-child --mode ${mode} exited with ${code}`);
  return JSON.parse(line) as PublishLargeReport;
}

const mib = (bytes: number) => round(bytes / 1024 / 1024, 2);
const percent = (part: number, whole: number) => (whole > 0 ? round((100 * part) / whole, 2) : Number.NaN);

/** The figures of one mode's three publishes, against the targets. */
export function publishFigures(size: SimulatorSize, r: PublishLargeReport): ScenarioResult[] {
  const what = r.mode === 'snapshot' ? 'snapshot alone' : 'publisher, Parquet + snapshot';
  const name = (phase: MeasuredPublish['phase']) => `publish-large: ${what}, ${phase} publish (${size})`;
  const results: ScenarioResult[] = [];
  const byPhase = new Map(r.publishes.map((p) => [p.phase, p]));
  for (const p of r.publishes) {
    const detail =
      `${p.wallSeconds} s wall, ${p.cpuSeconds} s CPU, ${mib(p.bytesWritten)} MiB written in ${p.filesWritten} ` +
      `file(s) (${p.filesRemoved} removed; outputs now ${mib(p.outputBytes)} MiB): ${p.written.join(', ') || 'none'}; ` +
      `reported ${JSON.stringify(p.reported)}`;
    results.push(figure(name(p.phase), 'wall s', p.wallSeconds, null, null, detail));
    results.push(figure(name(p.phase), 'CPU s', p.cpuSeconds, null, null));
    const nothing = p.phase === 'unchanged';
    results.push(figure(name(p.phase), 'bytes written', p.bytesWritten, nothing ? 0 : null, nothing ? '==' : null));
    results.push(
      figure(
        name(p.phase),
        'peak RSS MB',
        p.peakRssMb,
        400,
        '<',
        r.peakRssReset
          ? `this publish's own peak (reset before it); ${r.rssAfterOpenMb} MB after opening the warehouse`
          : `the process's peak so far (could not be reset); ${r.rssAfterOpenMb} MB after opening the warehouse`,
      ),
    );
  }
  const first = byPhase.get('first');
  const change = byPhase.get('change');
  if (first && change) {
    const rows = Object.values(r.rows).reduce((a, b) => a + b, 0);
    results.push(
      figure(
        name('change'),
        'bytes, % of first',
        percent(change.bytesWritten, first.bytesWritten),
        5,
        '<=',
        `registrant ${r.change.id} of event ${r.change.eventId} (${r.change.eventRows} registrants, the largest event) ` +
          `changed; ${mib(change.bytesWritten)} MiB against ${mib(first.bytesWritten)} MiB; warehouse ${rows} rows ` +
          `${JSON.stringify(r.rows)}`,
      ),
    );
    results.push(figure(name('change'), 'CPU, % of first', percent(change.cpuSeconds, first.cpuSeconds), 10, '<='));
  }
  return results;
}

/** The figures of reader-freshness at `--publish-every 5`, against the targets. */
export function freshnessFigures(size: SimulatorSize, seconds: number, o: ReaderOutcome): ScenarioResult[] {
  const name = `publish-large: reader-freshness, --publish-every ${o.cadence} (${size})`;
  const s = o.snapshot;
  const p = o.parquet;
  return [
    figure(
      name,
      'snapshot p95 s',
      s.p95,
      10,
      '<=',
      `${o.changes} registrant changes measured (${RATE}/s for ${seconds} s; ${o.unmeasured} deletes or changes of ` +
        `records deleted later not); snapshot p50 ${s.p50} s, p95 ${s.p95} s, max ${s.max} s, ${s.missing} never ` +
        `shown, ${s.readErrors} failed reads (read ${s.readMsP50} ms); ${o.publishes} publishes, ` +
        `${o.failedPublishes} failed; serve made ${o.listCallsAtStart} list calls before its outputs were ready ` +
        `(${o.listCalls} in all); load average ${o.loadAverage}`,
    ),
    figure(
      name,
      'Parquet p95 s',
      p.p95,
      10,
      '<=',
      `Parquet p50 ${p.p50} s, p95 ${p.p95} s, max ${p.max} s, ${p.missing} never shown, ${p.readErrors} failed reads ` +
        `(read ${p.readMsP50} ms)`,
    ),
    figure(
      name,
      'delivery answer p95 ms',
      o.answerMs.p95,
      1000,
      '<=',
      `${o.answerMs.n} tries, p50 ${o.answerMs.p50} ms, p99 ${o.answerMs.p99} ms, max ${o.answerMs.max} ms (the ` +
        `simulator's send-to-answer time per try); ${o.deliveriesNotDelivered} not delivered`,
    ),
    figure(name, 'delivery answer max ms', o.answerMs.max, null, null),
    figure(
      name,
      'serve publish CPU s',
      o.publishCpuSeconds,
      null,
      null,
      `serve's CPU while publishing (the publisher's totalCpuMs) during the ${o.windowSeconds} s of changes and ` +
        `drain, in ${o.publishes} publishes (${round(o.publishCpuSeconds / Math.max(1, o.publishes), 2)} s each, ` +
        `${round((100 * o.publishCpuSeconds) / Math.max(1, o.windowSeconds), 1)}% of one core; ${o.publishWallSeconds} ` +
        `s of wall time publishing); the first, whole publish ${o.firstPublishCpuSeconds} s CPU, outputs and first ` +
        `reads ready ${o.firstPublishSeconds} s after start`,
    ),
    figure(
      name,
      'serve peak RSS MB',
      o.peakRssMb,
      400,
      '<',
      `the whole run; ${o.peakRssAfterFirstPublishMb} MB by the end of the first, whole publish (before any change)`,
    ),
  ];
}

export interface PublishLargeOutcome {
  size: SimulatorSize;
  reports: PublishLargeReport[];
  freshness: ReaderOutcome | null;
  results: ScenarioResult[];
}

export async function publishLargeScenarios(o: PublishLargeOptions): Promise<ScenarioResult[]> {
  return (await publishLarge(o)).results;
}

/** Runs the parts asked for and writes bench/results/publish-large.json (another size: publish-large-<size>.json). */
export async function publishLarge(o: PublishLargeOptions): Promise<PublishLargeOutcome> {
  const size: SimulatorSize = o.size ?? (o.quick ? 'small' : 'large');
  const only = o.only ?? PUBLISH_LARGE_PARTS;
  const changeSeconds = o.seconds ?? (o.quick ? 90 : 300);
  const tmp = tempDir('evsync-bench-publish-large-');
  try {
    const base = o.db ?? tmp.path('base.duckdb');
    if (!existsSync(base)) {
      const started = Date.now();
      o.log(`building the ${size} warehouse (${LARGE_STREAMS}) at ${base}`);
      await backfillStreams(base, size, LARGE_STREAMS, o.log);
      o.log(`warehouse (${size}) built in ${seconds(Date.now() - started)}`);
    }
    o.log(`warehouse ${base}: ${mib(statSync(base).size)} MiB`);
    const outcome: PublishLargeOutcome = { size, reports: [], freshness: null, results: [] };
    if (only.includes('publish')) {
      for (const mode of ['snapshot', 'publisher'] as const) {
        // A copy per mode: the one-change publish changes a row.
        const db = tmp.path(`${mode}.duckdb`);
        copyFileSync(base, db);
        o.log(`publish-large: ${mode}, three publishes`);
        const report = await measure(mode, db, tmp.path(`out-${mode}`));
        outcome.reports.push(report);
        outcome.results.push(...publishFigures(size, report));
      }
    }
    if (only.includes('reader-freshness')) {
      // readerFreshness copies `base` into its folder and serves the copy (no backfill: the cursors are there).
      const plan = { size, seconds: changeSeconds, rate: RATE };
      const fresh = await readerFreshness(plan, CADENCE, base, tmp.dir, o.log);
      outcome.freshness = fresh;
      outcome.results.push(...freshnessFigures(size, changeSeconds, fresh));
    }
    const out = join(ROOT, 'bench', 'results', size === 'large' ? 'publish-large.json' : `publish-large-${size}.json`);
    const saved = { machine: machineInfo(), streams: LARGE_STREAMS, parts: only, ...outcome };
    writeFileSync(out, `${JSON.stringify(saved, null, 2)}\n`);
    o.log(`publish-large: ${out}`);
    return outcome;
  } finally {
    tmp.remove();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      size: { type: 'string' },
      quick: { type: 'boolean', default: false },
      db: { type: 'string' },
      only: { type: 'string' },
      seconds: { type: 'string' },
    },
  });
  const only = (values.only?.split(',') ?? PUBLISH_LARGE_PARTS) as PublishLargePart[];
  for (const k of only) {
    if (!PUBLISH_LARGE_PARTS.includes(k)) throw new Error(`--only: ${k}? (${PUBLISH_LARGE_PARTS.join(', ')})`);
  }
  const outcome = await publishLarge({
    quick: values.quick === true,
    log: stderrLog,
    ...(values.size ? { size: values.size as SimulatorSize } : {}),
    ...(values.db ? { db: values.db } : {}),
    ...(values.seconds ? { seconds: Number(values.seconds) } : {}),
    only,
  });
  process.stdout.write(`${formatTable(outcome.results)}\n\n`);
  for (const r of outcome.results) if (r.detail) process.stdout.write(`- ${r.name}, ${r.metric}: ${r.detail}\n`);
}
