/**
 * Layout 3 to 4: the history of every record (history/versions.ts): the schemas `_history` (the versions a stream
 * table no longer holds) and `history` (the views readers query), and an empty `_history.<stream>` for each stream
 * table whose history is kept. History begins here: each record's current row is its first version. Stream tables
 * are unchanged.
 */
import { ensureHistory, HISTORY_DDL, historyKey } from '../history/versions.js';
import { listStreamTables } from '../load/ddl.js';
import type { MigrationContext } from './context.js';

export async function migrate3To4(ctx: MigrationContext): Promise<void> {
  await ctx.mergeStaged();
  await ctx.db.transaction(async () => {
    for (const sql of HISTORY_DDL) await ctx.db.run(sql);
    for (const table of await listStreamTables(ctx.db)) await ensureHistory(ctx.db, table, historyKey(table) !== null);
  });
}
