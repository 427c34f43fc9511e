/**
 * A new warehouse, created at the current layout directly (no migration runs on it): every `_evsync` table as each
 * part of the warehouse declares its own, the `analytics` schema, and the version.
 */

import { recordArchiveBegan } from '../archive/archive-began.js';
import { OP_LOG_DDL } from '../archive/op-log.js';
import type { Db } from '../db/connection.js';
import { HISTORY_DDL } from '../history/versions.js';
import { JOURNAL_DDL } from '../journal/journal.js';
import { BOOKKEEPING_DDL } from '../state/bookkeeping.js';
import { CUSTOM_FIELD_TYPES_DDL } from '../state/custom-field-types.js';
import { PUBLISH_PENDING_DDL } from '../state/publish-pending.js';
import { UNAVAILABLE_DDL } from '../state/unavailable.js';
import { LAYOUT_VERSION, stampLayoutVersion } from './version.js';

export async function createLayout(db: Db): Promise<void> {
  await db.transaction(async () => {
    for (const sql of [
      ...BOOKKEEPING_DDL,
      ...UNAVAILABLE_DDL,
      ...JOURNAL_DDL,
      ...PUBLISH_PENDING_DDL,
      ...OP_LOG_DDL,
      CUSTOM_FIELD_TYPES_DDL,
      ...HISTORY_DDL,
    ])
      await db.run(sql);
    await recordArchiveBegan(db);
    await stampLayoutVersion(db, LAYOUT_VERSION);
  });
}
