/**
 * Loading one page: everything a page changes commits in ONE transaction (schema evolution, rejected records, the
 * rows, seen ids, the cursor), so a crash loses at most the page in flight and the cursor never runs ahead of the
 * data it covers.
 *
 * Per page:
 * 1. Deduplicate by key in JavaScript: the latest `updated_at` wins when the stream has one (ties and streams
 *    without it: the last occurrence). A row without its key goes to `_evsync.rejected`.
 * 2. Schema evolution: columns the rows carry that the table lacks are added (typed from `newColumns`, else
 *    inferred from the values); values of evolved columns that do not fit widen the column (see widen.ts).
 * 3. Stage the rows as one JSON file (see stage.ts, which also says why not the Appender) and merge it with
 *    explicit column lists, reading the file with `read_json` and declared column types. Measured on 1000-row
 *    registrant pages into a 1M-row keyed table (bench/warehouse-load.ts): MERGE joins the whole table and, like
 *    `INSERT ... ON CONFLICT DO UPDATE`, rewrites whole rows through UPDATE when a LIST column changes, ~1 s a
 *    page of updates; so integer keys go: probe which ids exist -> a page of new ids is one plain INSERT; existing
 *    ids whose stored row differs (or is marked deleted) are deleted and inserted again; identical rows are left
 *    alone (`unchanged`, their `_synced_at`/`_run_id` stay). Written rows get this run's `_synced_at`/`_run_id` and
 *    `_deleted_at` NULL (a record that reappears is live again). Only the columns the page carries are written: when
 *    the table has others (an expansion not selected this run, custom fields of other events), a rewritten row keeps
 *    their stored values. Composite keys (the audit log) use one MERGE (never its star UPDATE form).
 * 4. Seen ids (snapshots, sweeps) and the cursor row.
 */
import type { NormalizedRow, NormalizedValue, ResolvedStream, ScalarType } from '../../connectors/types.js';
import { duckdbType } from '../../schemas/columns.js';
import { recordRejected, saveCursorFast } from './bookkeeping.js';
import type { Db } from './connection.js';
import {
  applySchemaChange,
  declaredColumns,
  isEvolvableName,
  recordSchemaChange,
  type SchemaChange,
  type TableColumns,
} from './ddl.js';
import { duckJson, ident, literal, utcNow } from './sql.js';
import type { Staging } from './stage.js';
import type { LoadPageInput, LoadResult } from './types.js';
import { fits, widen } from './widen.js';

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
}

type Rejected = { raw: unknown; reason: string };

