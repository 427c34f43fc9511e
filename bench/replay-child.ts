/**
 * The measured side of the replay scenario, in a process of its own (its peak RSS is its own): registrant pages
 * recorded once from the simulator are replayed from memory into the engine's loader (PageLoader: normalize +
 * load, each page with its cursor in its own transaction) as a backfill would load them, one walk per pass over
 * the recording, then `finishLoads` and a CHECKPOINT. Each pass shifts the ids past every earlier pass and gives
 * the rows an event of their own, so the table grows by the recording's size per pass (a new scope each time),
 * and the walk goes as the engine's do (src/sync/walk.ts): a walk over a scope holding no live row (here, every
 * pass) records no seen ids and ends with its cursor closed; one over a scope with rows (`--track-seen` makes every
 * walk one) records them and ends with markMissing over the scope. Prints one JSON line.
 *
 *   node dist/bench/replay-child.js --recording <file> --rows 1000000 --db <file> [--merge-rows 100000]
 *        [--keyed] [--immediate] [--track-seen] [--band 100000] [--set name=value] [--archive on|off]
 *        [--answer on|off]
 *
 * `--immediate` merges every page in its own transaction (no staging); `--keyed` creates the table with a PRIMARY
 * KEY first (what earlier versions did), so the alternatives run on the same pages. `--archive off` opens the
 * warehouse without its archive (on, the default, is what Warehouse.open does for a file): bench/archive.ts runs both
 * on the same pages. The archive's roll-up into Parquet finishes in the warehouse's close, so the close is timed too
 * (`close`), apart from the load's figures, which stay what they were.
 *
 * `--answer off` hands the loader the records alone, without the answer's text the HTTP layer made them from: the
 * loader reads that text only to archive it, so without an archive it is the HTTP layer's, and making a 1.4 MB string
 * a page in the measured process charged the loader 2.5-7 us a row of collecting it (bench/replay.ts uses it to set
 * the loader against the floor, which has no such text). bench/archive.ts keeps it on in both runs, since a live load
 * has the text whether or not it archives it.
 */
// First, as the binary does: Node's heap policy while the heap is small (src/cli/apply-heap-policy.ts).
import '../src/cli/apply-heap-policy.js';
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { PageLoader } from '../src/sync/page-loader.js';
import type { CursorState } from '../src/warehouse/index.js';
import { Warehouse } from '../src/warehouse/index.js';
import { createTableSql } from '../src/warehouse/load/ddl.js';
import { openRecording } from './recording.js';

export interface ReplayBand {
  /** Table rows at the end of the band. */
  rows: number;
  /** Wall and process CPU milliseconds per row within the band (load calls, walk ends). */
  wallUsPerRow: number;
  cpuUsPerRow: number;
  rssMb: number;
  /** Of the RSS: the V8 heap in use, and memory outside it (Buffers, DuckDB's native memory is in rssMb alone). */
  heapMb: number;
  externalMb: number;
}

export interface ReplayReport {
  rows: number;
  pages: number;
  wallMs: number;
  cpuMs: number;
  /** Of the totals: the final finishLoads + CHECKPOINT. */
  finalMs: number;
  bands: ReplayBand[];
  maxRssKb: number;
  /**
   * The highest RSS sampled (every 20 ms) while loading pages, ending walks, in the final merge + checkpoint, and in
   * the bench's own check of the table afterwards (not part of the load, nor of maxRssKb).
   */
  peakByPhaseMb: Record<Phase, number>;
  duckdbMemoryMb: Record<string, number>;
  steps: Record<string, number>;
  /** The daemon's query copy of the loaded warehouse (query-copy.ts): wall and CPU ms, bytes, after the check. */
  queryCopy: { wallMs: number; cpuMs: number; bytes: number; rows: number };
  /** Whether the warehouse kept its archive. */
  archive: boolean;
  /**
   * The warehouse's close (merges nothing here: finishLoads ran; with the archive, the roll-up of the spool left open
   * into Parquet), wall and process CPU ms. Not in wallMs / cpuMs.
   */
  close: { wallMs: number; cpuMs: number; error: string | null };
  /**
   * The process's CPU ms from before the first page to after the close, everything included (reading the recording,
   * the check, the query copy): a roll-up the archive starts in the background during the load (at 64 MiB of spool)
   * runs on a DuckDB thread, and what of it falls between two timed loads is only here.
   */
  processCpuMs: number;
}

