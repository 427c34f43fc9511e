/**
 * What the parts of state/ share: the `_evsync` schema's table declarations, the run id, whether a table exists and
 * how a row's values and JSON are read and written. Each part (runs-sql.ts, cursors.ts, unavailable.ts, marks.ts,
 * account.ts, current-rows.ts, rejected.ts, ...) owns the SQL that reads and writes its tables.
 *
 * The `_evsync` schema: what the warehouse knows about its own syncs. The tables below are declared here;
 * unavailable.ts, journal/ and publish-pending.ts declare theirs, and layout/ creates them all and migrates older
 * layouts.
 *
 * _evsync.meta            key VARCHAR PK, value VARCHAR                      -- schema_version: the layout version
 * _evsync.runs            run_id VARCHAR PK, kind VARCHAR ('sync' | 'backfill' | ...), args JSON (the options the
 *                         run was started with), status VARCHAR ('running' until finished, then 'done' | 'partial' |
 *                         'failed'), started_at TIMESTAMP (UTC), finished_at TIMESTAMP, credits JSON (credits spent
 *                         by kind), requests BIGINT, waits_ms BIGINT, rejected_429 BIGINT, streams JSON (per stream:
 *                         inserted, updated, deleted, rejected, pages, errors), error VARCHAR, pid INTEGER,
 *                         resumable BOOLEAN (see runs-sql.ts)
 * _evsync.cursors         stream VARCHAR, scope VARCHAR (PK stream+scope; scope 'account', 'event:12', or what the
 *                         engine chooses, e.g. 'event:12/sweep'), watermark VARCHAR ('YYYY-MM-DD HH:MM:SS', the
 *                         committed high-water mark), walk_mode VARCHAR, walk_id VARCHAR, walk_from VARCHAR,
 *                         walk_to VARCHAR (the signpost), walk_last_key BIGINT (keyset position), walk_pages BIGINT,
 *                         walk_rows BIGINT (the open walk, all null when none), last_pages BIGINT, last_sweep_at
 *                         VARCHAR, updated_at VARCHAR. Times are kept as the engine wrote them (server clock).
 * _evsync.credits         run_id VARCHAR (the run, or `daemon` for what a daemon spent between runs), recorded_at
 *                         TIMESTAMP (UTC: when the service said it, the answer's arrival), credit_limit BIGINT,
 *                         remaining BIGINT, reset_at TIMESTAMP (X-Rate-Limit-Limit, -Remaining and the arrival plus
 *                         -Reset), spent BIGINT (credits spent since the previous row of the same process; rows before
 *                         readings were recorded as they came hold the run's total, one row per run), snapshot JSON
 *                         (the run's credits by kind so far, the client's window length)
 * _evsync.rejected        run_id VARCHAR, stream VARCHAR, scope VARCHAR, raw JSON (the record as received), reason
 *                         VARCHAR, rejected_at TIMESTAMP (UTC)
 * _evsync.schema_changes  changed_at TIMESTAMP (UTC), run_id VARCHAR (null for changes made by ensureTable), table_name
 *                         VARCHAR, column_name VARCHAR, change VARCHAR ('add_column' | 'widen' | 'skip_column': a field
 *                         kept out because its name clashes with a column's but for case), origin VARCHAR
 *                         ('definition': a column of the catalogue; 'evolution': a field the records carried),
 *                         from_type VARCHAR (null for add_column), to_type VARCHAR (evsync column types:
 *                         'bigint', 'text', 'decimal(12,2)', ...), reason VARCHAR
 * _evsync.seen            stream VARCHAR, scope VARCHAR, walk_id VARCHAR, id BIGINT: ids a snapshot or sweep walk
 *                         saw, until markMissing settles the walk
 * _evsync.custom_fields   table_name VARCHAR, column_name VARCHAR (PK both), label VARCHAR, updated_at TIMESTAMP:
 *                         labels of the `c_<id>` columns of the column-per-field shape; no longer written (the
 *                         custom-field views read the definitions tables), kept for warehouses that have it
 * _evsync.custom_field_types  table_name VARCHAR, column_name VARCHAR (PK both), type VARCHAR: the types set for
 *                         custom fields (`customFieldTypes`), made on first use by custom-field-types.ts, not here
 * _evsync.staged          seq BIGINT (from _evsync.staged_seq: merge order), stream VARCHAR, scope VARCHAR, file
 *                         VARCHAR (name in `<database>.stage/`), row_count BIGINT, page JSON (the file's columns with
 *                         their types, and the key), keys VARCHAR (the rows' keys as a JSON list, for a single
 *                         integer key), run_id VARCHAR, walk_id VARCHAR (the walk that read the page), staged_at
 *                         TIMESTAMP (UTC): pages committed with their cursor but not yet merged into their table
 *                         (see staged.ts)
 */
