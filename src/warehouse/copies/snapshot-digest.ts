/**
 * What a snapshot holds besides its parts' rows (those have their fingerprints: table-parts.ts), as one digest: the
 * stream tables and their columns, the bookkeeping the catalogue carries, and the text of the `analytics` views
 * (each run builds them again from the program's own SQL). With every part's fingerprint unchanged, an equal
 * digest means a new snapshot would hold what the previous one holds, and the previous one is left as it is: a
 * publish after a run that changed nothing writes no byte (issue 35).
 */
import { createHash } from 'node:crypto';
import type { Db } from '../db/connection.js';
import { ident } from '../db/sql.js';

/** The digest of what a snapshot of the warehouse `db` is connected to would hold now. */
export async function contentDigest(
  db: Db,
  tables: readonly string[],
  /** Each table's columns signature (table-parts.ts columnsSignatures). */
  columns: ReadonlyMap<string, string>,
  bookkeeping: readonly string[],
): Promise<string> {
  const hash = createHash('sha256');
  hash.update(JSON.stringify(tables.map((table) => [table, columns.get(table) ?? ''])));
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
