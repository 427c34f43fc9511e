/**
 * The floor under the replay (replay.ts): what the least a page load needs costs for the recorded registrant shape,
 * with none of evsync's bookkeeping. The recorded pages are normalized and written as the loader writes them (JSON
 * arrays of the columns not null in the page), then DuckDB alone, on one thread, reads them with `read_json` and
 * declared types 100 files at a time:
 *   - parsed into a temporary table (JSON reading alone),
 *   - inserted into a table of only the columns the files carry,
 *   - inserted into the stream's own table (its typed columns and the one custom-fields JSON column);
 *   - and, instead of the JSON files, the Appender of @duckdb/node-api: the records normalized again and appended
 *     value by value into a copy of the stream's table (strings cast by the appender to the column's type, id lists
 *     as their text), flushed every page.
 * Each in this process's CPU time per row, so the engine's figure can be read against the floor of its shape.
 *
 * Then the floor with only what the page contract of the loader adds to it (src/warehouse/load/load.ts: a page's
 * rows and its cursor commit together, and a page's rows are staged beside the database until their batch merges):
 * each page read from the recording's text as the engine's replay reads it (replay-child.ts, outside the timing),
 * normalized and stringified, written as a durable staged file by the engine's own Staging, registered with its
 * keys and the cursor moved in one transaction; every 100 pages one INSERT from read_json over their files and the
 * registrations dropped; a CHECKPOINT at the end. Everything else the engine does (deduplication, schema evolution,
 * the op log, seen ids, counts) is left out, so the engine cannot come nearer to the floor than this does.
 *
 *   node dist/bench/replay-floor.js --recording <file from replay.ts> --dir <scratch folder> [--pages 200]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type DuckDBAppender, DuckDBInstance } from '@duckdb/node-api';
import type { NormalizedRow, NormalizedValue, ResolvedStream } from '../connectors/types.js';
import { createNormalizer, type Normalizer } from '../normalizer/normalize.js';
import { duckJson, ident, literal } from '../src/warehouse/db/sql.js';
import { NEW_FILE_OPTIONS } from '../src/warehouse/index.js';
import { createTableSql } from '../src/warehouse/load/ddl.js';
import { Staging } from '../src/warehouse/load/stage.js';
import { openRecording, readRecording } from './recording.js';

export interface FloorReport {
  rows: number;
  tableColumns: number;
  fileColumns: number;
  /** Normalize + stringify, the JavaScript side of a page (microseconds of CPU per row). */
  jsUsPerRow: number;
  parseUsPerRow: number;
  narrowInsertUsPerRow: number;
  tableInsertUsPerRow: number;
  /** Rows per CPU-second of the JavaScript side plus the insert into the stream's table. */
  floorRowsPerCpuSecond: number;
  /** Normalize + append + flush into the stream's table by the Appender, microseconds of CPU per row. */
  appenderUsPerRow: number;
  /** The floor plus the page contract (see the file's comment), microseconds of CPU per row, and its parts. */
  contract: ContractReport;
}

export interface ContractReport {
  rows: number;
  usPerRow: number;
  rowsPerCpuSecond: number;
  /** Microseconds of CPU per row in each part (their sum is the total; reading the pages is outside it). */
  parts: { normalizeStringify: number; stagedWrite: number; pageTransaction: number; mergeInsert: number };
}

/** Appends one normalized value; the appender casts strings to the column's type (timestamps, decimals, JSON). */
function appendValue(appender: DuckDBAppender, value: NormalizedValue | undefined): void {
  if (value === null || value === undefined) appender.appendNull();
  else if (typeof value === 'string') appender.appendVarchar(value);
  else if (typeof value === 'number') appender.appendDouble(value);
  else if (typeof value === 'boolean') appender.appendBoolean(value);
  else appender.appendVarchar(JSON.stringify(value));
}

const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

/** A new database file `<dir>/<name>.duckdb` holding the stream's table; DuckDB on one thread, as a load runs it. */
async function openFloorDb(dir: string, name: string, stream: ResolvedStream) {
  const instance = await DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '160MB' });
  const db = await instance.connect();
  await db.run(`ATTACH ${literal(join(dir, `${name}.duckdb`))} AS ${ident(name)} (${NEW_FILE_OPTIONS})`);
  await db.run(`USE ${ident(name)}`);
  await db.run(createTableSql(stream));
  const described = await db.runAndReadAll(
    `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ${literal(stream.name)}`,
  );
  /** The table's columns and their types, in order. */
  const typeOf = new Map(described.getRows().map(([n, t]) => [String(n), String(t)]));
  const close = () => {
    db.closeSync();
    instance.closeSync();
  };
  return { db, typeOf, close };
}

