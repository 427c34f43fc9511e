/**
 * Loading one page. Everything a page changes commits in ONE transaction: schema evolution, rejected records, seen
 * ids, the cursor, and the rows, so a crash loses at most the page in flight and the cursor never runs ahead of data
 * the database holds. The rows are either merged into their table in that transaction, or (`defer`, the sync
 * engine's runs: see Warehouse.runs.start) staged: written as a durable file beside the database and registered in
 * `_evsync.staged` (staged.ts), to be merged later in a batch with other pages (merge.ts), which keeps the cost of a
 * page independent of how many rows the table already holds.
 *
 * Per page:
 * 1. Deduplicate by key in JavaScript: the latest `updated_at` wins when the stream has one (ties and streams
 *    without it: the last occurrence). A row without its key goes to `_evsync.rejected`.
 * 2. Schema evolution: columns the rows carry that the table lacks are added (typed from `newColumns`, else
 *    inferred from the values); values of evolved columns that do not fit widen the column (see widen.ts). Names
 *    compare case-insensitively, as DuckDB's identifiers do: a field `Email` beside a column `email` (or beside
 *    another new field `EMAIL`) cannot be a column of its own, so it is kept out and recorded once per stream in
 *    `_evsync.schema_changes` (change `skip_column`) instead of an ALTER TABLE that DuckDB would refuse.
 * 3. The rows as one JSON file (stage.ts), the scope column filled from the page's scope where a row has none.
 *    Merged rows get `_synced_at`/`_run_id` and `_deleted_at` NULL (a record that reappears is live again); columns
 *    of the table the page does not carry keep their stored values; identical rows are left alone (`unchanged`).
 *    A page merged at once fails whole if DuckDB refuses a value (malformed JSON text): nothing of it commits. A
 *    staged page holds normalizer output, which its columns take by construction; should one still be refused in
 *    its batch, its rows go to `_evsync.rejected` (merge-staged.ts).
 * 4. Seen ids (snapshots, sweeps) and the cursor row.
 */
import type { NormalizedRow, ResolvedStream, ScalarType } from '../../../connectors/types.js';
import { inferType } from '../../../normalizer/converters.js';
import type { OpLog } from '../archive/op-log.js';
import type { Db } from '../db/connection.js';
import { duckJson, utcNow } from '../db/sql.js';
import { keepObserved } from '../history/observations.js';
import { saveCursorFast } from '../state/cursors.js';
import { partitionOf } from '../state/publish-pending.js';
import { recordRejected } from '../state/rejected.js';
import type { LoadPageInput, LoadResult } from '../types.js';
import {
  applySchemaChange,
  declaredColumns,
  isEvolvableName,
  recordSchemaChange,
  type SchemaChange,
  type TableColumns,
} from './ddl.js';
import { mergePages } from './merge.js';
import type { Staging } from './stage.js';
import { type PageColumn, type PageFile, registerPage } from './staged.js';
import { fits, widen } from './widen.js';

/** DuckDB's JSON reader stops at 16 MiB per record (`maximum_object_size`); raising it costs twice that in memory. */
const MAX_ROW_BYTES = 16 * 1_048_576 - 4096;

/**
 * The rows a staged file can hold; a row whose JSON passes MAX_ROW_BYTES goes to `rejected` instead (its large
 * values replaced by their size, so the record stays identifiable), and its page loads without it.
 */
function withoutOversizedRows(rows: readonly NormalizedRow[], rejected: Rejected[]): NormalizedRow[] {
  const kept: NormalizedRow[] = [];
  for (const row of rows) {
    const bytes = Buffer.byteLength(duckJson(row));
    if (bytes <= MAX_ROW_BYTES) {
      kept.push(row);
      continue;
    }
    const raw: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(row)) {
      raw[k] = typeof v === 'string' && v.length > 65_536 ? `(${Buffer.byteLength(v)} bytes, not stored)` : v;
    }
    const mb = (bytes / 1_048_576).toFixed(1);
    rejected.push({ raw, reason: `record of ${mb} MB: larger than the loader's 16 MB per record` });
  }
  return kept;
}

