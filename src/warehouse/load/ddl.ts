/**
 * `src/warehouse/load/`: the load path: stream tables and their evolution (ddl.ts, widen.ts), a page's load in one
 * transaction (load.ts), staged pages (stage.ts, staged.ts) merged in batches (merge.ts, merge-staged.ts), and the
 * load session a run opens (session.ts).
 *
 * Stream tables from connector definitions, and their evolution.
 *
 * One table per stream in schema `main`, named as the stream; the data columns of `physicalColumns` in order,
 * then the system columns `_synced_at` (when evsync last wrote the row, UTC), `_run_id` (the run that wrote it)
 * and `_deleted_at` (when the record was found gone from the source; null while it exists). Columns are only ever
 * added or widened, never dropped or narrowed: data once synced stays.
 *
 * No PRIMARY KEY: one row per key is kept by the merge (merge.ts), because DuckDB 1.5's key index is held outside
 * the buffer manager and rewritten whole at every checkpoint, which made loading slower and the process larger as
 * the table grew. Tables created by earlier versions keep their key; the merge works on them the same way.
 */
import type { ResolvedStream, ScalarType, StreamDefinition } from '../../../connectors/types.js';
import { duckdbType, isScalarType, physicalColumns } from '../../../schemas/columns.js';
import type { Db } from '../db/connection.js';
import { ident, utcNow } from '../db/sql.js';
import { conversionSql, isWidening, scalarTypeOf } from './widen.js';

export const SYSTEM_COLUMNS = ['_synced_at', '_run_id', '_deleted_at'] as const;

/** Columns of one table as they are in the database: name -> evsync type (null for a type evsync never creates). */
export type TableColumns = Map<string, ScalarType | null>;

/** Column names schema evolution may create: no leading underscore (system columns), identifier characters. */
const COLUMN_NAME_RE = /^[A-Za-z][A-Za-z0-9_]{0,62}$/;
export function isEvolvableName(name: string): boolean {
  return COLUMN_NAME_RE.test(name);
}

export async function readTableColumns(db: Db, table: string): Promise<TableColumns | null> {
  const r = await db.query(
    `SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'main'
      AND table_name = ? ORDER BY column_index`,
    [table],
  );
  if (r.rows.length === 0) return null;
  const columns: TableColumns = new Map();
  for (const row of r.rows) columns.set(String(row.column_name), scalarTypeOf(String(row.data_type)));
  return columns;
}

/**
 * The stream tables of `main`: its base tables carrying the system columns (a user's own tables are left out). With
 * `views`, a snapshot's views over its Parquet parts (copies/snapshot.ts) count too: the analytics views are made
 * over either.
 */
export async function listStreamTables(db: Db, opts: { views?: boolean } = {}): Promise<string[]> {
  const views = opts.views
    ? `UNION ALL SELECT view_name FROM duckdb_views()
         WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal AND NOT temporary`
    : '';
  const r = await db.query(
    `SELECT table_name FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'main'
      AND column_name = '_deleted_at' AND table_name IN (
        SELECT table_name FROM duckdb_tables()
         WHERE database_name = current_database() AND schema_name = 'main' AND NOT temporary
        ${views})
      ORDER BY table_name`,
  );
  return r.rows.map((row) => String(row.table_name));
}

/** The declared data columns (definition, scope, expansions, custom fields), without schema-evolution extras. */
export function declaredColumns(stream: ResolvedStream): Map<string, ScalarType> {
  const declared = new Map<string, ScalarType>();
  for (const c of physicalColumns({ ...stream, extraFields: undefined })) declared.set(c.name, c.type);
  return declared;
}

export function createTableSql(stream: ResolvedStream): string {
  const columns = physicalColumns(stream);
  const names = new Set(columns.map((c) => c.name));
  for (const k of stream.key) {
    if (!names.has(k)) throw new Error(`stream ${stream.name}: key column ${k} is not among its columns`);
  }
  const defs = columns.map((c) => `${ident(c.name)} ${duckdbType(c.type)}`);
  defs.push(`"_synced_at" TIMESTAMP`, `"_run_id" VARCHAR`, `"_deleted_at" TIMESTAMP`);
  return `CREATE TABLE IF NOT EXISTS ${ident(stream.name)} (\n  ${defs.join(',\n  ')}\n)`;
}

