/**
 * The archive's costs (issue 36), against its targets:
 *
 * - `live-cost`: what keeping the archive adds to the live load. The replay scenario's recording (20 pages of
 *   `large` registrants, replay.ts) is replayed into the loader by replay-child.ts (a process of its own, DuckDB on
 *   one thread) twice on the same rows, `--archive off` then `--archive on`; CPU us per row both ways, the close
 *   (where the archive's last roll-up into Parquet happens) counted. The replay repeats the same 20 pages, so the
 *   archive it writes compresses far better than real pages would: its size is shown, never used for the size target.
 * - `sync-cost`: the same on a real backfill: registrants of the first events of the size (about `--rows` rows) from
 *   the unthrottled simulator in a process of its own, synced by pipeline-child.ts with the archive off then on; the
 *   whole process's CPU per row both ways (HTTP, parsing, loading, DuckDB's threads, roll-ups and close).
 * - `sync-cost-ascii`: `sync-cost` against a simulator that writes its answers ASCII-only (`--faults ascii-json`,
 *   every non-ASCII character as a `\u` escape, as Python's json.dumps does), which the archive keeps as it came.
 * - `size-rebuild`: a warehouse of `events,registrants` backfilled WITH its archive from the simulator (seed
 *   BACKFILL_SEED, unthrottled). Raw bytes: the `bytes` of every archive entry (the JSON text appended); archive
 *   bytes: the files under `<db>.archive/`. A sample of registrant pages is requested again from the simulator to
 *   set the bytes of the HTTP bodies it answered against the bytes the archive takes in for the same pages. Then
 *   `rebuild` of registrants (not a dry run) on a copy of the warehouse and its archive, in a process of its own
 *   (archive-rebuild-child.ts): wall, CPU, peak RSS (VmHWM).
 *
 *   npm run build && node dist/bench/archive.js [--size large] [--db /work/bench-cache/large-reg-archived.duckdb]
 *        [--rows 1000000] [--only live-cost,sync-cost,sync-cost-ascii,size-rebuild]
 *        -> bench/results/archive.json (another size: -<size>.json)
 *   npm run bench -- --only archive --db <file> [--quick]  (the same as a group; --quick: small, 200k replay rows)
 *
 * From dist: the replay's recording starts the simulator in a child process from dist (sim-process.ts).
 *
 * `--db` names the archived warehouse: built there (with `<db>.archive/` beside it) when missing, kept for later runs,
 * never changed (the rebuild runs on a copy). On large the build takes 10-20 minutes.
 */
import { cpSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, DecoratorHandler, type Dispatcher } from 'undici';
import { customFieldsFromDefinitions } from '../connectors/index.js';
import { requestFields } from '../schemas/columns.js';
import { type SimulatorSize, startSimulator } from '../src/simulator/index.js';
import { Db } from '../src/warehouse/db/connection.js';
import { literal } from '../src/warehouse/db/sql.js';
import type { RebuildReport } from './archive-rebuild-child.js';
import { ROOT } from './cli-process.js';
import {
  type BenchOptions,
  figure,
  formatTable,
  jsonChild,
  round,
  type ScenarioResult,
  seconds,
  stderrLog,
  tempDir,
} from './lib.js';
import { machineInfo } from './machine.js';
import { eventCounts, pickEvents, runChild } from './pipeline.js';
import type { ChildReport } from './pipeline-child.js';
import { writeRecording } from './recording.js';
import { record } from './replay.js';
import type { ReplayReport } from './replay-child.js';
import type { FloorReport } from './replay-floor.js';
import { simulatorClient, simulatorRegistrants, simulatorTruth } from './sim-client.js';
import { startSimProcess } from './sim-process.js';
import { BACKFILL_SEED, backfillStreams } from './sim-warehouse.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const EXT = extname(fileURLToPath(import.meta.url));
/** Children run from dist (npm run bench) or from the sources through tsx (npx tsx bench/archive.ts). */
const nodeArgs = (script: string) => [...(EXT === '.ts' ? ['--import', 'tsx'] : []), join(HERE, `${script}${EXT}`)];
/** What the warehouse holds: registrants and the events they hang from (the rebuild is of registrants). */
export const ARCHIVE_STREAMS = 'events,registrants';
/** Registrant pages requested again for the HTTP body sample: the first pages of the first events. */
const SAMPLE_EVENTS = 4;
const SAMPLE_PAGES_PER_EVENT = 5;

