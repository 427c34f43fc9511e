/**
 * Delete detection. The API has no delete feed: a record that vanished is simply absent from lists. Snapshot walks
 * and id sweeps record every id they see in `_evsync.seen` (in the same transaction as each page); when such a walk
 * completes, `markMissing` compares: rows of the scope whose id was not seen get `_deleted_at`, rows seen again
 * lose it, and the walk's seen ids are dropped.
 *
 * Only call it for a walk that covered the whole scope: every row of the scope that the walk did not record is
 * marked deleted.
 */
import type { ResolvedStream } from '../../../connectors/types.js';
import type { OpLog } from '../archive/op-log.js';
import type { Db } from '../db/connection.js';
import { ident, timestampText, utcNow } from '../db/sql.js';
import { keepVersions } from '../history/versions.js';
import type { ScopeRef } from '../types.js';

export interface MarkMissingInput {
  stream: ResolvedStream;
  scope: ScopeRef;
  walkId: string;
  runId: string;
  /** When the walk completed (server clock); becomes `_deleted_at`. */
  at: string;
  /** Limit the comparison to rows whose `column` is one of `values` (a walk that read only those parents' rows). */
  within?: { column: string; values: readonly number[] };
}

/** `changed` runs in the marks' transaction when they changed a row (a warehouse that publishes records it owed). */
export async function markMissing(
  db: Db,
  ops: OpLog,
  input: MarkMissingInput,
  changed?: () => Promise<void>,
): Promise<{ deleted: number; restored: number }> {
  const { stream, scope, walkId, runId } = input;
  if (stream.key.length !== 1) {
    throw new Error(
      `markMissing ${stream.name}: delete detection needs a single id key, not (${stream.key.join(', ')})`,
    );
  }
  if (scope.column !== null && !Number.isSafeInteger(scope.value)) {
    throw new Error(`markMissing ${stream.name}: scope ${scope.key} has no integer id`);
  }
  const table = ident(stream.name);
  const key = `${table}.${ident(stream.key[0] as string)}`;
  if (input.within && !input.within.values.every((v) => Number.isSafeInteger(v))) {
    throw new Error(`markMissing ${stream.name}: within.values must be integers`);
  }
  const within = input.within
    ? input.within.values.length > 0
      ? `AND ${table}.${ident(input.within.column)} IN (${input.within.values.join(',')})`
      : 'AND FALSE'
    : '';
  const inScope = `${scope.column !== null ? `AND ${table}.${ident(scope.column)} = CAST(? AS BIGINT)` : ''} ${within}`;
  const scopeParams = scope.column !== null ? [scope.value] : [];
  const seen = `SELECT 1 FROM _evsync.seen s WHERE s.stream = ? AND s.scope = ? AND s.walk_id = ? AND s.id = ${key}`;
  const seenParams = [stream.name, scope.key, walkId];
  const at = timestampText(input.at) ?? utcNow(db.now);
  const now = utcNow(db.now);

  const missing = `"_deleted_at" IS NULL ${inScope} AND NOT EXISTS (${seen})`;
  const seenAgain = `"_deleted_at" IS NOT NULL ${inScope} AND EXISTS (${seen})`;
  return db.transaction(async () => {
    // The rows each mark changes, found by one scan (most sweeps find none, and then nothing else reads the table);
    // the versions they end are kept before they change (history/versions.ts): the live one a delete ends, the
    // delete a restore ends.
    const rowsWhere = async (where: string) =>
      (await db.query(`SELECT rowid AS r FROM ${table} WHERE ${where}`, [...scopeParams, ...seenParams])).rows.map(
        (row) => Number(row.r),
      );
    const byRow = 'rowid IN (SELECT unnest(CAST(? AS BIGINT[])))';
    /** Keeps the versions the rows `where` selects end, then sets `set` on them; returns how many changed. */
    const mark = async (where: string, set: string, params: unknown[]) => {
      const rows = await rowsWhere(where);
      if (rows.length === 0) return 0;
      await keepVersions(db, stream.name, byRow, [JSON.stringify(rows)]);
      return db.run(`UPDATE ${table} SET ${set} WHERE ${byRow}`, [...params, JSON.stringify(rows)]);
    };
    const deleted = await mark(
      missing,
      `"_deleted_at" = CAST(? AS TIMESTAMP), "_run_id" = ?, "_synced_at" = CAST(? AS TIMESTAMP)`,
      [at, runId, now],
    );
    const restored = await mark(seenAgain, `"_deleted_at" = NULL, "_run_id" = ?, "_synced_at" = CAST(? AS TIMESTAMP)`, [
      runId,
      now,
    ]);
    await db.run(`DELETE FROM _evsync.seen WHERE stream = ? AND scope = ? AND walk_id = ?`, seenParams);
    const detail = {
      scope: { key: scope.key, column: scope.column, value: scope.value },
      walk: walkId,
      deletedAt: at,
      within: input.within ? { column: input.within.column, values: [...input.within.values] } : null,
    };
    await ops.log(db, { kind: 'missing', stream: stream.name, runId, entry: null, detail }, now);
    if (deleted + restored > 0) await changed?.();
    return { deleted, restored };
  });
}

/** Drops the seen ids of walks that will never complete (e.g. abandoned by a newer walk of the same scope). */
export async function dropSeen(db: Db, stream: string, scope: string, walkId?: string): Promise<number> {
  return walkId === undefined
    ? db.run(`DELETE FROM _evsync.seen WHERE stream = ? AND scope = ?`, [stream, scope])
    : db.run(`DELETE FROM _evsync.seen WHERE stream = ? AND scope = ? AND walk_id = ?`, [stream, scope, walkId]);
}