export interface LoadDeps {
  db: Db;
  staging: Staging;
  timings: LoadTimings;
  /** Puts the instance in its loading configuration (see Warehouse). */
  loadMode(): Promise<void>;
  /** The table's columns (cached by the warehouse; created with ensureTable when missing). */
  columns(stream: ResolvedStream): Promise<TableColumns>;
  /** Forget cached columns and statements after DDL. */
  forget(table: string): void;
  /** Fields kept out for a case clash whose skip is recorded (`<table>\0<field>`), so it is recorded once. */
  skipped: Set<string>;
  /** Every page's op, logged in its transaction (archive/op-log.ts). */
  ops: OpLog;
  /**
   * Staged files are fsynced before their page commits (false for a rebuild's scratch: a kill of the process loses
   * no written file, and a resume that meets one lost to the machine's crash starts over: rebuild.ts).
   */
  durable: boolean;
}

type Rejected = { raw: unknown; reason: string };

/** Rows unique by key; rows lacking a key value are moved to `rejected`. */
function dedupeByKey(
  rows: readonly NormalizedRow[],
  key: readonly string[],
  byUpdatedAt: boolean,
  rejected: Rejected[],
): NormalizedRow[] {
  const out: NormalizedRow[] = [];
  const index = new Map<string, number>();
  const single = key.length === 1 ? (key[0] as string) : null;
  for (const row of rows) {
    let k: string;
    if (single !== null) {
      const v = row[single];
      if (v === null || v === undefined) {
        rejected.push({ raw: row, reason: `missing key column ${single}` });
        continue;
      }
      k = typeof v === 'object' ? JSON.stringify(v) : String(v);
    } else {
      const parts = key.map((c) => row[c]);
      const missing = key.filter((_, i) => parts[i] === null || parts[i] === undefined);
      if (missing.length) {
        rejected.push({ raw: row, reason: `missing key column ${missing.join(', ')}` });
        continue;
      }
      k = JSON.stringify(parts.map((p) => (typeof p === 'object' ? p : String(p))));
    }
    const at = index.get(k);
    if (at === undefined) {
      index.set(k, out.length);
      out.push(row);
      continue;
    }
    if (byUpdatedAt) {
      // 'YYYY-MM-DD HH:MM:SS' strings order as the times they name; a row without updated_at is the oldest.
      const prev = (out[at] as NormalizedRow).updated_at;
      const cur = row.updated_at;
      if (cur === null || cur === undefined) {
        if (prev !== null && prev !== undefined) continue;
      } else if (prev !== null && prev !== undefined && String(cur) < String(prev)) {
        continue;
      }
    }
    out[at] = row;
  }
  return out;
}

type ColumnTypes = Map<string, ScalarType | null>;
type Evolution = { changes: SchemaChange[]; types: ColumnTypes; skipped: SchemaChange[] };
/** A column whose type came from values rather than the definition: its values are checked against the type. */
type Checked = Map<string, { from: ScalarType | null; type: ScalarType; adding: boolean }>;

/** The listed type of a field, else the one its first non-null value on the page suggests. */
function firstType(
  rows: readonly NormalizedRow[],
  listed: Readonly<Record<string, ScalarType>>,
  name: string,
): ScalarType | null {
  const type = listed[name] ?? null;
  if (type !== null) return type;
  for (const row of rows) {
    const v = row[name];
    const inferred = inferType(v, 'row');
    if (inferred !== null) return inferred;
  }
  return null;
}

/**
 * The page's columns sorted out (first half of planEvolution): case clashes skipped, declared columns the table
 * lacks added, and the columns whose values must be checked against their type collected in the result's `checked`.
 */
function sortColumns(
  stream: ResolvedStream,
  table: TableColumns,
  rows: readonly NormalizedRow[],
  pageColumns: ReadonlySet<string>,
  listed: Readonly<Record<string, ScalarType>>,
): Evolution & { checked: Checked } {
  const out = { changes: [] as SchemaChange[], types: new Map(table), skipped: [] as SchemaChange[] };
  const checked: Checked = new Map();
  const declared = declaredColumns(stream);
  // Lower-cased names of the columns the table has or is about to get.
  const taken = new Map<string, string>();
  for (const name of table.keys()) taken.set(name.toLowerCase(), name);
  for (const name of pageColumns) {
    const current = table.get(name);
    const other = taken.get(name.toLowerCase());
    if (current === undefined && other !== undefined && other !== name) {
      const to = firstType(rows, listed, name) ?? 'text';
      const reason = `differs from column ${other} only in case (DuckDB identifiers are case-insensitive): not loaded`;
      out.skipped.push({
        table: stream.name,
        column: name,
        change: 'skip_column',
        origin: 'evolution',
        from: null,
        to,
        reason,
      });
      continue;
    }
    // A declared column whose table type is the declared one holds what the normalizer produced for it. One whose
    // type differs (an evolved column the catalogue declared later, a custom field that changed kind) is checked.
    const declaredType = declared.get(name);
    if (declaredType !== undefined && current === declaredType) continue;
    if (declaredType !== undefined && current === undefined) {
      // ensureTable was not called since the definition gained this column: add it as declared.
      const reason = 'column of the stream definition';
      out.changes.push({
        table: stream.name,
        column: name,
        change: 'add_column',
        origin: 'definition',
        from: null,
        to: declaredType,
        reason,
      });
      out.types.set(name, declaredType);
      taken.set(name.toLowerCase(), name);
      continue;
    }
    if (current !== undefined) {
      if (current !== null) checked.set(name, { from: current, type: current, adding: false });
      continue;
    }
    if (!isEvolvableName(name)) continue;
    const type = firstType(rows, listed, name);
    // A field that is null throughout the page says nothing about its type: wait for a page that has a value.
    if (type !== null) {
      checked.set(name, { from: null, type, adding: true });
      taken.set(name.toLowerCase(), name);
    }
  }
  return { ...out, checked };
}