export const ARCHIVE_PARTS = ['live-cost', 'sync-cost', 'sync-cost-ascii', 'size-rebuild'] as const;
export type ArchivePart = (typeof ARCHIVE_PARTS)[number];

export interface ArchiveBenchOptions extends BenchOptions {
  /** Default large (small with `quick`). */
  size?: SimulatorSize;
  /** The archived warehouse (built there when missing; never changed). Default: built in a temporary folder. */
  db?: string;
  /** Rows replayed each way for live-cost (default 1M, 200k with `quick`). */
  rows?: number;
  only?: readonly ArchivePart[];
}

/** Bytes of every file under `dir`, recursively. */
function treeBytes(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  if (!existsSync(dir)) return { bytes, files };
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) {
      const sub = treeBytes(path);
      bytes += sub.bytes;
      files += sub.files;
    } else if (e.isFile()) {
      bytes += statSync(path).size;
      files += 1;
    }
  }
  return { bytes, files };
}

export interface ArchiveSizes {
  /** Files under `<db>.archive/`, all of them, and of them the Parquet segments. */
  archiveBytes: number;
  files: number;
  segmentBytes: number;
  /** Entries not yet rolled up (a closed warehouse should have none). */
  spooledFiles: number;
  /** From the entries' metadata: the raw JSON bytes appended, per stream. */
  entries: number;
  rawBytes: number;
  rows: number;
  byStream: Record<string, { entries: number; rawBytes: number; rows: number }>;
}

/** What the archive beside `db` holds: files on disk, and the raw bytes its entries' metadata says were appended. */
async function archiveSizes(db: string): Promise<ArchiveSizes> {
  const dir = `${db}.archive`;
  const all = treeBytes(dir);
  const segments = treeBytes(join(dir, 'segments'));
  const spool = treeBytes(join(dir, 'spool'));
  const duck = await Db.open(':memory:', false, { memoryLimit: '256MB' });
  try {
    const metas = existsSync(join(dir, 'segments'))
      ? readdirSync(join(dir, 'segments'))
          .filter((f) => f.endsWith('.meta.parquet'))
          .map((f) => join(dir, 'segments', f))
      : [];
    const byStream: ArchiveSizes['byStream'] = {};
    if (metas.length > 0) {
      const r = await duck.query(
        `SELECT stream, count(*) AS n, sum(bytes) AS b, sum(rows) AS r
           FROM read_parquet([${metas.map(literal).join(',')}]) GROUP BY stream ORDER BY stream`,
      );
      for (const row of r.rows) {
        byStream[String(row.stream)] = { entries: Number(row.n), rawBytes: Number(row.b), rows: Number(row.r) };
      }
    }
    // Entries not rolled up yet: their metadata lines in the spool (a line a kill cut short has no body either).
    const spoolDir = join(dir, 'spool');
    for (const g of existsSync(spoolDir) ? readdirSync(spoolDir) : []) {
      const meta = join(spoolDir, g, 'meta.jsonl');
      if (!existsSync(meta)) continue;
      for (const line of readFileSync(meta, 'utf8').split('\n')) {
        if (!line) continue;
        const m = JSON.parse(line) as { stream: string; bytes: number; rows: number };
        const t = byStream[m.stream] ?? { entries: 0, rawBytes: 0, rows: 0 };
        byStream[m.stream] = t;
        t.entries += 1;
        t.rawBytes += m.bytes;
        t.rows += m.rows;
      }
    }
    const sum = (k: 'entries' | 'rawBytes' | 'rows') => Object.values(byStream).reduce((s, v) => s + v[k], 0);
    return {
      archiveBytes: all.bytes,
      files: all.files,
      segmentBytes: segments.bytes,
      spooledFiles: spool.files,
      entries: sum('entries'),
      rawBytes: sum('rawBytes'),
      rows: sum('rows'),
      byStream,
    };
  } finally {
    await duck.close();
  }
}