/** Rows unique by key; rows lacking a key value are moved to `rejected`. */
export function dedupeByKey(
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

/** The type a value of an undeclared, unlisted field suggests (the first non-null value of the page). */
export function inferScalarType(value: NormalizedValue): ScalarType | null {
  if (value === null) return null;
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return Number.isSafeInteger(value) ? 'bigint' : 'double';
  if (typeof value === 'string') {
    if (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(value)) return 'timestamp';
    if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return 'date';
    return 'text';
  }
  if (value.length > 0 && value.every((x) => typeof x === 'number' && Number.isSafeInteger(x))) return 'bigint[]';
  return value.every((x) => typeof x === 'string') ? 'text[]' : 'json';
}

/** Works out the schema changes a page needs; returns them with the table's column types after the changes. */
function planEvolution(
  stream: ResolvedStream,
  table: TableColumns,
  rows: readonly NormalizedRow[],
  pageColumns: ReadonlySet<string>,
  listed: Readonly<Record<string, ScalarType>>,
): { changes: SchemaChange[]; types: Map<string, ScalarType | null> } {
  const types = new Map(table);
  const changes: SchemaChange[] = [];
  const declared = declaredColumns(stream);

  // Columns whose type came from values rather than the definition: the ones whose values are checked.
  const checked = new Map<string, { from: ScalarType | null; type: ScalarType; adding: boolean }>();
  for (const name of pageColumns) {
    const current = table.get(name);
    // A declared column whose table type is the declared one holds what the normalizer produced for it. One whose
    // type differs (an evolved column the catalogue declared later, a custom field that changed kind) is checked.
    const declaredType = declared.get(name);
    if (declaredType !== undefined && current === declaredType) continue;
    if (declaredType !== undefined && current === undefined) {
      // ensureTable was not called since the definition gained this column: add it as declared.
      changes.push({
        table: stream.name,
        column: name,
        change: 'add_column',
        origin: 'definition',
        from: null,
        to: declaredType,
        reason: 'column of the stream definition',
      });
      types.set(name, declaredType);
      continue;
    }
    if (current !== undefined) {
      if (current !== null) checked.set(name, { from: current, type: current, adding: false });
      continue;
    }
    if (!isEvolvableName(name)) continue;
    let type: ScalarType | null = listed[name] ?? null;
    if (type === null) {
      for (const row of rows) {
        const v = row[name];
        if (v !== null && v !== undefined) {
          type = inferScalarType(v);
          if (type !== null) break;
        }
      }
    }
    // A field that is null throughout the page says nothing about its type: wait for a page that has a value.
    if (type !== null) checked.set(name, { from: null, type, adding: true });
  }

  for (const [name, entry] of checked) {
    for (const row of rows) {
      const v = row[name];
      if (v !== undefined && !fits(entry.type, v)) entry.type = widen(entry.type, v);
    }
    if (entry.adding) {
      changes.push({
        table: stream.name,
        column: name,
        change: 'add_column',
        origin: 'evolution',
        from: null,
        to: entry.type,
        reason: listed[name] ? 'field found by schema evolution' : 'field found by schema evolution (type inferred)',
      });
      types.set(name, entry.type);
    } else if (entry.type !== entry.from) {
      changes.push({
        table: stream.name,
        column: name,
        change: 'widen',
        origin: 'evolution',
        from: entry.from,
        to: entry.type,
        reason: `a value does not fit ${entry.from}: widened to ${entry.type}`,
      });
      types.set(name, entry.type);
    }
  }
  return { changes, types };
}

/** Milliseconds spent per step of loadPage, summed over calls (for benchmarks and diagnosis). */
export type LoadTimings = Record<string, number>;

type PageColumn = { name: string; type: ScalarType };

/** SQL pieces for one table and page column set; cached by the caller's prepared-statement cache via the text. */
class PageSql {
  readonly source: string;
  readonly keyType: string;
  /** A single BIGINT/INTEGER key: probe and delete by JSON lists of ids. Other keys use one MERGE. */
  readonly integerKey: boolean;
  private readonly key: readonly string[];
  private readonly insertColumns: string;
  private readonly insertValues: string;
  private readonly data: readonly PageColumn[];

  constructor(
    private readonly table: string,
    stream: ResolvedStream,
    columns: readonly PageColumn[],
    scopeColumn: string | null,
    /** Table columns the page does not carry: a rewritten row keeps their stored values. */
    private readonly carried: readonly string[],
  ) {
    this.key = stream.key;
    const spec = columns
      .map((c) => `${literal(c.name)}: ${literal(c.type === 'json' ? 'VARCHAR' : duckdbType(c.type))}`)
      .join(', ');
    const select = columns
      .map((c) => {
        const col = ident(c.name);
        // JSON is read as text and cast, which validates it; the scope column falls back to the page's scope.
        if (c.type === 'json') return `CAST(${col} AS JSON) AS ${col}`;
        if (c.name === scopeColumn) return `COALESCE(${col}, CAST($scope AS BIGINT)) AS ${col}`;
        return col;
      })
      .join(', ');
    this.source = `(SELECT ${select} FROM read_json($file, format = 'array', columns = {${spec}}))`;
    const keyColumn = columns.find((c) => c.name === stream.key[0]);
    this.keyType = duckdbType(keyColumn?.type ?? 'bigint');
    this.integerKey = stream.key.length === 1 && (keyColumn?.type === 'bigint' || keyColumn?.type === 'integer');
    const keys = new Set(stream.key);
    this.data = columns.filter((c) => !keys.has(c.name));
    this.insertColumns = [...columns.map((c) => ident(c.name)), '"_synced_at"', '"_run_id"', '"_deleted_at"'].join(
      ', ',
    );
    this.insertValues = [
      ...columns.map((c) => `s.${ident(c.name)}`),
      'CAST($synced AS TIMESTAMP)',
      '$run',
      'NULL',
    ].join(', ');
  }

  private get target(): string {
    return ident(this.table);
  }

  private get on(): string {
    return this.key.map((k) => `t.${ident(k)} = s.${ident(k)}`).join(' AND ');
  }

  private get changed(): string {
    return [
      't."_deleted_at" IS NOT NULL',
      ...this.data.map((c) => `t.${ident(c.name)} IS DISTINCT FROM s.${ident(c.name)}`),
    ].join(' OR ');
  }

  /** Keys of the page already in the table ($keys: the page's keys as a JSON list). */
  get probe(): string {
    const k = ident(this.key[0] as string);
    return `SELECT ${k} FROM ${this.target} WHERE ${k} = ANY(CAST($keys AS ${this.keyType}[]))`;
  }

  /** Of the existing keys ($keys), those whose stored row differs from the page's (or is marked deleted). */
  get changedKeys(): string {
    const k = ident(this.key[0] as string);
    return `SELECT t.${k} FROM ${this.target} t JOIN ${this.source} s ON ${this.on}
      WHERE t.${k} = ANY(CAST($keys AS ${this.keyType}[])) AND (${this.changed})`;
  }

  /** Removes the rows ($keys) that the page replaces. */
  get deleteKeys(): string {
    const k = ident(this.key[0] as string);
    return `DELETE FROM ${this.target} WHERE ${k} = ANY(CAST($keys AS ${this.keyType}[]))`;
  }

  /** Inserts the page's rows except the unchanged ones ($skip: keys as a JSON list). */
  get insert(): string {
    const k = ident(this.key[0] as string);
    return `INSERT INTO ${this.target} (${this.insertColumns})
      SELECT ${this.insertValues} FROM ${this.source} s
       WHERE NOT (s.${k} = ANY(CAST($skip AS ${this.keyType}[])))`;
  }

  /** Keeps the stored values of the carried columns of the rows ($keys) about to be rewritten. */
  get carry(): string {
    const k = ident(this.key[0] as string);
    return `CREATE OR REPLACE TEMP TABLE "_evsync_carry" AS
      SELECT ${[k, ...this.carried.map(ident)].join(', ')} FROM ${this.target}
       WHERE ${k} = ANY(CAST($keys AS ${this.keyType}[]))`;
  }

  /** `insert`, with the carried columns taken from `_evsync_carry` (NULL for new rows). */
  get insertCarrying(): string {
    const k = ident(this.key[0] as string);
    const names = [...this.carried.map(ident), this.insertColumns].join(', ');
    const values = [...this.carried.map((c) => `c.${ident(c)}`), this.insertValues].join(', ');
    return `INSERT INTO ${this.target} (${names})
      SELECT ${values} FROM ${this.source} s LEFT JOIN temp."_evsync_carry" c ON c.${k} = s.${k}
       WHERE NOT (s.${k} = ANY(CAST($skip AS ${this.keyType}[])))`;
  }

  get hasCarried(): boolean {
    return this.carried.length > 0;
  }

  /**
   * Composite and non-integer keys (the append-only registration audit log): one MERGE with explicit column lists.
   * MERGE joins the whole table, which is fine for such logs and slow for large tables with LIST columns.
   */
  get merge(): string {
    const sets = [
      ...this.data.map((c) => `${ident(c.name)} = s.${ident(c.name)}`),
      '"_synced_at" = CAST($synced AS TIMESTAMP)',
      '"_run_id" = $run',
      '"_deleted_at" = NULL',
    ];
    return `MERGE INTO ${this.target} AS t USING ${this.source} AS s ON ${this.on}
      WHEN MATCHED AND (${this.changed}) THEN UPDATE SET ${sets.join(', ')}
      WHEN NOT MATCHED THEN INSERT (${this.insertColumns}) VALUES (${this.insertValues})
      RETURNING merge_action`;
  }
}

const SEEN_SQL = `INSERT INTO _evsync.seen SELECT $1, $2, $3, unnest(CAST($4 AS BIGINT[]))`;

function keyList(values: readonly unknown[]): string {
  return JSON.stringify(values);
}

/**
 * The merge for a single integer key, in the cheapest statements for the common cases:
 * - probe which keys exist (index lookups); a page of new keys (backfill) is then one plain INSERT;
 * - for existing keys, find the ones whose stored row differs (or is marked deleted); delete those and insert them
 *   again with the new rows (DuckDB rewrites a whole row when a LIST column is updated, so an UPDATE of a
 *   registrant page costs ~15x a delete + insert). Unchanged rows are not touched.
 * - columns of the table the page does not carry (an expansion not selected this run, custom fields of other
 *   events) are copied aside before the delete and put back by the insert, so they keep their values.
 */
async function mergeIntegerKey(
  db: Db,
  sql: PageSql,
  named: Record<string, unknown>,
  rows: readonly NormalizedRow[],
  keyColumn: string,
  time: (step: string, since: number) => number,
): Promise<{ inserted: number; updated: number }> {
  let t = performance.now();
  const existing = (await query(db, sql.probe, { ...named, keys: keyList(rows.map((r) => r[keyColumn])) })).map(jsKey);
  t = time('probe', t);
  if (existing.length === 0) {
    await run(db, sql.insert, { ...named, skip: '[]' });
    time('insert', t);
    return { inserted: rows.length, updated: 0 };
  }
  const changed = (await query(db, sql.changedKeys, { ...named, keys: keyList(existing) })).map(jsKey);
  t = time('compare', t);
  const carrying = sql.hasCarried && changed.length > 0;
  if (carrying) {
    // DDL does not go through the prepared-statement cache.
    const c = compile(sql.carry);
    await db.run(
      c.sql,
      c.names.map((n) => (n === 'keys' ? keyList(changed) : (named[n] ?? null))),
    );
  }
  if (changed.length > 0) await run(db, sql.deleteKeys, { ...named, keys: keyList(changed) });
  t = time('delete', t);
  const changedSet = new Set(changed.map(String));
  const skip = existing.filter((k) => !changedSet.has(String(k)));
  if (skip.length < rows.length) {
    await run(db, carrying ? sql.insertCarrying : sql.insert, { ...named, skip: keyList(skip) });
  }
  time('insert', t);
  return { inserted: rows.length - existing.length, updated: changed.length };
}

/** Key values as read back (BIGINT comes as bigint) in a form JSON lists and Sets take. */
function jsKey(v: unknown): string | number | boolean | null {
  if (typeof v === 'bigint') return Number(v);
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') return v;
  return String(v);
}

/** Statements are written with `$name` placeholders; DuckDB gets `$1..$n` (the rewrite is cached per text). */
const positional = new Map<string, { sql: string; names: string[] }>();
function compile(sql: string): { sql: string; names: string[] } {
  let c = positional.get(sql);
  if (!c) {
    const names: string[] = [];
    const text = sql.replace(/\$(file|scope|synced|run|keys|skip)\b/g, (_, name: string) => {
      let i = names.indexOf(name);
      if (i < 0) i = names.push(name) - 1;
      return `$${i + 1}`;
    });
    c = { sql: text, names };
    if (positional.size > 500) positional.clear();
    positional.set(sql, c);
  }
  return c;
}

function run(db: Db, sql: string, named: Record<string, unknown>): Promise<number> {
  const c = compile(sql);
  return db.runPrepared(
    c.sql,
    c.names.map((n) => named[n] ?? null),
  );
}

function query(db: Db, sql: string, named: Record<string, unknown>): Promise<unknown[]> {
  const c = compile(sql);
  return db.firstColumnPrepared(
    c.sql,
    c.names.map((n) => named[n] ?? null),
  );
}

export async function loadPage(deps: LoadDeps, input: LoadPageInput): Promise<LoadResult> {
  const { db, staging } = deps;
  const { stream, scope, runId } = input;
  const upsert = input.upsert ?? true;
  const rejected: Rejected[] = [...input.rejected];
  const time = (step: string, since: number): number => {
    const now = performance.now();
    deps.timings[step] = (deps.timings[step] ?? 0) + (now - since);
    return now;
  };
  let t = performance.now();
  if (scope.value !== null && !Number.isSafeInteger(scope.value)) {
    throw new Error(`loadPage ${stream.name}: scope value ${scope.value} is not an integer id`);
  }

  let file: string | null = null;
  let sql: PageSql | null = null;
  let changes: SchemaChange[] = [];
  let rows: NormalizedRow[] = [];
  if (upsert && input.rows.length > 0) {
    const table = await deps.columns(stream);
    rows = dedupeByKey(input.rows, stream.key, table.has('updated_at'), rejected);
    const pageColumns = new Set<string>();
    for (const row of rows) for (const k in row) pageColumns.add(k);
    for (const k of stream.key) pageColumns.add(k);
    if (scope.column) pageColumns.add(scope.column);
    t = time('prepare', t);
    const evolution = planEvolution(stream, table, rows, pageColumns, input.newColumns ?? {});
    changes = evolution.changes;
    const columns: PageColumn[] = [];
    const carried: string[] = [];
    for (const [name, type] of evolution.types) {
      if (name.startsWith('_')) continue;
      if (type === null || !pageColumns.has(name)) carried.push(name);
      else columns.push({ name, type });
    }
    t = time('evolution', t);
    if (rows.length > 0) {
      const scopeColumn = scope.column !== null && evolution.types.has(scope.column) ? scope.column : null;
      sql = new PageSql(stream.name, stream, columns, scopeColumn, carried);
      const text = duckJson(rows);
      t = time('stringify', t);
      file = staging.write(text);
      t = time('write', t);
    }
  }

  try {
    await deps.loadMode();
    return await db.transaction(async () => {
      t = time('begin', t);
      if (changes.length) {
        for (const change of changes) {
          await applySchemaChange(db, change);
          await recordSchemaChange(db, runId, change);
        }
        deps.forget(stream.name);
        t = time('evolution', t);
      }
      await recordRejected(db, runId, stream.name, scope.key, rejected);
      let inserted = 0;
      let updated = 0;
      if (sql && file) {
        const named = { file, scope: scope.value, synced: utcNow(), run: runId };
        // Integer ids (every catalogue stream but the audit log) take the fast path: their keys travel as JSON lists.
        if (sql.integerKey) {
          ({ inserted, updated } = await mergeIntegerKey(db, sql, named, rows, stream.key[0] as string, time));
        } else {
          const actions = await query(db, sql.merge, named);
          for (const a of actions) {
            if (a === 'INSERT') inserted++;
            else if (a === 'UPDATE') updated++;
          }
        }
        t = performance.now();
      }
      if (input.seen && input.seen.ids.length > 0) {
        await db.runPrepared(SEEN_SQL, [stream.name, scope.key, input.seen.walkId, JSON.stringify(input.seen.ids)]);
      }
      if (input.cursor) await saveCursorFast(db, input.cursor);
      t = time('bookkeeping', t);
      return { inserted, updated, rejected: rejected.length, unchanged: rows.length - inserted - updated };
    });
  } catch (err) {
    // The ALTERs rolled back with the rest: the cached columns must not claim them.
    if (changes.length) deps.forget(stream.name);
    throw err;
  } finally {
    t = time('commit', t);
    if (file) await staging.remove(file);
    time('cleanup', t);
  }
}
