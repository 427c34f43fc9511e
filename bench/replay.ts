/**
 * The loader alone, without the simulator's serving speed: registrant pages recorded once from the `large`
 * simulator, then replayed from memory into the engine's loader (normalize + load + checkpoint) in a process of its
 * own (replay-child.ts), with DuckDB on one thread. The table grows to 1M rows (quick) or 5M (full), so the figures
 * say whether the cost of a row and the memory depend on how many rows the table already holds.
 *
 * Rows per second are given per second of the process's CPU time (all its threads), which is what "one core"
 * measures and what other processes on a shared machine distort least; wall-clock rows/s are in the detail.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { customFieldsFromDefinitions } from '../connectors/index.js';
import { requestFields } from '../schemas/columns.js';
import { type BenchOptions, figure, jsonChild, round, type ScenarioResult, tempDir } from './lib.js';
import { type Recording, writeRecording } from './recording.js';
import type { ReplayReport } from './replay-child.js';
import type { FloorReport } from './replay-floor.js';
import { simulatorClient, simulatorRegistrants, simulatorTruth } from './sim-client.js';
import { startSimProcess } from './sim-process.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const CHILD = join(HERE, 'replay-child.js');
const FLOOR_CHILD = join(HERE, 'replay-floor.js');
/** Pages recorded: 20k rows, a typical event's registrants; replayed as many times as the size needs. */
const RECORDED_PAGES = 20;

/** Records the first pages of registrants of the first event with enough of them, as the engine requests them. */
export async function record(o: BenchOptions): Promise<Recording> {
  const sim = await startSimProcess({ size: 'large', rateLimit: '10000000/600' });
  const client = simulatorClient(sim, {
    rateLimit: { limit: 10_000_000, windowMs: 600_000 },
  });
  try {
    const truth = (name: string) => simulatorTruth(sim.baseUrl, name);
    const { stream, questions } = await simulatorRegistrants(sim.baseUrl);
    for (const event of await truth('events')) {
      const eventId = Number(event.id);
      const own = customFieldsFromDefinitions(questions.filter((q) => Number(q.event_id) === eventId));
      const pages: Record<string, unknown>[][] = [];
      for await (const page of client.keyset<{ id: number }>('/registrants', {
        params: { event_id: eventId },
        fields: requestFields(
          stream,
          own.map((f) => f.name),
        ),
        perPage: stream.maxPerPage,
      })) {
        pages.push(page.items as unknown as Record<string, unknown>[]);
        if (pages.length >= RECORDED_PAGES) break;
      }
      if (pages.length >= RECORDED_PAGES && pages.every((p) => p.length === stream.maxPerPage)) {
        o.log(`replay: recorded ${pages.length} pages of registrants of event ${eventId}`);
        return { stream, pages };
      }
    }
    throw new Error('replay: no event has enough registrants to record');
  } finally {
    await client.close();
    await sim.stop();
  }
}

async function replay(file: string, db: string, rows: number, extra: string[]): Promise<ReplayReport> {
  return jsonChild<ReplayReport>([CHILD, '--recording', file, '--db', db, '--rows', String(rows), ...extra]);
}

const mb = (kb: number) => round(kb / 1024, 1);

/** Mean CPU microseconds per row over the bands ending at or below `upTo` rows (or above `from`). */
function cpuPerRow(r: ReplayReport, from: number, upTo: number): number {
  const bands = r.bands.filter((b) => b.rows > from && b.rows <= upTo);
  return bands.reduce((s, b) => s + b.cpuUsPerRow, 0) / Math.max(1, bands.length);
}

/** The highest RSS sampled at the end of the bands in (from, upTo] rows. */
function peakRss(r: ReplayReport, from: number, upTo: number): number {
  return Math.max(0, ...r.bands.filter((b) => b.rows > from && b.rows <= upTo).map((b) => b.rssMb));
}