/** Adds the bytes of each response body to `sizes`, by request path, as they arrive (what the service answered). */
class BodyCounter extends DecoratorHandler {
  private bytes = 0;
  constructor(
    handler: Dispatcher.DispatchHandler,
    private readonly path: string,
    private readonly sizes: { path: string; bytes: number }[],
  ) {
    super(handler);
  }
  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.bytes += chunk.length;
    // DecoratorHandler's typings declare none of its methods: call the forwarding one by its prototype.
    DECORATED.onResponseData.call(this, controller, chunk);
  }
  onResponseEnd(controller: Dispatcher.DispatchController, trailers: Record<string, string>): void {
    this.sizes.push({ path: this.path, bytes: this.bytes });
    DECORATED.onResponseEnd.call(this, controller, trailers);
  }
}
const DECORATED = DecoratorHandler.prototype as unknown as {
  onResponseData: (this: BodyCounter, c: Dispatcher.DispatchController, chunk: Buffer) => void;
  onResponseEnd: (this: BodyCounter, c: Dispatcher.DispatchController, t: Record<string, string>) => void;
};

export interface HttpSample {
  pages: number;
  rows: number;
  /** The HTTP bodies the simulator answered for the pages, and the JSON the archive takes in for the same pages. */
  httpBytes: number;
  archivedBytes: number;
}

/**
 * The first pages of registrants of the first events, requested as the engine requests them (its fields, its page
 * size) from a simulator like the one the warehouse was built from; each answer's body counted on the wire, each
 * page's items stringified as the loader appends them (`{"records":[...]}`; the scrub removes secrets only).
 */
async function httpSample(size: SimulatorSize, log: (m: string) => void): Promise<HttpSample> {
  const sim = await startSimulator({
    size,
    seed: BACKFILL_SEED,
    port: 0,
    control: true,
    rateLimit: { credits: 1_000_000, windowSeconds: 1 },
  });
  const sizes: { path: string; bytes: number }[] = [];
  const agent = new Agent().compose(
    (dispatch) => (opts, handler) => dispatch(opts, new BodyCounter(handler, opts.path, sizes)),
  );
  const client = simulatorClient(sim, { rateLimit: { limit: 1_000_000, windowMs: 1000 }, dispatcher: agent });
  try {
    const truth = (name: string) => simulatorTruth(sim.baseUrl, name);
    const { stream, questions } = await simulatorRegistrants(sim.baseUrl);
    const sample: HttpSample = { pages: 0, rows: 0, httpBytes: 0, archivedBytes: 0 };
    let events = 0;
    for (const event of await truth('events')) {
      if (events >= SAMPLE_EVENTS) break;
      const eventId = Number(event.id);
      const own = customFieldsFromDefinitions(questions.filter((q) => Number(q.event_id) === eventId));
      let pages = 0;
      for await (const page of client.keyset<{ id: number }>('/registrants', {
        params: { event_id: eventId },
        fields: requestFields(
          stream,
          own.map((f) => f.name),
        ),
        perPage: stream.maxPerPage,
      })) {
        if (page.items.length === 0) break;
        // The body of this page's answer: the last registrants request counted.
        const answered = sizes.filter((s) => s.path.includes('/registrants')).pop();
        if (!answered) throw new Error('archive: no registrants answer was counted');
        sample.httpBytes += answered.bytes;
        sample.archivedBytes += Buffer.byteLength(JSON.stringify({ records: page.items }));
        sample.pages += 1;
        sample.rows += page.items.length;
        if (++pages >= SAMPLE_PAGES_PER_EVENT) break;
      }
      if (pages > 0) events += 1;
    }
    log(`archive: HTTP sample of ${sample.pages} registrant pages (${sample.rows} rows)`);
    return sample;
  } finally {
    await client.close();
    await agent.close();
    await sim.close();
  }
}

const mib = (bytes: number) => round(bytes / 1_048_576, 1);
const perRow = (ms: number, rows: number) => round((ms * 1000) / rows, 2);

/**
 * The archive's cost on a real sync: a backfill of registrants of the first events of `size` (about `rows` rows) from
 * the unthrottled simulator in a process of its own, by pipeline-child.ts (the engine's HTTP client, walks, loader),
 * with the archive off then on, each into a new warehouse: the process's CPU per row both ways (DuckDB's threads,
 * the archive's roll-ups and the close included). The simulator's CPU is its own process's and is not counted.
 */