const { values } = parseArgs({
  options: {
    recording: { type: 'string' },
    rows: { type: 'string', default: '1000000' },
    db: { type: 'string' },
    'merge-rows': { type: 'string' },
    keyed: { type: 'boolean', default: false },
    immediate: { type: 'boolean', default: false },
    'track-seen': { type: 'boolean', default: false },
    band: { type: 'string', default: '100000' },
    /** DuckDB settings to try, `name=value` (repeatable), e.g. `--set memory_limit=256MB`. */
    set: { type: 'string', multiple: true, default: [] },
    archive: { type: 'string', default: 'on' },
    answer: { type: 'string', default: 'on' },
  },
});
if (values.archive !== 'on' && values.archive !== 'off') throw new Error(`--archive ${values.archive}: want on or off`);
if (values.answer !== 'on' && values.answer !== 'off') throw new Error(`--answer ${values.answer}: want on or off`);
if (!values.recording || !values.db) throw new Error('--recording and --db are required');
// Pages are read from the file and parsed outside the timing, one at a time: the measured process holds a page in
// flight, as a backfill does, rather than the ~30 MB recording (or the ~150 MB of its objects).
const recording = openRecording(values.recording);
const stream = recording.stream;
const target = Number(values.rows);
const bandRows = Number(values.band);
let [low, high] = [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
for (let i = 0; i < recording.pages; i++) {
  for (const r of recording.page(i)) [low, high] = [Math.min(low, Number(r.id)), Math.max(high, Number(r.id))];
}
const span = high - low + 1;

// The memory settings of the bin: the heap policy was applied by the first import; the warehouse sets its own.
const warehouse = await Warehouse.open(values.db, {
  archive: values.archive === 'on',
  ...(values['merge-rows'] !== undefined ? { mergeRows: Number(values['merge-rows']) } : {}),
});
for (const setting of values.set) {
  const [name, value] = setting.split('=', 2);
  if (!name || value === undefined || !/^[a-z_]+$/.test(name)) throw new Error(`--set ${setting}: want name=value`);
  await warehouse.query(`SET ${name} = '${value.replaceAll("'", "''")}'`);
}
if (values.keyed) await warehouse.query(createTableSql(stream).replace(/\n\)$/, `,\n  PRIMARY KEY ("id")\n)`));
await warehouse.ensureTable(stream);
// A run with its load session open (warehouse.openLoad) stages its pages and merges them in batches; `--immediate`
// loads with a run id no session is open for, so every page is merged in its own transaction.
const runId = values.immediate
  ? 'replay-immediate'
  : warehouse.openLoad(await warehouse.runs.start('backfill', { bench: 'replay' })).runId;
const loader = new PageLoader(warehouse, runId);

type Phase = 'pages' | 'walk ends' | 'final' | 'check';
// Where the peak is: bands sample RSS between pages, and a merge's transient memory falls between two samples.
let phase: Phase = 'pages';
const peakByPhaseMb: Record<Phase, number> = { pages: 0, 'walk ends': 0, final: 0, check: 0 };
const sampler = setInterval(() => {
  peakByPhaseMb[phase] = Math.max(peakByPhaseMb[phase], Math.round(process.memoryUsage.rss() / 1e6));
}, 20);

const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};
const memoryMb = () => {
  const m = process.memoryUsage();
  return {
    rssMb: Math.round(m.rss / 1e6),
    heapMb: Math.round(m.heapUsed / 1e6),
    externalMb: Math.round(m.external / 1e6),
  };
};
process.stderr.write(`replay-child: before loading ${JSON.stringify(memoryMb())}\n`);
const processCpu0 = cpuMs();
const bands: ReplayBand[] = [];
let loaded = 0;
let pages = 0;
let wall = 0;
let cpu = 0;
let band = { wall: 0, cpu: 0, rows: 0 };
const stamp = '2030-01-01 00:00:00';