export async function replayScenarios(o: BenchOptions): Promise<ScenarioResult[]> {
  const tmp = tempDir();
  try {
    const recording = await record(o);
    const file = tmp.path('recording.json');
    writeRecording(file, recording);
    const big = o.quick ? 1_000_000 : 5_000_000;
    o.log(`replay: ${big} rows into a growing table`);
    // The loader alone, as the floor below measures it: the page archive (on by default) is left out, and with it
    // the answer's text, which only the archive reads (replay-child.ts --answer).
    const r = await replay(file, tmp.path('replay.duckdb'), big, ['--archive', 'off', '--answer', 'off']);
    o.log('replay: the floor of this shape (DuckDB alone reading and inserting the same pages)');
    const floor = await jsonChild<FloorReport>([FLOOR_CHILD, '--recording', file, '--dir', tmp.path('floor')]);
    const first = cpuPerRow(r, 0, 200_000);
    const last = cpuPerRow(r, big - 1_000_000, big);
    const oneM = r.bands.find((b) => b.rows >= 1_000_000);
    /** The engine's rows per CPU-second, its ratio to the floor, and the contract floor's (replay-floor.ts). */
    const rate = Math.round(r.rows / (r.cpuMs / 1000));
    const ofFloor = round(rate / floor.floorRowsPerCpuSecond, 2);
    const contractOfFloor = round(floor.contract.rowsPerCpuSecond / floor.floorRowsPerCpuSecond, 2);
    const out: ScenarioResult[] = [
      figure(
        `replay: load ${r.rows} recorded registrants (normalize + load + checkpoint), one core`,
        'rows per CPU-second',
        rate,
        30_000,
        '>=',
        `${Math.round(r.rows / (r.wallMs / 1000))} rows/s wall; ${r.pages} pages of ${(RECORDED_PAGES * 1000) / RECORDED_PAGES} rows, ` +
          `DuckDB on 1 thread, archive off (--archive off) and no answer text (--answer off), staged pages merged in batches, each pass the first backfill of an event of its own (no seen ids: src/sync/walk.ts); final merge + checkpoint ${r.finalMs} ms; ms by step: ` +
          Object.entries(r.steps)
            .map(([k, v]) => `${k} ${v}`)
            .join(', '),
      ),
      figure(
        `replay: cost per row, last 1M rows vs first 200k (table at ${r.rows} rows)`,
        'ratio',
        round(last / first, 2),
        1.1,
        '<=',
        `${round(last, 1)} vs ${round(first, 1)} us CPU per row; per band of 100k: ` +
          r.bands.map((b) => `${b.rows / 1000}k ${b.cpuUsPerRow}`).join(', '),
      ),
      figure(
        `replay: peak RSS loading ${r.rows} rows`,
        'MB',
        mb(r.maxRssKb),
        400,
        '<',
        `RSS at 1M rows ${oneM?.rssMb ?? '-'} MB, at the end ${r.bands[r.bands.length - 1]?.rssMb} MB; highest sampled (MB, 1e6 B) ` +
          `by phase: ${Object.entries(r.peakByPhaseMb)
            .map(([k, v]) => `${k} ${v}`)
            .join(
              ', ',
            )} (the check, a count of distinct ids after the load, is not part of the peak); DuckDB memory at the end: ` +
          Object.entries(r.duckdbMemoryMb)
            .map(([k, v]) => `${k} ${v} MB`)
            .join(', '),
      ),
      figure(
        `replay: RSS growth, the highest sampled after 1M rows vs up to 1M (table at ${r.rows} rows)`,
        'ratio',
        round(peakRss(r, 1_000_000, r.rows) / Math.max(1, peakRss(r, 0, 1_000_000)), 2),
        1.15,
        '<=',
        `${peakRss(r, 1_000_000, r.rows)} vs ${peakRss(r, 0, 1_000_000)} MB RSS sampled at the end of each 100k band; ` +
          `Node heap in use per band: ${r.bands.map((b) => b.heapMb).join(', ')} MB`,
      ),
      figure(
        `replay: the floor for this shape (normalize + stringify, then DuckDB alone inserting the page files), one core`,
        'rows per CPU-second',
        floor.floorRowsPerCpuSecond,
        null,
        null,
        `${floor.rows} rows; us CPU per row: normalize + stringify ${floor.jsUsPerRow}; DuckDB read_json of the ` +
          `${floor.fileColumns} columns the files carry ${floor.parseUsPerRow}; insert into a ${floor.fileColumns}-column ` +
          `table ${floor.narrowInsertUsPerRow}; insert into the stream's ${floor.tableColumns}-column table ` +
          `${floor.tableInsertUsPerRow}; the engine above reaches ${ofFloor} of the floor`,
      ),
      figure(
        `replay: the engine vs the floor (rows per CPU-second, the replay above against the floor above)`,
        'ratio',
        ofFloor,
        0.8,
        '>=',
        `${rate} vs ${floor.floorRowsPerCpuSecond}; the floor plus the page contract alone (below) reaches ` +
          `${contractOfFloor} of the floor, and the engine ${round(rate / floor.contract.rowsPerCpuSecond, 2)} of that`,
      ),
      figure(
        `replay: the floor plus the page contract (each page normalized, stringified, staged durably and committed with its cursor; merged 100 pages at a time), one core`,
        'rows per CPU-second',
        floor.contract.rowsPerCpuSecond,
        null,
        null,
        `${floor.contract.rows} rows, ${floor.contract.usPerRow} us CPU per row: normalize + stringify ` +
          `${floor.contract.parts.normalizeStringify}, the staged file written and synced ${floor.contract.parts.stagedWrite}, ` +
          `the page's transaction (registration + cursor) ${floor.contract.parts.pageTransaction}, the merge's INSERT ` +
          `from read_json + CHECKPOINT ${floor.contract.parts.mergeInsert}; ` +
          `${contractOfFloor} of the floor (replay-floor.ts): ` +
          'no loader that keeps the contract does less, so none comes nearer to the floor than this',
      ),
      figure(
        `replay: the Appender path for this shape (normalize, then append value by value into the stream's table), one core`,
        'rows per CPU-second',
        Math.round(1e6 / floor.appenderUsPerRow),
        null,
        null,
        `${floor.rows} rows; ${floor.appenderUsPerRow} us CPU per row (normalize + append + flush + checkpoint) against ` +
          `${round(floor.jsUsPerRow + floor.tableInsertUsPerRow, 1)} for normalize + stringify + read_json + insert (the floor above)`,
      ),
      figure(
        `replay: the daemon's query copy of the ${r.rows}-row warehouse (what a query waits for after a change)`,
        's',
        round(r.queryCopy.wallMs / 1000, 2),
        null,
        null,
        `${round(r.queryCopy.cpuMs / 1000, 2)} s of CPU, ${round(r.queryCopy.bytes / 1_048_576, 0)} MiB; the copy holds ` +
          `${r.queryCopy.rows} rows (src/warehouse/copies/query-copy.ts: the file's bytes at a checkpoint)`,
      ),
    ];
    return out;
  } finally {
    tmp.remove();
  }
}
