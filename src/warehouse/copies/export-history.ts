/**
 * The rows of a stream's history output (export-unchanged.ts historyOutputId): every version of the records that
 * changed, as its `history.<stream>` view gives them (a record that never changed is its row in the stream's own output
 * alone: writing every such row again doubled a `large` publish, 459 MB of serve's memory and 40 s of freshness). Made
 * from history/history-views.ts historySelect (from the tables rather than read from the view, which a warehouse
 * whose views were not built since may lack), derived columns included.
 *
 * The view's windows run over each record's versions (partitioned by key), so a filter on one event's rows cannot be
 * pushed below them: copied partition by partition from the view, every partition would compute the whole history
 * again. The rows of the partitions an export writes are computed once instead, from the records that have a version
 * in them (historySelect's scope: a publish of one changed event reads that event's records, not the table), into a
 * temporary table of the export's connection, copied from partition by partition, then dropped. It holds those
 * partitions' versions: under DuckDB's memory limit, spilled to its temporary folder beyond.
 */
import { randomBytes } from 'node:crypto';
import { columnsOf } from '../db/columns.js';
import type { Db } from '../db/connection.js';
import { ident } from '../db/sql.js';
import { historySelect } from '../history/history-views.js';
import { historyKey } from '../history/versions.js';
import { PARTITION_COLUMN } from './export-unchanged.js';

/**
 * The history of `stream` in the event partitions `only` (null: all of it) as a temporary table; returns its SQL
 * reference (dropHistoryRows drops it).
 */
export async function materializeHistory(db: Db, stream: string, only: readonly number[] | null): Promise<string> {
  const key = historyKey(stream);
  const live = await columnsOf(db, 'main', stream);
  if (!key?.every((k) => live.has(k))) throw new Error(`export: ${stream} keeps no history to export`);
  const name = ident(`evsync_history_${randomBytes(6).toString('hex')}`);
  const partitions = `${ident(PARTITION_COLUMN)} IN (${only?.length ? only.map((id) => String(id)).join(', ') : 'NULL'})`;
  // Only the records with a version in those partitions are read (each with all its versions: the windows stay
  // exact), then only their versions in those partitions kept.
  const select = historySelect(stream, key, live, only === null ? undefined : partitions, true);
  await db.run(
    `CREATE TEMP TABLE ${name} AS SELECT * FROM (${select}) h${only === null ? '' : ` WHERE ${partitions}`}`,
  );
  return name;
}

/** Drops what materializeHistory made. */
export async function dropHistoryRows(db: Db, name: string): Promise<void> {
  await db.run(`DROP TABLE IF EXISTS ${name}`);
}
