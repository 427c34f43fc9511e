/**
 * What the daemon's publisher still owes its readers (src/daemon/publisher.ts): the partitions changes touched since
 * the last publish that completed. Written before a publish starts and removed once it is done, so a daemon killed
 * during a publish (or before it) finishes or redoes it at its next start.
 *
 * _evsync.publish_pending  table_name VARCHAR NOT NULL, event_id BIGINT (NULL: the whole table), recorded_at
 *                          TIMESTAMP (UTC): one row per time a partition was recorded as touched
 *
 * A publish that starts at C delivers every change committed before C, so it removes the rows recorded before C
 * only: a partition touched again while it runs keeps its later row and is published again next time.
 */
import type { Db } from '../db/connection.js';
import { utcNow } from '../db/sql.js';
import type { ScopeRef } from '../types.js';

export const PUBLISH_PENDING_DDL = [
  `CREATE TABLE IF NOT EXISTS _evsync.publish_pending (
     table_name VARCHAR NOT NULL, event_id BIGINT, recorded_at TIMESTAMP NOT NULL)`,
];

/**
 * A partition of a table, the one shape of "what a change touched" from the warehouse to the readers' outputs
 * (src/outputs/partition.ts): an event of an event-scoped table, or the whole table (`eventId` null: an account
 * scope, or a parent's scope whose rows may span events). Owed here until a publish delivers it.
 */
export interface Partition {
  table: string;
  eventId: number | null;
}

/**
 * The partition a scope's rows land in: its event for an event scope (the Parquet export partitions tables by
 * `event_id`, export.ts), else the whole table (an account scope; a parent's scope, whose rows may span events).
 */
export function partitionOf(scope: ScopeRef): number | null {
  return scope.column === 'event_id' ? scope.value : null;
}

/** Each distinct partition once. */
export function distinctPartitions(parts: Iterable<Partition>): Partition[] {
  const byKey = new Map<string, Partition>();
  for (const p of parts) byKey.set(`${p.table}\0${p.eventId ?? ''}`, { table: p.table, eventId: p.eventId });
  return [...byKey.values()];
}

/**
 * Records, in the caller's transaction, that a change to these partitions is owed to readers (a daemon that
 * publishes: see Warehouse's `publishing`). Recorded with the change itself, a daemon killed before its publisher
 * heard of the change still owes it at its next start.
 */
export async function owePartitions(db: Db, parts: readonly Partition[]): Promise<void> {
  const at = utcNow(db.now);
  await addPending(
    db,
    parts.map((p) => ({ ...p, at })),
  );
}

export async function readPending(db: Db): Promise<Partition[]> {
  const r = await db.query(
    `SELECT DISTINCT table_name, event_id FROM _evsync.publish_pending ORDER BY table_name, event_id NULLS FIRST`,
  );
  return r.rows.map((row) => ({
    table: String(row.table_name),
    eventId: row.event_id === null ? null : Number(row.event_id),
  }));
}

/** Records partitions as owed, each at the time it was touched (UTC `YYYY-MM-DD HH:MM:SS.mmm`). */
export async function addPending(db: Db, parts: readonly (Partition & { at: string })[]): Promise<void> {
  if (parts.length === 0) return;
  await db.run(
    `INSERT INTO _evsync.publish_pending (table_name, event_id, recorded_at)
     SELECT p.t, p.e, CAST(p.a AS TIMESTAMP)
       FROM (SELECT unnest(CAST(CAST(? AS JSON) AS STRUCT(t VARCHAR, e BIGINT, a VARCHAR)[]), recursive := true)) p`,
    [JSON.stringify(parts.map((p) => ({ t: p.table, e: p.eventId, a: p.at })))],
  );
}

/** Removes what a publish that started at `startedAt` delivered: the rows recorded before it. */
export async function removePendingBefore(db: Db, startedAt: string): Promise<void> {
  await db.run(`DELETE FROM _evsync.publish_pending WHERE recorded_at < CAST(? AS TIMESTAMP)`, [startedAt]);
}
