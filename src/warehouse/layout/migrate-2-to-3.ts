/**
 * Layout 2 to 3: the op log (`_evsync.archive_ops`, archive/op-log.ts) that a rebuild replays, and what the stream
 * tables held when the log began (`_evsync.meta` key `archive_began`: rows per table). A rebuild reproduces only
 * what the log holds, so it refuses a table that had rows before (archive/archive-began.ts). Also the custom-field
 * types the views type answers by (`_evsync.custom_field_types`, state/custom-field-types.ts). Nothing else changes.
 */

import { recordArchiveBegan } from '../archive/archive-began.js';
import { OP_LOG_DDL } from '../archive/op-log.js';
import { CUSTOM_FIELD_TYPES_DDL } from '../state/custom-field-types.js';
import type { MigrationContext } from './context.js';

export async function migrate2To3(ctx: MigrationContext): Promise<void> {
  // Pages a killed process staged merge first: their rows were loaded before the log began.
  await ctx.mergeStaged();
  await ctx.db.transaction(async () => {
    for (const sql of [...OP_LOG_DDL, CUSTOM_FIELD_TYPES_DDL]) await ctx.db.run(sql);
    await recordArchiveBegan(ctx.db);
  });
}
