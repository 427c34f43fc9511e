/**
 * Warehouse load throughput: the catalogue's registrants (connectors/registrants.ts, with four custom fields),
 * records generated as the API sends them and normalized by the engine's normalizer, loaded through
 * `Warehouse.loadPage` in pages of a run with its load session open (`openLoad`, as the sync engine loads them: each page its own
 * transaction with a cursor update, staged and merged in batches; `finishLoads` merges the rest), into a table that
 * grows to the full row count. Then a phase of updates to existing rows.
 *
 * Then the floor: DuckDB alone doing the least a durable page needs (BEGIN; INSERT the page from a JSON file written
 * beforehand; UPDATE the cursor row; COMMIT) with the same rows, table and settings, so the evsync figure can be
 * read against what DuckDB itself costs per page on this machine.
 *
 *   npx tsx bench/warehouse-load.ts [--rows 1000000] [--page 1000] [--updates 100000] [--floor-rows 200000]
 *                                   [--db path] [--json out.json]
 *
 * Prints rows/s (wall time of the loadPage calls, and of the whole phase including generating the rows), CPU time
 * per row, milliseconds per page in each step, and peak RSS. Figures depend on the machine and on what else runs
 * on it: the load average is printed too.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import type { NormalizedRow } from '../connectors/types.js';
import { createNormalizer } from '../normalizer/normalize.js';
import { Warehouse } from '../src/warehouse/index.js';
import { createTableSql } from '../src/warehouse/load/ddl.js';
import { registrantRecord, registrantsStream } from './registrant-record.js';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    page: { type: 'string', default: '1000' },
    updates: { type: 'string', default: '100000' },
    'floor-rows': { type: 'string', default: '200000' },
    db: { type: 'string' },
    json: { type: 'string' },
  },
});
const ROWS = Number(args.rows);
const PAGE = Number(args.page);
const UPDATES = Number(args.updates);
const FLOOR_ROWS = Number(args['floor-rows']);

const stream = registrantsStream();
const normalizer = createNormalizer(stream);

/** One normalized registrant row, varied by `i` and `version`. */
function row(i: number, version: number): NormalizedRow {
  const r = normalizer.normalize(registrantRecord(i, version));
  if (!r.ok) throw new Error(`bench record ${i}: ${r.reason}`);
  return r.row;
}

function page(from: number, count: number, version: number): NormalizedRow[] {
  const rows: NormalizedRow[] = [];
  for (let i = from; i < from + count; i++) rows.push(row(i, version));
  return rows;
}

interface Phase {
  /** Milliseconds per page in each step of loadPage (Warehouse.loadTimings). */
  stepsMsPerPage: Record<string, number>;
  rows: number;
  pages: number;
  loadSeconds: number;
  wallSeconds: number;
  cpuSeconds: number;
  rowsPerSecond: number;
  rowsPerSecondWall: number;
  inserted: number;
  updated: number;
  unchanged: number;
}

let peakRss = 0;

async function phase(w: Warehouse, label: string, start: number, total: number, version: number): Promise<Phase> {
  const runId = w.openLoad(await w.runs.start('backfill', { bench: label })).runId;
  let load = 0;
  let pages = 0;
  let inserted = 0;
  let updated = 0;
  let unchanged = 0;
  const steps0 = w.loadTimings();
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  for (let from = start; from < start + total; from += PAGE) {
    const rows = page(from, Math.min(PAGE, start + total - from), version);
    const t0 = performance.now();
    const r = await w.loadPage({
      stream,
      scope: { key: 'event:1', column: 'event_id', value: 1 },
      runId,
      rows,
      rejected: [],
      cursor: {
        stream: stream.name,
        scope: 'event:1',
        watermark: null,
        walk: {
          mode: 'backfill',
          walkId: label,
          from: null,
          to: null,
          lastKey: from + rows.length - 1,
          pages,
          rows: from,
        },
        lastPages: null,
        lastSweepAt: null,
        updatedAt: '2030-01-01 00:00:00',
      },
    });
    load += performance.now() - t0;
    pages++;
    inserted += r.inserted;
    updated += r.updated;
    unchanged += r.unchanged ?? 0;
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    if (pages % 100 === 0) {
      process.stderr.write(
        `\r${label}: ${from + rows.length - start} rows, ${Math.round((from + rows.length - start) / (load / 1000))} rows/s, rss ${Math.round(process.memoryUsage().rss / 1e6)} MB   `,
      );
    }
  }
  const t0 = performance.now();
  const merged = (await w.finishLoads(runId))[stream.name];
  load += performance.now() - t0;
  inserted += merged?.inserted ?? 0;
  updated += merged?.updated ?? 0;
  unchanged += merged?.unchanged ?? 0;
  process.stderr.write('\n');
  const cpu = process.cpuUsage(cpu0);
  const wall = (performance.now() - wall0) / 1000;
  const stepsMsPerPage: Record<string, number> = {};
  for (const [step, ms] of Object.entries(w.loadTimings())) {
    stepsMsPerPage[step] = Number(((ms - (steps0[step] ?? 0)) / pages).toFixed(2));
  }
  return {
    stepsMsPerPage,
    rows: total,
    pages,
    loadSeconds: load / 1000,
    wallSeconds: wall,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    rowsPerSecond: Math.round(total / (load / 1000)),
    rowsPerSecondWall: Math.round(total / wall),
    inserted,
    updated,
    unchanged,
  };
}