/** Works out the schema changes a page needs; returns them with the table's column types after the changes. */
function planEvolution(
  stream: ResolvedStream,
  table: TableColumns,
  rows: readonly NormalizedRow[],
  pageColumns: ReadonlySet<string>,
  listed: Readonly<Record<string, ScalarType>>,
): Evolution {
  const { changes, types, skipped, checked } = sortColumns(stream, table, rows, pageColumns, listed);
  for (const [name, entry] of checked) {
    for (const row of rows) {
      const v = row[name];
      if (v !== undefined && !fits(entry.type, v)) entry.type = widen(entry.type, v);
    }
    const at = { table: stream.name, column: name, origin: 'evolution' as const };
    if (entry.adding) {
      const reason = listed[name]
        ? 'field found by schema evolution'
        : 'field found by schema evolution (type inferred)';
      changes.push({ ...at, change: 'add_column', from: null, to: entry.type, reason });
      types.set(name, entry.type);
    } else if (entry.type !== entry.from) {
      const reason = `a value does not fit ${entry.from}: widened to ${entry.type}`;
      changes.push({ ...at, change: 'widen', from: entry.from, to: entry.type, reason });
      types.set(name, entry.type);
    }
  }
  return { changes, types, skipped };
}

/** Milliseconds spent per step of loadPage, summed over calls (for benchmarks and diagnosis). */
type LoadTimings = Record<string, number>;

const SEEN_SQL = `INSERT INTO _evsync.seen SELECT $1, $2, $3, unnest(CAST($4 AS BIGINT[]))`;

/** The rows' keys when the key is one integer column, else null (see PageFile.keys). */
function integerKeys(
  rows: readonly NormalizedRow[],
  key: readonly string[],
  types: ReadonlyMap<string, ScalarType | null>,
): number[] | null {
  const column = key[0] as string;
  const type = types.get(column);
  if (key.length !== 1 || (type !== 'bigint' && type !== 'integer')) return null;
  const out: number[] = [];
  for (const row of rows) {
    const v = row[column];
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) return null;
    out.push(v);
  }
  return out;
}

/** Names of the page's columns (keys aside) that are null in every row. */
function allNull(rows: readonly NormalizedRow[], columns: readonly PageColumn[], key: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const c of columns) {
    if (key.includes(c.name)) continue;
    if (rows.every((row) => row[c.name] === null || row[c.name] === undefined)) out.add(c.name);
  }
  return out;
}

/** Whether the rows' fields are all columns (not a case-clash twin, say, which the file must not hold). */
function onlyColumns(fields: ReadonlySet<string>, columns: readonly PageColumn[]): boolean {
  const names = new Set(columns.map((c) => c.name));
  for (const name of fields) if (!names.has(name)) return false;
  return true;
}

/** The rows with the scope column filled from the scope where a row has none (copies of those rows only). */
function fillScope(rows: NormalizedRow[], column: string, value: number | null): NormalizedRow[] {
  if (value === null) return rows;
  return rows.map((row) => (row[column] === null || row[column] === undefined ? { ...row, [column]: value } : row));
}

/** Records a case-clash skip once per stream and field (the insert is a no-op when an earlier run recorded it). */
async function recordSkip(db: Db, runId: string, c: SchemaChange): Promise<void> {
  const r = await db.query(
    `SELECT count(*) AS n FROM _evsync.schema_changes WHERE table_name = ? AND column_name = ? AND change = 'skip_column'`,
    [c.table, c.column],
  );
  if (Number(r.rows[0]?.n ?? 0) === 0) await recordSchemaChange(db, runId, c);
}