/**
 * The rows of page files as the stream's table takes them, as the loader reads them (merge.ts pageRows): `read_json`
 * with declared types over `columns`, JSON text cast to JSON.
 */
function readPagesSql(files: readonly string[], columns: readonly string[], typeOf: ReadonlyMap<string, string>) {
  const spec = columns.map(
    (c) => `${literal(c)}: ${literal(typeOf.get(c) === 'JSON' ? 'VARCHAR' : String(typeOf.get(c)))}`,
  );
  const select = columns.map((c) => (typeOf.get(c) === 'JSON' ? `CAST(${ident(c)} AS JSON)` : ident(c)));
  return `SELECT ${select.join(', ')} FROM read_json([${files.map(literal).join(', ')}], format = 'array', columns = {${spec.join(', ')}})`;
}

/** A page's records normalized (any the normalizer refuses fails the bench: the recording is the service's own). */
function normalizePage(normalizer: Normalizer, records: readonly Record<string, unknown>[]): NormalizedRow[] {
  return records.map((r) => {
    const out = normalizer.normalize(r);
    if (!out.ok) throw new Error(`floor: ${out.reason}`);
    return out.row;
  });
}

/** As the loader does: the columns null in every row of the page stay out of its file. */
function fileColumnsOf(page: readonly NormalizedRow[]): string[] {
  return Object.keys(page[0] ?? {}).filter((k) => page.some((r) => r[k] != null));
}

/** Pages merged per INSERT: the floor reads its files 100 at a time too. */
const CONTRACT_BATCH = 100;

