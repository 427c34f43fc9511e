/**
 * Warehouse load throughput: registrant-shaped rows (48 columns: ids, text, decimals, timestamps, a date, two
 * BIGINT[] and a JSON column) loaded through `Warehouse.loadPage` in pages, each page its own transaction with a
 * cursor update, into a table that grows to the full row count. Then a phase of updates to existing rows.
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
import { defineStream, type NormalizedRow, type ResolvedStream } from '../connectors/types.js';
import { createTableSql } from '../src/warehouse/ddl.js';
import { Warehouse } from '../src/warehouse/index.js';

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

const MONEY = 'decimal(12,2)';
const definition = defineStream({
  name: 'bench_registrants',
  path: '/registrants',
  scope: 'event',
  kind: 'list',
  key: ['id'],
  cursor: 'updated_at',
  maxPerPage: 1000,
  fields: {
    id: 'bigint',
    event_id: 'bigint',
    contact_id: 'bigint',
    group_id: 'bigint',
    reg_type_id: 'bigint',
    package_id: 'bigint',
    discount_code: 'text',
    email: 'text',
    prefix: 'text',
    first_name: 'text',
    middle_name: 'text',
    last_name: 'text',
    suffix: 'text',
    company: 'text',
    job_title: 'text',
    work_phone: 'text',
    mobile_phone: 'text',
    gender: 'choice',
    birth_date: 'date',
    bio: 'text',
    session_ids: 'bigint[]',
    waitlisted_session_ids: 'bigint[]',
    notes: 'text',
    reference: 'text',
    ip_address: 'text',
    individual_net: MONEY,
    individual_tax: MONEY,
    individual_gross: MONEY,
    group_net: MONEY,
    group_gross: MONEY,
    group_paid: MONEY,
    group_balance_due: MONEY,
    payment_method: 'text',
    payment_status: 'text',
    registration_status: 'text',
    language: 'text',
    timezone: 'text',
    secure_id: 'text',
    registered_at: 'timestamp',
    cancelled_at: 'timestamp',
    checked_in_at: 'timestamp',
    created_at: 'timestamp',
    updated_at: 'timestamp',
  },
  verified: true,
  description: 'benchmark registrants',
});
const stream: ResolvedStream = {
  ...definition,
  expandSelected: [],
  customFieldList: [
    { name: 'c_100', label: 'Dietary needs', type: 'json' },
    { name: 'c_101', label: 'Note', type: 'text' },
  ],
};

const STATUSES = ['confirmed', 'pending', 'approved', 'denied', 'cancelled', 'attended'];
const EVENTS = 20;
const BASE = Date.UTC(2024, 0, 1);

function ts(seconds: number): string {
  return new Date(BASE + seconds * 1000).toISOString().slice(0, 19).replace('T', ' ');
}

/** One normalized registrant row (the forms the normalizer produces), varied by `i` and `version`. */
function row(i: number, version: number): NormalizedRow {
  const gross = 100 + (i % 400) + version;
  return {
    id: i,
    event_id: 1 + (i % EVENTS),
    contact_id: 100000 + i,
    group_id: i % 7 === 0 ? null : i % 5000,
    reg_type_id: i % 4,
    package_id: i % 3,
    discount_code: i % 9 === 0 ? 'EARLY' : null,
    email: `user${i}@example.com`,
    prefix: 'Dr',
    first_name: `First${i}`,
    middle_name: null,
    last_name: `Last${i}`,
    suffix: null,
    company: `Company ${i % 1000}`,
    job_title: 'Engineer',
    work_phone: '+1 555 0100',
    mobile_phone: null,
    gender_id: i % 2,
    gender: i % 2 ? 'Female' : 'Male',
    birth_date: '1980-05-06',
    bio: 'Lorem ipsum dolor sit amet, consectetur adipiscing elit.',
    session_ids: [i % 50, (i % 50) + 1, (i % 50) + 2],
    waitlisted_session_ids: [],
    notes: version ? `updated ${version}` : null,
    reference: `R${i}`,
    ip_address: '10.0.0.1',
    individual_net: `${gross}.00`,
    individual_tax: '20.00',
    individual_gross: `${gross + 20}.00`,
    group_net: `${gross}.00`,
    group_gross: `${gross + 20}.00`,
    group_paid: `${gross + 20}.00`,
    group_balance_due: '0.00',
    payment_method: 'card',
    payment_status: 'paid',
    registration_status: STATUSES[i % STATUSES.length] ?? null,
    language: 'en',
    timezone: 'UTC',
    secure_id: `s${i}xyz`,
    registered_at: ts(i),
    cancelled_at: null,
    checked_in_at: i % 3 ? null : ts(i + 100),
    created_at: ts(i),
    updated_at: ts(i + 5 + version * 86400),
    c_100: '[{"id":1,"value":"Vegetarian"}]',
    c_101: 'note',
  };
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
      runId: `bench-${label}`,
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
        updatedAt: ts(from),
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