for (let pass = 0; loaded < target; pass++) {
  const eventId = 1_000_000 + pass;
  const walk = {
    mode: 'backfill' as const,
    walkId: `replay-${pass}`,
    from: null,
    to: stamp,
    lastKey: 0,
    pages: 0,
    rows: 0,
  };
  const scope = { key: `event:${eventId}`, column: 'event_id', value: eventId };
  // The engine's rule at a walk's start, timed with the walk: seen ids only where the scope holds rows.
  const s0 = performance.now();
  const sc0 = cpuMs();
  const tracksSeen = values['track-seen'] || (await warehouse.current.scopeHoldsRows(stream.name, scope));
  band.wall += performance.now() - s0;
  band.cpu += cpuMs() - sc0;
  for (let i = 0; i < recording.pages; i++) {
    if (loaded >= target) break;
    // Read and shifted outside the timing: new ids and an event of its own for every pass.
    const records = recording.page(i);
    for (const r of records) {
      r.id = Number(r.id) + pass * span;
      r.event_id = eventId;
    }
    walk.pages += 1;
    walk.rows += records.length;
    walk.lastKey = Number(records[records.length - 1]?.id ?? 0);
    const cursor: CursorState = {
      stream: stream.name,
      scope: scope.key,
      watermark: null,
      walk: { ...walk },
      lastPages: null,
      lastSweepAt: null,
      updatedAt: stamp,
    };
    // The answer's text, as the engine's walks hand it over from the HTTP layer (made outside the timing: the live
    // path has it for free); the archive keeps it as it is.
    const answer =
      values.answer === 'on'
        ? { text: JSON.stringify({ items: records, _meta: { pageCount: 1 } }), quarantinedAt: [] }
        : undefined;
    const w0 = performance.now();
    const c0 = cpuMs();
    await loader.load({
      stream,
      scope,
      records,
      cursor,
      ...(answer ? { answer } : {}),
      ...(tracksSeen ? { seenWalkId: walk.walkId } : {}),
    });
    band.wall += performance.now() - w0;
    band.cpu += cpuMs() - c0;
    band.rows += records.length;
    loaded += records.length;
    pages++;
    if (loaded % bandRows < records.length || loaded >= target) {
      wall += band.wall;
      cpu += band.cpu;
      bands.push({
        rows: loaded,
        wallUsPerRow: Number(((band.wall * 1000) / band.rows).toFixed(2)),
        cpuUsPerRow: Number(((band.cpu * 1000) / band.rows).toFixed(2)),
        ...memoryMb(),
      });
      band = { wall: 0, cpu: 0, rows: 0 };
    }
  }
  // The walk's end, as the engine does it: closed cursor, then (a walk that tracked seen ids) deletes detected over
  // the scope (merges first).
  const w0 = performance.now();
  const c0 = cpuMs();
  phase = 'walk ends';
  await warehouse.cursors.save({
    stream: stream.name,
    scope: scope.key,
    watermark: stamp,
    walk: null,
    lastPages: walk.pages,
    lastSweepAt: stamp,
    updatedAt: stamp,
  });
  if (tracksSeen) await warehouse.markMissing({ stream, scope, walkId: walk.walkId, runId, at: stamp });
  phase = 'pages';
  band.wall += performance.now() - w0;
  band.cpu += cpuMs() - c0;
}
const w0 = performance.now();
const c0 = cpuMs();
phase = 'final';
await warehouse.finishLoads(runId);
await warehouse.checkpoint();
const finalMs = performance.now() - w0;
wall += band.wall + finalMs;
cpu += band.cpu + (cpuMs() - c0);
const memory = await warehouse.query(
  `SELECT tag, round(memory_usage_bytes / 1e6) AS mb FROM duckdb_memory() WHERE memory_usage_bytes > 1e6`,
);
// The load's peak, taken before the check below: its count(DISTINCT id) holds a hash of every id (~100 MB at 5M
// rows), which is the bench's verification, not the load's memory (reported apart as the phase 'check').
const maxRssKb = process.resourceUsage().maxRSS;
phase = 'check';
const counted = await warehouse.query(`SELECT count(*) AS n, count(DISTINCT id) AS k FROM ${stream.name}`);
const steps = warehouse.loadTimings();
// What a query through a daemon holding this warehouse waits for when something changed: the query copy.
const copyPath = `${values.db}.query-copy`;
const copyWall = performance.now();
const copyCpu = cpuMs();
const copied = await warehouse.writeQueryCopy(copyPath);
const queryCopy = {
  wallMs: Math.round(performance.now() - copyWall),
  cpuMs: Math.round(cpuMs() - copyCpu),
  bytes: copied.bytes,
  rows: Number(
    (
      await Warehouse.querySnapshot(copyPath, `SELECT count(*) AS n FROM ${stream.name}`, {
        form: 'json',
        sandbox: { allowRead: [] },
        limits: {},
      })
    ).rows[0]?.n,
  ),
};
rmSync(copyPath, { force: true });
const closeWall = performance.now();
const closeCpu = cpuMs();
// A failed close (the archive's roll-up) is reported, not thrown: the load's figures above stand without it.
let closeError: string | null = null;
await warehouse.close().catch((err: unknown) => {
  closeError = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? 'failed';
  process.stderr.write(`replay-child: the warehouse's close failed: ${closeError}\n`);
});
const close = {
  wallMs: Math.round(performance.now() - closeWall),
  cpuMs: Math.round(cpuMs() - closeCpu),
  error: closeError,
};
if (Number(counted.rows[0]?.n) !== loaded || Number(counted.rows[0]?.k) !== loaded) {
  throw new Error(`replay: table holds ${JSON.stringify(counted.rows[0])}, loaded ${loaded}`);
}
const report: ReplayReport = {
  rows: loaded,
  pages,
  wallMs: Math.round(wall),
  cpuMs: Math.round(cpu),
  finalMs: Math.round(finalMs),
  bands,
  maxRssKb,
  peakByPhaseMb,
  duckdbMemoryMb: Object.fromEntries(memory.rows.map((r) => [String(r.tag), Number(r.mb)])),
  queryCopy,
  archive: values.archive === 'on',
  close,
  processCpuMs: Math.round(cpuMs() - processCpu0),
  steps: Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, Math.round(v)])),
};
clearInterval(sampler);
process.stdout.write(`${JSON.stringify(report)}\n`);
