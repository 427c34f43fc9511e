/**
 * Versions the service sent that never became a current row: a delivery older than the row it found (late, out of
 * order) or superseded by a newer one of the same batch (sync/capture/apply-batch.ts). Their rows, normalized and
 * staged as any page's (load.ts), go to `_history.<stream>` alone, at their `updated_at`, where the history views
 * place them between their neighbours: nothing stored is rewritten, so the history does not depend on the order
 * deliveries arrived in. A version already held (the same key and `_valid_from`, kept or current: a duplicate
 * delivery, or one the table took) adds nothing. Rows without an `updated_at` say nothing of where they belong and
 * are left out.
 */
import type { Db } from '../db/connection.js';
import { ident, literal } from '../db/sql.js';
import type { TableColumns } from '../load/ddl.js';
import { pageRows } from '../load/merge.js';
import type { PageFile } from '../load/staged.js';
import { readyHistory, validFromSql } from './versions.js';

interface ObservedTarget {
  table: string;
  columns: TableColumns;
  pathOf(file: string): string;
  /** When evsync recorded them (UTC), their `_synced_at`. */
  at: string;
}

/** Keeps the page's rows as versions of their records; returns how many were new. */
export async function keepObserved(db: Db, page: PageFile, target: ObservedTarget): Promise<number> {
  if (!target.columns.has('updated_at') || !page.columns.some((c) => c.name === 'updated_at')) return 0;
  const live = await readyHistory(db, target.table);
  if (!live) return 0;
  const t = ident(target.table);
  const rows = pageRows([page], target);
  const key = page.key.map((k) => `x.${ident(k)} = f.${ident(k)}`).join(' AND ');
  const from = 'TRY_CAST(f."updated_at" AS TIMESTAMP)';
  return db.run(
    `INSERT INTO _history.${t} BY NAME
       SELECT f.*, CAST(${literal(target.at)} AS TIMESTAMP) AS "_synced_at", ${literal(page.runId)} AS "_run_id",
              CAST(NULL AS TIMESTAMP) AS "_deleted_at", ${from} AS "_valid_from"
         FROM (SELECT ${rows.select} FROM ${rows.from}) f
        WHERE ${from} IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM _history.${t} x WHERE ${key} AND x."_valid_from" = ${from})
          AND NOT EXISTS (SELECT 1 FROM main.${t} x WHERE ${key} AND ${validFromSql(live, 'x')} = ${from})`,
  );
}