async function syncCost(
  o: ArchiveBenchOptions,
  size: SimulatorSize,
  rows: number,
  /** Simulator faults: `ascii-json` for a service that escapes every non-ASCII character (sync-cost-ascii). */
  faults?: string,
): Promise<ScenarioResult[]> {
  const sim = await startSimProcess({ size, rateLimit: '10000000/600', ...(faults ? { faults } : {}) });
  const answers = faults ? `, answers written with --faults ${faults}` : '';
  const tmp = tempDir('evsync-bench-archive-sync-');
  try {
    const { ids, rows: picked } = pickEvents(await eventCounts(sim), rows);
    const run = async (archive: 'on' | 'off') => {
      o.log(`archive: backfill of ${picked} registrants of ${ids.length} events, archive ${archive}`);
      const db = tmp.path(`sync-${archive}.duckdb`);
      const args = ['sync', '--db', db, '--requests', tmp.path(`requests-${archive}.txt`), '--archive', archive];
      const report = await runChild(sim, [...args, '--events', ids.join(',')]);
      if (report.status !== 'done') throw new Error(`backfill with the archive ${archive} ended ${report.status}`);
      return report;
    };
    const off = await run('off');
    const on = await run('on');
    const perRow = (r: ChildReport) => (r.cpuMs * 1000) / Math.max(1, r.rows);
    const ratio = round(perRow(on) / perRow(off), 2);
    const detail =
      `on ${round(perRow(on), 2)} vs off ${round(perRow(off), 2)} us CPU/row over ${on.rows} rows (${on.pages} pages), ` +
      `the whole process (HTTP, parsing, loading, DuckDB's threads, the archive's roll-ups and close); wall ` +
      `${seconds(on.wallMs)} vs ${seconds(off.wallMs)} s; peak RSS ${round(on.maxRssKb / 1024)} vs ${round(off.maxRssKb / 1024)} MiB`;
    return [
      figure(
        `archive: sync CPU per row, archive on vs off (backfill of ${on.rows} registrants, ${size}${answers})`,
        'ratio',
        ratio,
        1.1,
        '<=',
        detail,
      ),
      figure(`archive: sync with the archive (${size}${answers})`, 'us CPU per row', round(perRow(on), 2), null, null),
      figure(
        `archive: sync without the archive (${size}${answers})`,
        'us CPU per row',
        round(perRow(off), 2),
        null,
        null,
      ),
    ];
  } finally {
    tmp.remove();
    await sim.stop();
  }
}