/** The floor plus the page contract (the file's comment), on a database of its own in `dir`. */
async function contractFloor(file: string, dir: string, pages: number): Promise<ContractReport> {
  const recording = openRecording(file);
  const stream = recording.stream;
  const normalizer = createNormalizer(stream);
  const staging = Staging.forDatabase(join(dir, 'contract.duckdb'));
  const { db, typeOf, close } = await openFloorDb(dir, 'contract', stream);
  const parts = { normalizeStringify: 0, stagedWrite: 0, pageTransaction: 0, mergeInsert: 0 };
  let total = 0;
  let rows = 0;
  try {
    await db.run('CREATE TABLE staged (file VARCHAR, row_count INTEGER, keys VARCHAR)');
    await db.run('CREATE TABLE cursors (stream VARCHAR, walk VARCHAR)');
    await db.run(`INSERT INTO cursors VALUES (${literal(stream.name)}, NULL)`);
    const register = await db.prepare('INSERT INTO staged VALUES ($1, $2, $3)');
    const cursor = await db.prepare('UPDATE cursors SET walk = $1 WHERE stream = $2');
    let columns: string[] | null = null;
    let pending: string[] = [];
    const merge = async () => {
      if (pending.length === 0 || columns === null) return;
      const files = pending.map((f) => staging.path(f));
      await db.run('BEGIN TRANSACTION');
      await db.run(
        `INSERT INTO ${ident(stream.name)} (${columns.map(ident).join(', ')}) ${readPagesSql(files, columns, typeOf)}`,
      );
      await db.run('DELETE FROM staged');
      await db.run('COMMIT');
      await staging.remove(pending);
      pending = [];
    };
    for (let p = 0; p < pages; p++) {
      // Read, parsed and given new ids outside the timing, as the engine's replay reads its pages (replay-child.ts).
      const source = recording.page(p % recording.pages);
      for (const r of source) r.id = Number(r.id) + p * 10_000_000;
      const c0 = cpuMs();
      const page = normalizePage(normalizer, source);
      columns ??= fileColumnsOf(page);
      const text = duckJson(page, columns);
      const c1 = cpuMs();
      const name = await staging.write(text, true);
      const c2 = cpuMs();
      await db.run('BEGIN TRANSACTION');
      register.bindVarchar(1, name);
      register.bindInteger(2, page.length);
      register.bindVarchar(3, JSON.stringify(page.map((r) => r.id)));
      await register.run();
      cursor.bindVarchar(1, `walk-${p}`);
      cursor.bindVarchar(2, stream.name);
      await cursor.run();
      await db.run('COMMIT');
      pending.push(name);
      const c3 = cpuMs();
      if (pending.length >= CONTRACT_BATCH || p === pages - 1) await merge();
      if (p === pages - 1) await db.run('CHECKPOINT');
      const c4 = cpuMs();
      parts.normalizeStringify += c1 - c0;
      parts.stagedWrite += c2 - c1;
      parts.pageTransaction += c3 - c2;
      parts.mergeInsert += c4 - c3;
      total += c4 - c0;
      rows += page.length;
    }
  } finally {
    close();
    staging.dispose();
  }
  const perRow = (ms: number) => Number(((ms * 1000) / rows).toFixed(1));
  return {
    rows,
    usPerRow: perRow(total),
    rowsPerCpuSecond: Math.round((rows * 1000) / total),
    parts: {
      normalizeStringify: perRow(parts.normalizeStringify),
      stagedWrite: perRow(parts.stagedWrite),
      pageTransaction: perRow(parts.pageTransaction),
      mergeInsert: perRow(parts.mergeInsert),
    },
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { recording: { type: 'string' }, dir: { type: 'string' }, pages: { type: 'string', default: '200' } },
  });
  if (!values.recording || !values.dir) throw new Error('--recording and --dir are required');
  const recording = readRecording(values.recording);
  const stream = recording.stream;
  const normalizer = createNormalizer(stream);
  const pages = Number(values.pages);
  const files: string[] = [];
  let columns: string[] | null = null;
  let rows = 0;
  let js = 0;
  mkdirSync(values.dir, { recursive: true });
  // The p-th page's records with ids of their own, made outside the timing (the engine's replay shifts its ids
  // outside its timing too: replay-child.ts).
  const shifted = (p: number) =>
    (recording.pages[p % recording.pages.length] ?? []).map((r) => ({ ...r, id: Number(r.id) + p * 10_000_000 }));
  for (let p = 0; p < pages; p++) {
    const source = shifted(p);
    const c0 = cpuMs();
    const normalized = normalizePage(normalizer, source);
    columns ??= fileColumnsOf(normalized);
    const text = duckJson(normalized, columns);
    js += cpuMs() - c0;
    rows += normalized.length;
    const file = join(values.dir, `page-${p}.json`);
    writeFileSync(file, text);
    files.push(file);
  }
  const cols = columns ?? [];
  const { db, typeOf, close } = await openFloorDb(values.dir, 'floor', stream);
  try {
    const list = cols.map(ident).join(', ');
    const read = (from: number) => readPagesSql(files.slice(from, from + 100), cols, typeOf);
    const timed = async (statement: (from: number) => string, checkpoint: boolean): Promise<number> => {
      const c0 = cpuMs();
      for (let i = 0; i < files.length; i += 100) await db.run(statement(i));
      if (checkpoint) await db.run('CHECKPOINT');
      return Number((((cpuMs() - c0) * 1000) / rows).toFixed(1));
    };
    const parse = await timed((i) => `CREATE OR REPLACE TEMP TABLE parsed AS ${read(i)}`, false);
    await db.run(`CREATE TABLE narrow AS ${read(0)} LIMIT 0`);
    const narrow = await timed((i) => `INSERT INTO narrow ${read(i)}`, true);
    const table = await timed((i) => `INSERT INTO ${ident(stream.name)} (${list}) ${read(i)}`, true);
    const appended = `${stream.name}_appended`;
    await db.run(createTableSql({ ...stream, name: appended }));
    const tableColumns = [...typeOf.keys()];
    let appending = 0;
    let c0 = cpuMs();
    const appender = await db.createAppender(appended);
    appending += cpuMs() - c0;
    for (let p = 0; p < pages; p++) {
      const source = shifted(p);
      c0 = cpuMs();
      for (const r of source) {
        const out = normalizer.normalize(r);
        if (!out.ok) throw new Error(`floor: ${out.reason}`);
        for (const c of tableColumns) appendValue(appender, out.row[c]);
        appender.endRow();
      }
      appender.flushSync();
      appending += cpuMs() - c0;
    }
    c0 = cpuMs();
    appender.closeSync();
    await db.run('CHECKPOINT');
    appending += cpuMs() - c0;
    const appenderUsPerRow = Number(((appending * 1000) / rows).toFixed(1));
    const report: FloorReport = {
      rows,
      tableColumns: typeOf.size,
      fileColumns: cols.length,
      jsUsPerRow: Number(((js * 1000) / rows).toFixed(1)),
      parseUsPerRow: parse,
      narrowInsertUsPerRow: narrow,
      tableInsertUsPerRow: table,
      floorRowsPerCpuSecond: Math.round(1e6 / ((js * 1000) / rows + table)),
      appenderUsPerRow,
      contract: await contractFloor(values.recording, values.dir, pages),
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    close();
  }
}

await main();
