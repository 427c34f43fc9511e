/**
 * A new warehouse, created at the current layout directly (no migration runs on it): every `_evsync` table as each
 * part of the warehouse declares its own, the `analytics` schema, and the version.
 */
import { BOOKKEEPING_DDL } from '../bookkeeping.js';
import type { Db } from '../connection.js';
import { JOURNAL_DDL } from '../journal.js';
import { PUBLISH_PENDING_DDL } from '../publish-pending.js';
import { STATE_DDL } from '../state.js';
import { LAYOUT_VERSION, stampLayoutVersion } from './version.js';

export async function createLayout(db: Db): Promise<void> {
  await db.transaction(async () => {
    for (const sql of [...BOOKKEEPING_DDL, ...STATE_DDL, ...JOURNAL_DDL, ...PUBLISH_PENDING_DDL]) await db.run(sql);
    await stampLayoutVersion(db, LAYOUT_VERSION);
  });
}