async function liveCost(o: ArchiveBenchOptions, rows: number): Promise<ScenarioResult[]> {
  const tmp = tempDir('evsync-bench-archive-');
  try {
    const file = tmp.path('recording.json');
    writeRecording(file, await record(o));
    const run = async (archive: 'on' | 'off') => {
      o.log(`archive: replay of ${rows} rows, archive ${archive}`);
      const db = tmp.path(`replay-${archive}.duckdb`);
      const report = await jsonChild<ReplayReport>([
        ...nodeArgs('replay-child'),
        '--recording',
        file,
        '--db',
        db,
        '--rows',
        String(rows),
        '--archive',
        archive,
      ]);
      return { report, sizes: archive === 'on' ? await archiveSizes(db) : null };
    };
    const off = await run('off');
    const on = await run('on');
    // The floor of this shape on the same recording (replay-floor.ts), as the replay scenario measures it.
    o.log('archive: the floor of this shape (DuckDB alone reading and inserting the same pages)');
    const floor = await jsonChild<FloorReport>([
      ...nodeArgs('replay-floor'),
      '--recording',
      file,
      '--dir',
      tmp.path('floor'),
    ]);
    // Rows per CPU-second as bench/replay.ts counts them (the load, its close not included).
    const rate = (r: ReplayReport) => Math.round(r.rows / (r.cpuMs / 1000));
    // Load (pages, walk ends, final merge + checkpoint) plus the close, where the archive's last roll-up runs.
    const cost = (r: ReplayReport) => perRow(r.cpuMs + r.close.cpuMs, r.rows);
    const describe = (r: ReplayReport) =>
      `load ${perRow(r.cpuMs, r.rows)} + close ${perRow(r.close.cpuMs, r.rows)} us CPU/row ` +
      `(close ${r.close.wallMs} ms wall, ${r.close.cpuMs} ms CPU${r.close.error ? `, FAILED: ${r.close.error}` : ''}), ${round(r.rows / (r.wallMs / 1000), 0)} rows/s wall, ` +
      `process CPU from the first page to the close ${perRow(r.processCpuMs, r.rows)} us/row, peak RSS ${round(r.maxRssKb / 1024, 0)} MiB`;
    const s = on.sizes;
    const failed = [on.report, off.report].filter((r) => r.close.error !== null);
    return [
      figure(
        `archive: the warehouse's close after the replay (archive on: the roll-up of the spool into Parquet)`,
        'closes failed',
        failed.length,
        0,
        '==',
        failed.length > 0
          ? `${failed.map((r) => `archive ${r.archive ? 'on' : 'off'}: ${r.close.error}`).join('; ')}; the archive left ` +
              `${s?.spooledFiles ?? '-'} files in its spool (not rolled up), so the CPU below lacks a roll-up that worked`
          : undefined,
      ),
      figure(
        `archive: live load CPU per row, archive on vs off (replay of ${on.report.rows} rows, one core)`,
        'ratio',
        round(cost(on.report) / cost(off.report), 2),
        1.1,
        '<=',
        `on ${cost(on.report)} vs off ${cost(off.report)} us CPU/row, load + close. On: ${describe(on.report)}. ` +
          `Off: ${describe(off.report)}. Process CPU ratio (everything from the first page to the close): ` +
          `${round(on.report.processCpuMs / off.report.processCpuMs, 2)}. The replay repeats the same 20 recorded ` +
          `pages (ids shifted), so its archive (${s ? `${mib(s.archiveBytes)} MiB for ${mib(s.rawBytes)} MiB raw, ${s.entries} entries, ${s.spooledFiles} files still in the spool` : '-'}) ` +
          'would compress better than real pages once rolled up: not used for the size target.',
      ),
      figure(
        `archive: replay with the archive vs the floor (replay of ${on.report.rows} rows, one core)`,
        'ratio',
        round(rate(on.report) / floor.floorRowsPerCpuSecond, 2),
        0.8,
        '>=',
        `${rate(on.report)} rows per CPU-second with the archive, ${rate(off.report)} without ` +
          `(${round(rate(off.report) / floor.floorRowsPerCpuSecond, 2)} of the floor), floor ` +
          `${floor.floorRowsPerCpuSecond} (replay-floor.ts, ${floor.rows} rows, same recording, same run); the floor ` +
          `plus the page contract alone (no archive) reaches ${round(floor.contract.rowsPerCpuSecond / floor.floorRowsPerCpuSecond, 2)} of it`,
      ),
      figure(
        `archive: live load with the archive (replay of ${on.report.rows} rows)`,
        'us CPU per row',
        cost(on.report),
        null,
        null,
      ),
      figure(
        `archive: live load without the archive (replay of ${off.report.rows} rows)`,
        'us CPU per row',
        cost(off.report),
        null,
        null,
      ),
    ];
  } finally {
    tmp.remove();
  }
}

