/**
 * `src/warehouse/journal/`: the webhook journal: deliveries stored before they are answered and settled in order
 * (journal.ts), and what change capture reads and writes in stream tables beside the load path.
 *
 * What change capture reads and writes in stream tables beside `loadPage`: the stored version of the rows a batch of
 * deliveries touches (so an older delivery never overwrites a newer row), and `_deleted_at` for deletes the service
 * reported. Rows are never removed: a delete only marks them.
 */
import type { OpLog } from '../archive/op-log.js';
import type { Db } from '../db/connection.js';
import { ident, utcNow } from '../db/sql.js';
import { keepVersions } from '../history/versions.js';

export interface StoredVersion {
  id: number;
  /** As stored (`YYYY-MM-DD HH:MM:SS`, record zone), null when the table has no `updated_at` or the row none. */
  updatedAt: string | null;
  /** UTC `YYYY-MM-DD HH:MM:SS`, null for a current row. */
  deletedAt: string | null;
}

function checkIds(ids: readonly number[]): void {
  for (const id of ids) if (!Number.isSafeInteger(id)) throw new Error(`capture: id ${id} is not an integer`);
}

async function hasColumn(db: Db, table: string, column: string): Promise<boolean> {
  const r = await db.query(
    `SELECT count(*) AS n FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'main' AND table_name = ? AND column_name = ?`,
    [table, column],
  );
  return Number(r.rows[0]?.n ?? 0) > 0;
}

/** The stored version of each of these ids that has a row. */
export async function storedVersions(db: Db, table: string, ids: readonly number[]): Promise<StoredVersion[]> {
  checkIds(ids);
  if (ids.length === 0 || !(await hasColumn(db, table, 'id'))) return [];
  const updated = (await hasColumn(db, table, 'updated_at'))
    ? `strftime(CAST("updated_at" AS TIMESTAMP), '%Y-%m-%d %H:%M:%S')`
    : 'NULL';
  const r = await db.query(
    `SELECT id, ${updated} AS updated_at, strftime("_deleted_at", '%Y-%m-%d %H:%M:%S') AS deleted_at
       FROM main.${ident(table)} WHERE id = ANY(CAST(? AS BIGINT[]))`,
    [JSON.stringify(ids)],
  );
  return r.rows.map((row) => ({
    id: Number(row.id),
    updatedAt: row.updated_at === null ? null : String(row.updated_at),
    deletedAt: row.deleted_at === null ? null : String(row.deleted_at),
  }));
}

/**
 * Marks current rows deleted, each at its own time (UTC `YYYY-MM-DD HH:MM:SS`); rows already marked keep their
 * mark. Returns how many rows were marked.
 */
export async function markDeleted(
  db: Db,
  ops: OpLog,
  table: string,
  rows: readonly { id: number; at: string }[],
  runId: string,
): Promise<number> {
  checkIds(rows.map((r) => r.id));
  if (rows.length === 0) return 0;
  const now = utcNow(db.now);
  return db.transaction(async () => {
    // The live versions these deletes end are kept first (history/versions.ts).
    await keepVersions(db, table, `id IN (SELECT unnest(CAST(? AS BIGINT[]))) AND "_deleted_at" IS NULL`, [
      JSON.stringify(rows.map((r) => r.id)),
    ]);
    const marked = await db.run(
      `UPDATE main.${ident(table)} t SET "_deleted_at" = x.at, "_run_id" = $1, "_synced_at" = CAST($2 AS TIMESTAMP)
         FROM (SELECT CAST(v->>0 AS BIGINT) AS id, CAST(v->>1 AS TIMESTAMP) AS at
                 FROM (SELECT unnest(CAST(CAST($3 AS JSON) AS JSON[])) AS v)) x
        WHERE t.id = x.id AND t."_deleted_at" IS NULL`,
      [runId, now, JSON.stringify(rows.map((r) => [r.id, r.at]))],
    );
    const detail = { rows: rows.map((r): [number, string] => [r.id, r.at]) };
    await ops.log(db, { kind: 'deleted', stream: table, runId, entry: null, detail }, now);
    return marked;
  });
}