/** What a page will write, worked out without touching the database (preparePage). */
interface PreparedPage {
  changes: SchemaChange[];
  /** Case-clash skips not recorded yet by this process. */
  skips: SchemaChange[];
  rejected: Rejected[];
  /** The rows' file text and its description (the file's name comes when it is written); null without rows. */
  staged: { text: string; page: Omit<PageFile, 'seq' | 'file'> } | null;
}

/** The rows as the text of their page file, without the columns null in every row (and oversized rows). */
function pageText(
  rows: NormalizedRow[],
  columns: readonly PageColumn[],
  key: readonly string[],
  /** Every field the rows carry. */
  fields: ReadonlySet<string>,
  rejected: Rejected[],
): { rows: NormalizedRow[]; text: string; nulls: Set<string> } {
  // Columns null in every row stay out of the file when they are many (a page of a wide table most of whose
  // columns its rows leave empty): a smaller file, a cheaper stringify. Otherwise the rows are written whole
  // (DuckDB's reader skips a key its column list lacks): a replacer list sends V8 down its slow path.
  const write = (kept: NormalizedRow[]) => {
    const nulls = allNull(kept, columns, key);
    const whole = nulls.size * 4 <= columns.length && onlyColumns(fields, columns);
    const names = whole ? undefined : columns.filter((c) => !nulls.has(c.name)).map((c) => c.name);
    return { rows: kept, text: duckJson(kept, names), nulls };
  };
  const first = write(rows);
  // A page this large may hold a row DuckDB's reader cannot (16 MB per record): that row alone is quarantined.
  if (first.text.length <= MAX_ROW_BYTES / 4) return first;
  const kept = withoutOversizedRows(rows, rejected);
  return kept.length < rows.length ? write(kept) : first;
}

/**
 * Steps 1-3 of a page, pure: deduplicated rows, the schema changes they need (against `table`, the table's columns
 * now) and the text of their page file. `skipped` holds the case clashes already recorded (`<table>\0<field>`).
 */
function preparePage(input: LoadPageInput, table: TableColumns | null, skipped: ReadonlySet<string>): PreparedPage {
  const { stream, scope } = input;
  const rejected: Rejected[] = [...input.rejected];
  if (table === null || input.upsert === false || input.rows.length === 0) {
    return { changes: [], skips: [], rejected, staged: null };
  }
  let rows = dedupeByKey(input.rows, stream.key, table.has('updated_at'), rejected);
  const pageColumns = new Set<string>();
  for (const row of rows) for (const k in row) pageColumns.add(k);
  for (const k of stream.key) pageColumns.add(k);
  if (scope.column) pageColumns.add(scope.column);
  const evolution = planEvolution(stream, table, rows, pageColumns, input.newColumns ?? {});
  const skips = evolution.skipped.filter((c) => !skipped.has(`${c.table}\0${c.column}`));
  const columns: PageColumn[] = [];
  for (const [name, type] of evolution.types) {
    if (!name.startsWith('_') && type !== null && pageColumns.has(name)) columns.push({ name, type });
  }
  if (scope.column !== null && evolution.types.has(scope.column)) rows = fillScope(rows, scope.column, scope.value);
  if (rows.length === 0) return { changes: evolution.changes, skips, rejected, staged: null };
  const file = pageText(rows, columns, stream.key, pageColumns, rejected);
  const page = {
    stream: stream.name,
    scope: scope.key,
    rows: file.rows.length,
    columns,
    nulls: [...file.nulls],
    key: [...stream.key],
    keys: integerKeys(file.rows, stream.key, evolution.types),
    runId: input.runId,
    walkId: input.seen?.walkId ?? input.cursor?.walk?.walkId ?? null,
    eventId: partitionOf(scope),
    op: null,
  };
  return { changes: evolution.changes, skips, rejected, staged: { text: file.text, page } };
}

/** A timer of merge steps: adds the milliseconds since `since` to `timings[step]` and returns now. */
export function stepTimer(timings: LoadTimings): (step: string, since: number) => number {
  return (step, since) => {
    const now = performance.now();
    timings[step] = (timings[step] ?? 0) + (now - since);
    return now;
  };
}