async function sizeAndRebuild(o: ArchiveBenchOptions, size: SimulatorSize, base: string): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  if (!existsSync(base)) {
    const started = Date.now();
    o.log(`archive: building the ${size} warehouse (${ARCHIVE_STREAMS}) with its archive at ${base}`);
    // A close that fails in the archive's roll-up leaves the warehouse committed and the pages in the spool: the
    // failure is a figure, and what is on disk is still measured (a rebuild reads the spool too).
    let failure: string | null = null;
    await backfillStreams(base, size, ARCHIVE_STREAMS, o.log).catch((err: unknown) => {
      failure = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? 'failed';
      if (!existsSync(base)) throw err;
    });
    o.log(
      `archive: warehouse (${size}) built in ${seconds(Date.now() - started)}${failure ? `, FAILED: ${failure}` : ''}`,
    );
    writeFileSync(`${base}.build.json`, `${JSON.stringify({ ms: Date.now() - started, failure })}\n`);
  }
  const build = existsSync(`${base}.build.json`)
    ? (JSON.parse(readFileSync(`${base}.build.json`, 'utf8')) as { ms: number; failure: string | null })
    : null;
  results.push(
    figure(
      `archive: the backfill's close (the archive's roll-up into Parquet) (${size})`,
      'closes failed',
      build?.failure ? 1 : 0,
      0,
      '==',
      build ? `built in ${seconds(build.ms)}${build.failure ? `; ${build.failure}` : ''}` : 'built by an earlier run',
    ),
  );
  const sizes = await archiveSizes(base);
  o.log(`archive: ${JSON.stringify(sizes)}`);
  const sample = await httpSample(size, o.log);
  results.push(
    figure(
      `archive: archive bytes vs raw JSON archived (${size}, ${ARCHIVE_STREAMS})`,
      '% of raw',
      round((100 * sizes.archiveBytes) / Math.max(1, sizes.rawBytes), 2),
      20,
      '<=',
      `${mib(sizes.archiveBytes)} MiB in ${sizes.files} files under ${base}.archive/ (segments ${mib(sizes.segmentBytes)} MiB, ` +
        `${sizes.spooledFiles} spool files) for ${mib(sizes.rawBytes)} MiB of JSON appended (the entries' bytes) in ` +
        `${sizes.entries} entries of ${sizes.rows} rows; by stream: ${Object.entries(sizes.byStream)
          .map(([k, v]) => `${k} ${v.entries} entries, ${v.rows} rows, ${mib(v.rawBytes)} MiB`)
          .join('; ')}; warehouse file ${mib(statSync(base).size)} MiB. Against the HTTP bodies: in a sample of ` +
        `${sample.pages} registrant pages (${sample.rows} rows) the service answered ${mib(sample.httpBytes)} MiB and ` +
        `the archive takes in ${mib(sample.archivedBytes)} MiB (${round(sample.archivedBytes / sample.httpBytes, 3)} ` +
        `of the body), so the archive is about ${round((100 * sizes.archiveBytes) / Math.max(1, sizes.rawBytes / (sample.archivedBytes / sample.httpBytes)), 2)}% ` +
        'of the HTTP bodies',
    ),
  );
  const tmp = tempDir('evsync-bench-archive-rebuild-');
  try {
    // A copy of the warehouse and its archive: the rebuild swaps tables in, and the cache must stay as built.
    const db = tmp.path('live.duckdb');
    cpSync(base, db);
    cpSync(`${base}.archive`, `${db}.archive`, { recursive: true });
    o.log(`archive: rebuild of registrants on a copy (${db})`);
    const r = await jsonChild<RebuildReport>([
      ...nodeArgs('archive-rebuild-child'),
      '--db',
      db,
      '--streams',
      'registrants',
    ]);
    const changes = r.changes
      .map(
        (c) =>
          `${c.table}: +${c.added} ~${c.changed} -${c.removed}${c.columnsAdded.length + c.columnsRemoved.length + c.columnsRetyped.length > 0 ? ` columns ${JSON.stringify([c.columnsAdded, c.columnsRemoved, c.columnsRetyped])}` : ''}`,
      )
      .join('; ');
    const detail =
      `${r.replayed.records} records in ${r.replayed.pages} pages, ${r.replayed.seq} ops replayed; registrants after: ` +
      `${r.rowsAfter.registrants}; changes against the live table: ${changes || 'none'}; applied ${r.applied}; ` +
      `${r.closeError ? `the live warehouse's close then FAILED: ${r.closeError}; ` : ''}` +
      `${r.error ? `the rebuild FAILED in ${r.error}; ` : ''}replay of the last op at ` +
      `${r.replayMs === null ? '-' : round(r.replayMs / 1000, 1)} s; ` +
      `rebuild ${round(r.rebuild.wallMs / 1000, 1)} s wall, ${round(r.rebuild.cpuMs / 1000, 1)} s CPU; open to close ` +
      `${round(r.total.wallMs / 1000, 1)} s wall, ${round(r.total.cpuMs / 1000, 1)} s CPU; highest RSS sampled by phase ` +
      `(MiB): ${Object.entries(r.peakByPhaseMb)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}; progress (s: records, MiB): ${r.progress
        .filter((_, i, a) => i % Math.max(1, Math.ceil(a.length / 12)) === 0 || i === a.length - 1)
        .map((p) => `${round(p.atMs / 1000, 0)}: ${p.records}, ${p.rssMb}`)
        .join('; ')}`;
    results.push(
      figure(
        `archive: rebuild of ${r.replayed.records} registrants (${size})`,
        'wall s',
        round(r.rebuild.wallMs / 1000, 1),
        60,
        '<=',
        detail,
      ),
      figure(`archive: rebuild of ${r.replayed.records} registrants (${size})`, 'peak RSS MiB', r.peakRssMb, 400, '<'),
      figure(
        `archive: rebuild of ${r.replayed.records} registrants (${size})`,
        'rebuilds failed',
        r.error ? 1 : 0,
        0,
        '==',
        r.error ?? undefined,
      ),
      figure(
        `archive: rebuild of ${r.replayed.records} registrants (${size})`,
        'records per CPU-second',
        Math.round(r.replayed.records / (r.rebuild.cpuMs / 1000)),
        null,
        null,
        'the replay loads through the live PageLoader: compare with the replay scenario\'s "vs floor" (bench/replay.ts)',
      ),
    );
    return results;
  } finally {
    tmp.remove();
  }
}