export interface SchemaChange {
  table: string;
  column: string;
  /** `skip_column`: a field kept out of the table (its name clashes with a column's but for case); no DDL. */
  change: 'add_column' | 'widen' | 'skip_column';
  origin: 'definition' | 'evolution';
  from: ScalarType | null;
  to: ScalarType;
  reason: string;
}

export async function recordSchemaChange(db: Db, runId: string | null, c: SchemaChange): Promise<void> {
  await db.run(`INSERT INTO _evsync.schema_changes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
    utcNow(db.now),
    runId,
    c.table,
    c.column,
    c.change,
    c.origin,
    c.from,
    c.to,
    c.reason,
  ]);
}

/** ALTER TABLE for one change (ADD COLUMN is instant; a widening rewrites the column). */
export async function applySchemaChange(db: Db, c: SchemaChange): Promise<void> {
  const table = ident(c.table);
  const column = ident(c.column);
  if (c.change === 'skip_column') return;
  if (c.change === 'add_column') {
    await db.run(`ALTER TABLE ${table} ADD COLUMN ${column} ${duckdbType(c.to)}`);
  } else {
    if (c.from === null) throw new Error(`widen ${c.table}.${c.column}: unknown current type`);
    await db.run(
      `ALTER TABLE ${table} ALTER COLUMN ${column} SET DATA TYPE ${duckdbType(c.to)} USING ${conversionSql(column, c.from, c.to)}`,
    );
  }
}

/**
 * Creates the stream's table, or brings an existing one up to the definition: adds the columns it lacks and widens
 * columns whose declared type is now wider (never narrows). Returns the changes made (recorded in schema_changes).
 */
export async function ensureTable(db: Db, stream: ResolvedStream): Promise<SchemaChange[]> {
  const existing = await readTableColumns(db, stream.name);
  if (!existing) {
    await db.run(createTableSql(stream));
    return [];
  }
  const extras = stream.extraFields ?? {};
  const changes: SchemaChange[] = [];
  for (const column of physicalColumns(stream)) {
    const origin = column.name in extras ? 'evolution' : 'definition';
    if (!existing.has(column.name)) {
      changes.push({
        table: stream.name,
        column: column.name,
        change: 'add_column',
        origin,
        from: null,
        to: column.type,
        reason: origin === 'definition' ? 'column of the stream definition' : 'field found by schema evolution',
      });
      continue;
    }
    const current = existing.get(column.name) ?? null;
    // Extras were created with the type of their first values and may have been widened since: keep the table's.
    if (current !== null && current !== column.type && origin === 'definition' && isWidening(current, column.type)) {
      changes.push({
        table: stream.name,
        column: column.name,
        change: 'widen',
        origin,
        from: current,
        to: column.type,
        reason: `the definition declares ${column.type}`,
      });
    }
  }
  if (changes.length === 0) return [];
  await db.transaction(async () => {
    for (const change of changes) {
      await applySchemaChange(db, change);
      await recordSchemaChange(db, null, change);
    }
  });
  return changes;
}

/**
 * Columns schema evolution added to a stream's table in earlier runs, with their current type (after any
 * widening), so the engine can resolve them in the next run. Columns the definition now declares are left out.
 */
export async function existingExtraFields(db: Db, def: StreamDefinition): Promise<Record<string, ScalarType>> {
  const columns = await readTableColumns(db, def.name);
  if (!columns) return {};
  const r = await db.query(
    `SELECT DISTINCT column_name FROM _evsync.schema_changes WHERE table_name = ? AND origin = 'evolution'
       AND change <> 'skip_column'`,
    [def.name],
  );
  const out: Record<string, ScalarType> = {};
  for (const row of r.rows) {
    const name = String(row.column_name);
    const type = columns.get(name);
    if (name in def.fields || type === undefined || type === null || !isScalarType(type)) continue;
    out[name] = type;
  }
  return out;
}