const dir = args.db ? null : mkdtempSync(join(tmpdir(), 'evsync-bench-'));
const dbPath = args.db ?? join(dir as string, 'bench.duckdb');
const w = await Warehouse.open(dbPath);
await w.ensureTable(stream);
const load1 = loadavg()[0] ?? 0;
const insert = await phase(w, 'insert', 1, ROWS, 0);
const update = UPDATES > 0 ? await phase(w, 'update', 1, Math.min(UPDATES, ROWS), 1) : null;
const counts = await w.tableCounts();
await w.close();

/** DuckDB alone: the minimum statements for a durable page, same data and settings. */
async function floor(path: string): Promise<{ rows: number; rowsPerSecond: number; msPerPage: number }> {
  const instance = await DuckDBInstance.create(path, { threads: '1', checkpoint_threshold: '256MB' });
  const con = await instance.connect();
  await con.run(createTableSql(stream));
  await con.run(`CREATE TABLE cursor_row (stream VARCHAR, page BIGINT)`);
  await con.run(`INSERT INTO cursor_row VALUES ('x', 0)`);
  const columns = Object.keys(row(1, 0));
  // Column types as the table declares them (read back), JSON read as text and cast, as loadPage does.
  const types = await (
    await con.runAndReadAll(`SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = '${stream.name}'`)
  ).getRowObjectsJson();
  const typeOf = new Map(types.map((r) => [String(r.column_name), String(r.data_type)]));
  const struct = columns.map((c) => `'${c}': '${typeOf.get(c) === 'JSON' ? 'VARCHAR' : typeOf.get(c)}'`).join(', ');
  const select = columns.map((c) => (typeOf.get(c) === 'JSON' ? `CAST("${c}" AS JSON)` : `"${c}"`)).join(', ');
  const insert = `INSERT INTO ${stream.name} (${columns.map((c) => `"${c}"`).join(', ')}, _synced_at, _run_id)
    SELECT ${select}, now()::TIMESTAMP, 'floor' FROM read_json($1, format = 'array', columns = {${struct}})`;
  const prepared = await con.prepare(insert);
  const cursorUpdate = await con.prepare(`UPDATE cursor_row SET page = $1 WHERE stream = 'x'`);
  let ms = 0;
  let pages = 0;
  for (let from = 1; from <= FLOOR_ROWS; from += PAGE) {
    const file = `${path}.page.json`;
    writeFileSync(file, JSON.stringify(page(from, Math.min(PAGE, FLOOR_ROWS - from + 1), 0)));
    const t0 = performance.now();
    await con.run('BEGIN TRANSACTION');
    prepared.bind([file]);
    await prepared.run();
    cursorUpdate.bind([BigInt(pages)]);
    await cursorUpdate.run();
    await con.run('COMMIT');
    ms += performance.now() - t0;
    pages++;
  }
  con.closeSync();
  instance.closeSync();
  return {
    rows: FLOOR_ROWS,
    rowsPerSecond: Math.round(FLOOR_ROWS / (ms / 1000)),
    msPerPage: Number((ms / pages).toFixed(2)),
  };
}
const floorResult = FLOOR_ROWS > 0 ? await floor(join(dir ?? tmpdir(), `floor-${process.pid}.duckdb`)) : null;
if (dir) rmSync(dir, { recursive: true, force: true });

const report = {
  rows: ROWS,
  pageSize: PAGE,
  columns: Object.keys(row(1, 0)).length,
  tableRows: counts[stream.name],
  insert,
  update,
  duckdbFloor: floorResult,
  peakRssMB: Math.round(peakRss / 1e6),
  maxRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
  loadAverageAtStart: Number(load1.toFixed(2)),
  loadAverageAtEnd: Number((loadavg()[0] ?? 0).toFixed(2)),
  node: process.version,
};
const fmt = (p: Phase) =>
  `${p.rows} rows in ${p.pages} pages: ${p.rowsPerSecond} rows/s in loadPage (${p.loadSeconds.toFixed(1)} s), ` +
  `${p.rowsPerSecondWall} rows/s with row generation, ${((p.cpuSeconds / p.rows) * 1e6).toFixed(1)} us CPU per row ` +
  `(inserted ${p.inserted}, updated ${p.updated}, unchanged ${p.unchanged})`;
const steps = (p: Phase) =>
  Object.entries(p.stepsMsPerPage)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
console.log(`insert: ${fmt(insert)}\n  ms per page: ${steps(insert)}`);
if (update) console.log(`update: ${fmt(update)}\n  ms per page: ${steps(update)}`);
if (floorResult) {
  console.log(
    `DuckDB floor (BEGIN, INSERT from read_json, cursor UPDATE, COMMIT; nothing else): ${floorResult.rowsPerSecond} rows/s, ${floorResult.msPerPage} ms per page over ${floorResult.rows} rows`,
  );
}
console.log(
  `peak RSS ${report.peakRssMB} MB (maxRSS ${report.maxRssMB} MB); load average ${report.loadAverageAtStart} -> ${report.loadAverageAtEnd}`,
);
if (args.json) writeFileSync(args.json, `${JSON.stringify(report, null, 2)}\n`);
