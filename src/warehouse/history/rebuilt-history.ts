/**
 * A rebuild's history against the live one (archive/rebuilt-tables.ts calls these with the scratch attached): the
 * replay keeps versions exactly where the live writes kept them, so with unchanged settings the two are equal, row
 * for row; a normalizer setting that changed rewrites every version it touches, and a warehouse whose history began
 * after its archive (layout 3 migrated) gets the versions of the archive's earlier changes. The kept versions are
 * compared as multisets of whole rows and, when they differ, replaced whole in the rebuild's transaction.
 */

import { columnsOf } from '../db/columns.js';
import type { Db } from '../db/connection.js';
import { ident } from '../db/sql.js';
import { alignHistoryColumns } from './versions.js';

/** Versions the rebuilt history has that the live one lacks (`added`), and the other way round (`removed`). */
export interface HistoryChange {
  added: number;
  removed: number;
}

/** `_history.<table>`'s columns in the scratch (attached as `scratch`) or, without it, in the live file. */
function historyColumns(db: Db, scratch: string | null, table: string): Promise<Map<string, string>> {
  return columnsOf(db, '_history', table, scratch ?? undefined);
}

/** The versions' rows as text over `columns` (a column a side lacks read as NULL): 1 and '1' compare equal. */
function rowsOf(source: string, has: ReadonlyMap<string, string>, columns: readonly string[]): string {
  if (has.size === 0) return `SELECT ${columns.map(() => 'NULL').join(', ')} WHERE FALSE`;
  return `SELECT ${columns.map((c) => (has.has(c) ? `CAST(${ident(c)} AS VARCHAR)` : 'NULL')).join(', ')} FROM ${source}`;
}

/** Compares `_history.<table>` of the scratch (attached as `scratch`) with the live one; null when neither has one. */
export async function compareHistory(db: Db, scratch: string, table: string): Promise<HistoryChange | null> {
  const rebuilt = await historyColumns(db, scratch, table);
  const live = await historyColumns(db, null, table);
  if (rebuilt.size === 0 && live.size === 0) return null;
  const columns = [...new Set([...rebuilt.keys(), ...live.keys()])];
  const t = ident(table);
  const r = rowsOf(`${ident(scratch)}._history.${t}`, rebuilt, columns);
  const l = rowsOf(`_history.${t}`, live, columns);
  const n = async (sql: string) => Number((await db.query(`SELECT count(*) AS n FROM (${sql})`)).rows[0]?.n ?? 0);
  return { added: await n(`${r} EXCEPT ALL ${l}`), removed: await n(`${l} EXCEPT ALL ${r}`) };
}

/**
 * Puts the scratch's versions in place of the live ones (in the caller's transaction) when they differ. Columns only
 * the live history has are kept (NULL in the rebuilt versions). Returns whether anything was written.
 */
export async function replaceHistory(db: Db, scratch: string, table: string): Promise<boolean> {
  const change = await compareHistory(db, scratch, table);
  if (!change || (change.added === 0 && change.removed === 0)) return false;
  const rebuilt = await historyColumns(db, scratch, table);
  const t = ident(table);
  if (rebuilt.size === 0) {
    await db.run(`DELETE FROM _history.${t}`);
    return true;
  }
  const live = await historyColumns(db, null, table);
  if (live.size === 0) {
    await db.run(`CREATE TABLE _history.${t} AS SELECT * FROM ${ident(scratch)}._history.${t}`);
    return true;
  }
  await alignHistoryColumns(db, table, live, rebuilt);
  await db.run(`DELETE FROM _history.${t}`);
  await db.run(`INSERT INTO _history.${t} BY NAME SELECT * FROM ${ident(scratch)}._history.${t}`);
  return true;
}