/** Runs `fn`, adding its milliseconds to `timings[step]`. */
async function timed<T>(timings: LoadTimings, step: string, fn: () => Promise<T> | T): Promise<T> {
  const since = performance.now();
  try {
    return await fn();
  } finally {
    timings[step] = (timings[step] ?? 0) + (performance.now() - since);
  }
}

/** The transaction of step 4: schema changes, skips, rejected records, the rows (merged or registered), bookkeeping. */
async function commitPage(
  deps: LoadDeps,
  input: LoadPageInput,
  prepared: PreparedPage,
  page: PageFile | null,
  defer: boolean,
): Promise<LoadResult> {
  const { db, staging } = deps;
  const { stream, scope, runId } = input;
  await deps.loadMode();
  return db.transaction(async () => {
    if (prepared.changes.length) {
      for (const change of prepared.changes) {
        await applySchemaChange(db, change);
        await recordSchemaChange(db, runId, change);
      }
      deps.forget(stream.name);
    }
    for (const skip of prepared.skips) await recordSkip(db, runId, skip);
    await recordRejected(db, runId, stream.name, scope.key, prepared.rejected);
    let counts = { inserted: 0, updated: 0, unchanged: 0 };
    // Every page is logged, a page without rows too (its seen ids count for delete detection; its rejects).
    const at = utcNow(db.now);
    const op = await deps.ops.log(
      db,
      {
        kind: 'page',
        stream: stream.name,
        runId,
        entry: input.archiveEntry ?? null,
        detail: {
          scope: { key: scope.key, column: scope.column, value: scope.value },
          walk: input.seen?.walkId ?? null,
          idsOnly: input.upsert === false,
          staged: defer,
          ...(input.observed ? { observed: true } : {}),
        },
      },
      at,
    );
    if (page && input.observed) {
      const target = { table: stream.name, columns: await deps.columns(stream), pathOf: staging.path.bind(staging) };
      await keepObserved(db, page, { ...target, at });
    } else if (page && defer) await registerPage(db, { ...page, op: deps.ops.enabled ? op : null });
    else if (page) {
      const time = stepTimer(deps.timings);
      const target = {
        table: stream.name,
        columns: await deps.columns(stream),
        pathOf: staging.path.bind(staging),
        time,
        at,
      };
      counts = (await mergePages(db, [page], target)).get(runId) ?? counts;
    }
    if (input.seen && input.seen.ids.length > 0) {
      await db.runPrepared(SEEN_SQL, [stream.name, scope.key, input.seen.walkId, JSON.stringify(input.seen.ids)]);
    }
    if (input.cursor) await saveCursorFast(db, input.cursor);
    const staged = defer ? { staged: page?.rows ?? 0 } : {};
    return { ...counts, rejected: prepared.rejected.length, ...staged };
  });
}

/**
 * Loads one page; `defer` stages its rows for a later batch merge instead of merging them now. A deferred page's
 * counts are not known yet: it reports them as `staged`, and the merge reports them (Warehouse.finishLoads).
 */
export async function loadPage(deps: LoadDeps, input: LoadPageInput, stage: boolean): Promise<LoadResult> {
  const { stream, scope } = input;
  if (scope.value !== null && !Number.isSafeInteger(scope.value)) {
    throw new Error(`loadPage ${stream.name}: scope value ${scope.value} is not an integer id`);
  }
  // Observed versions go to the history in the page's own transaction (history/observations.ts).
  const defer = stage && !input.observed;
  const upsert = (input.upsert ?? true) && input.rows.length > 0;
  const table = upsert ? await deps.columns(stream) : null;
  const prepared = await timed(deps.timings, 'prepare', () => preparePage(input, table, deps.skipped));
  const staged = prepared.staged;
  const page = staged && {
    ...staged.page,
    seq: 0,
    file: await timed(deps.timings, 'write', () => deps.staging.write(staged.text, defer && deps.durable)),
  };
  let committed = false;
  try {
    const result = await timed(deps.timings, 'commit', () => commitPage(deps, input, prepared, page, defer));
    committed = true;
    for (const skip of prepared.skips) deps.skipped.add(`${skip.table}\0${skip.column}`);
    return result;
  } catch (err) {
    // The ALTERs rolled back with the rest: the cached columns must not claim them.
    if (prepared.changes.length) deps.forget(stream.name);
    throw err;
  } finally {
    // A merged page's file is done with; a staged one stays until its batch is merged, unless nothing registered it.
    if (page && (!defer || !committed)) await timed(deps.timings, 'cleanup', () => deps.staging.remove([page.file]));
  }
}
