/**
 * What a snapshot would hold, as one digest of the warehouse's readable content: each stream table's columns, row
 * count and latest `_synced_at` (every write of a row sets it: a page's load, a delete mark, a restore, a webhook's
 * change), the bookkeeping the copy carries, and the text of the `analytics` views (each run builds them again from
 * the program's own SQL). Equal digests mean a new snapshot would hold what the previous one holds, so a one-shot
 * command leaves that one as it is: a run that changed nothing writes no snapshot byte (issue 35).
 *
 * It is taken before the copy: a write that lands while the copy is made changes the next digest, so the next
 * command publishes again (a publish too many, never a change missed).
 */
import { createHash } from 'node:crypto';
import type { Db } from '../db/connection.js';
import { ident } from '../db/sql.js';

/** The digest of what a snapshot of the warehouse `db` is connected to would hold now. */
export async function contentDigest(
  db: Db,
  tables: readonly string[],
  bookkeeping: readonly string[],
): Promise<string> {
  const hash = createHash('sha256');
  const columns = await db.query(
    `SELECT table_name, column_name, data_type FROM duckdb_columns()
      WHERE database_name = current_database() AND schema_name = 'main' ORDER BY table_name, column_index`,
  );
  hash.update(JSON.stringify(columns.rows.filter((r) => tables.includes(String(r.table_name)))));
  for (const table of tables) {
    const r = await db.query(
      `SELECT CAST(count(*) AS VARCHAR) AS n, CAST(max("_synced_at") AS VARCHAR) AS at FROM ${ident(table)}`,
    );
    hash.update(JSON.stringify([table, r.rows[0]?.n ?? null, r.rows[0]?.at ?? null]));
  }
  for (const table of bookkeeping) {
    const r = await db.query(`SELECT CAST(count(*) AS VARCHAR) AS n FROM _evsync.${ident(table)}`);
    hash.update(JSON.stringify([`_evsync.${table}`, r.rows[0]?.n ?? null]));
  }
  const views = await db.query(
    `SELECT view_name, sql FROM duckdb_views()
      WHERE database_name = current_database() AND schema_name = 'analytics' ORDER BY view_name`,
  );
  hash.update(JSON.stringify(views.rows));
  return hash.digest('hex');
}