/** bench/results/archive.json: the last results of each part, and all of them in order. */
interface SavedResults {
  size: SimulatorSize;
  byPart: Partial<
    Record<ArchivePart, { run: string; machine: ReturnType<typeof machineInfo>; results: ScenarioResult[] }>
  >;
  results: ScenarioResult[];
}

export async function archiveScenarios(o: ArchiveBenchOptions): Promise<ScenarioResult[]> {
  return (await archiveBench(o)).results;
}

/** Runs the parts asked for and writes bench/results/archive.json (another size: archive-<size>.json). */
export async function archiveBench(
  o: ArchiveBenchOptions,
): Promise<{ size: SimulatorSize; results: ScenarioResult[] }> {
  const size: SimulatorSize = o.size ?? (o.quick ? 'small' : 'large');
  const only = o.only ?? ARCHIVE_PARTS;
  const rows = o.rows ?? (o.quick ? 200_000 : 1_000_000);
  const results: ScenarioResult[] = [];
  // A part that cannot run is a figure: the other part's results are still saved.
  const partOf = new Map<ScenarioResult, ArchivePart>();
  const part = async (name: ArchivePart, fn: () => Promise<ScenarioResult[]>) => {
    const before = results.length;
    try {
      results.push(...(await fn()));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      o.log(`archive: ${name} failed: ${message}`);
      results.push(figure(`archive: ${name} could not run`, 'error', 0, null, null, message));
      results[results.length - 1]!.ok = false;
    }
    for (const r of results.slice(before)) partOf.set(r, name);
  };
  if (only.includes('live-cost')) await part('live-cost', () => liveCost(o, rows));
  if (only.includes('sync-cost')) await part('sync-cost', () => syncCost(o, size, rows));
  if (only.includes('sync-cost-ascii')) await part('sync-cost-ascii', () => syncCost(o, size, rows, 'ascii-json'));
  if (only.includes('size-rebuild')) {
    const tmp = tempDir('evsync-bench-archive-build-');
    try {
      await part('size-rebuild', () => sizeAndRebuild(o, size, o.db ?? tmp.path('archived.duckdb')));
    } finally {
      tmp.remove();
    }
  }
  const out = join(ROOT, 'bench', 'results', size === 'large' ? 'archive.json' : `archive-${size}.json`);
  const command =
    `npm run build && node dist/bench/archive.js --size ${size}${o.db ? ` --db ${o.db}` : ''} --rows ${rows} --only ${only.join(',')}` +
    ' (or: npm run bench -- --only archive --db <file> [--quick])';
  // The parts not run this time keep their last results (each with its own command and machine).
  const saved: SavedResults = existsSync(out)
    ? (JSON.parse(readFileSync(out, 'utf8')) as SavedResults)
    : { size, byPart: {}, results: [] };
  const machine = machineInfo();
  for (const p of only) {
    saved.byPart[p] = { run: command, machine, results: results.filter((r) => partOf.get(r) === p) };
  }
  saved.results = ARCHIVE_PARTS.flatMap((p) => saved.byPart[p]?.results ?? []);
  writeFileSync(out, `${JSON.stringify(saved, null, 2)}\n`);
  o.log(`archive: ${out}`);
  return { size, results };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      size: { type: 'string' },
      quick: { type: 'boolean', default: false },
      db: { type: 'string' },
      rows: { type: 'string' },
      only: { type: 'string' },
    },
  });
  const only = (values.only?.split(',') ?? ARCHIVE_PARTS) as ArchivePart[];
  for (const k of only) if (!ARCHIVE_PARTS.includes(k)) throw new Error(`--only: ${k}? (${ARCHIVE_PARTS.join(', ')})`);
  const outcome = await archiveBench({
    quick: values.quick === true,
    log: stderrLog,
    ...(values.size ? { size: values.size as SimulatorSize } : {}),
    ...(values.db ? { db: values.db } : {}),
    ...(values.rows ? { rows: Number(values.rows) } : {}),
    only,
  });
  process.stdout.write(`${formatTable(outcome.results)}\n\n`);
  for (const r of outcome.results) if (r.detail) process.stdout.write(`- ${r.name}, ${r.metric}: ${r.detail}\n`);
}