import type { Db } from '../db/connection.js';
import { duckJson } from '../db/sql.js';

export const BOOKKEEPING_DDL = [
  `CREATE SCHEMA IF NOT EXISTS _evsync`,
  `CREATE SCHEMA IF NOT EXISTS analytics`,
  `CREATE TABLE IF NOT EXISTS _evsync.meta (key VARCHAR PRIMARY KEY, value VARCHAR)`,
  `CREATE TABLE IF NOT EXISTS _evsync.runs (
     run_id VARCHAR PRIMARY KEY, kind VARCHAR NOT NULL, args JSON, status VARCHAR NOT NULL,
     started_at TIMESTAMP NOT NULL, finished_at TIMESTAMP, credits JSON, requests BIGINT, waits_ms BIGINT,
     rejected_429 BIGINT, streams JSON, error VARCHAR, pid INTEGER, resumable BOOLEAN)`,
  `CREATE TABLE IF NOT EXISTS _evsync.cursors (
     stream VARCHAR NOT NULL, scope VARCHAR NOT NULL, watermark VARCHAR,
     walk_mode VARCHAR, walk_id VARCHAR, walk_from VARCHAR, walk_to VARCHAR, walk_last_key BIGINT,
     walk_pages BIGINT, walk_rows BIGINT, last_pages BIGINT, last_sweep_at VARCHAR, updated_at VARCHAR,
     PRIMARY KEY (stream, scope))`,
  `CREATE TABLE IF NOT EXISTS _evsync.credits (
     run_id VARCHAR, recorded_at TIMESTAMP NOT NULL, credit_limit BIGINT, remaining BIGINT, reset_at TIMESTAMP,
     spent BIGINT, snapshot JSON)`,
  `CREATE TABLE IF NOT EXISTS _evsync.rejected (
     run_id VARCHAR, stream VARCHAR NOT NULL, scope VARCHAR, raw JSON, reason VARCHAR, rejected_at TIMESTAMP NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS _evsync.schema_changes (
     changed_at TIMESTAMP NOT NULL, run_id VARCHAR, table_name VARCHAR NOT NULL, column_name VARCHAR NOT NULL,
     change VARCHAR NOT NULL, origin VARCHAR NOT NULL, from_type VARCHAR, to_type VARCHAR NOT NULL, reason VARCHAR)`,
  `CREATE TABLE IF NOT EXISTS _evsync.seen (stream VARCHAR NOT NULL, scope VARCHAR NOT NULL, walk_id VARCHAR NOT NULL,
     id BIGINT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS _evsync.custom_fields (
     table_name VARCHAR NOT NULL, column_name VARCHAR NOT NULL, label VARCHAR NOT NULL, updated_at TIMESTAMP,
     PRIMARY KEY (table_name, column_name))`,
  `CREATE SEQUENCE IF NOT EXISTS _evsync.staged_seq`,
  `CREATE TABLE IF NOT EXISTS _evsync.staged (
     seq BIGINT NOT NULL, stream VARCHAR NOT NULL, scope VARCHAR NOT NULL, file VARCHAR NOT NULL,
     row_count BIGINT NOT NULL, page JSON NOT NULL, keys VARCHAR, run_id VARCHAR, walk_id VARCHAR,
     staged_at TIMESTAMP NOT NULL)`,
];

/** A sortable, unique run id: UTC start time plus a random suffix (two runs may start in the same second). */
export function newRunId(now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const suffix = Math.floor(Math.random() * 0x1000000)
    .toString(16)
    .padStart(6, '0');
  return `${stamp}-${suffix}`;
}

/** A value as JSON text for a JSON column. */
export function json(value: unknown): string {
  try {
    return duckJson(value ?? null);
  } catch {
    // BigInt or a cycle: keep something readable rather than failing the bookkeeping write.
    return JSON.stringify(String(value));
  }
}

/** A row value as text, null kept. */
export function str(v: unknown): string | null {
  return v === null || v === undefined ? null : String(v);
}

/** A row value as a finite number, null when absent, empty or not a number. */
export function num(v: unknown): number | null {
  if (v === null || v === undefined || v === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/** Whether `schema.table` exists in the open database (a read-only open of a new file has no bookkeeping). */
export async function tableExists(db: Db, schema: string, table: string): Promise<boolean> {
  const r = await db.query(
    `SELECT count(*) AS n FROM duckdb_tables()
    WHERE database_name = current_database() AND schema_name = ? AND table_name = ?`,
    [schema, table],
  );
  return Number(r.rows[0]?.n ?? 0) > 0;
}
