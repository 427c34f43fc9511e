/**
 * The warehouse's layout version: which tables and columns of `_evsync` and which shape of the stream tables this
 * file holds, a number kept in `_evsync.meta` (key `schema_version`). Read at every open before anything is written,
 * so that a warehouse written by a newer evsync is refused as it is, never half-migrated by an older one.
 *
 * Every layout a release has written, and the step that brings it to the next (migrations.ts):
 *   1  a column per custom field (`c_<id>`), no `_evsync.publish_pending` (written by 773f596 and before; every
 *      release before versioning stamped `'1'`, layout 2 included, so a `'1'` may be either)
 *   2  the custom fields in one JSON column, `_evsync.publish_pending` (14d1835 and 380c339 wrote it, stamped `'1'`)
 *   3  the op log `_evsync.archive_ops` and `archive_began` in `_evsync.meta` (the archive), and
 *      `_evsync.custom_field_types` (69cf587 wrote it)
 *   4  the history: schemas `_history` (a `_history.<stream>` per stream table whose history is kept) and `history`
 */
import type { Db } from '../db/connection.js';
import { tableExists } from '../state/bookkeeping.js';

/** The layout this program writes, and the newest it reads. Raised by one with each step added to migrations.ts. */
export const LAYOUT_VERSION = 4;

/** Where `_evsync.meta` keeps the version (the key every release wrote it under). */
const LAYOUT_KEY = 'schema_version';

/** A warehouse this program must not open: written by a newer evsync, or with a version it cannot read. */
export class WarehouseLayoutError extends Error {
  override readonly name = 'WarehouseLayoutError';
}

/**
 * The layout version of the open file: null for a new one (no `_evsync.meta`: nothing evsync wrote in it), 1 for a
 * meta without a version. Reads only; throws WarehouseLayoutError for a version newer than LAYOUT_VERSION or one
 * that is not a version.
 */
export async function readLayoutVersion(db: Db): Promise<number | null> {
  if (!(await tableExists(db, '_evsync', 'meta'))) return null;
  const r = await db.query(`SELECT value FROM _evsync.meta WHERE key = ?`, [LAYOUT_KEY]);
  const text = r.rows[0]?.value;
  if (text === null || text === undefined) return 1;
  const version = /^[1-9][0-9]{0,8}$/.test(String(text)) ? Number(text) : Number.NaN;
  if (Number.isNaN(version)) {
    throw new WarehouseLayoutError(
      `${db.path}: its layout version is ${JSON.stringify(String(text))}, not one evsync wrote; it was left untouched`,
    );
  }
  if (version > LAYOUT_VERSION) {
    throw new WarehouseLayoutError(
      `${db.path} has warehouse layout version ${version}, and this evsync reads layouts up to ${LAYOUT_VERSION}: ` +
        `it was written by a newer evsync. Upgrade evsync to open it (the file was left untouched)`,
    );
  }
  return version;
}

/** Records `version` as the file's layout (after the step that brought it there, in the step's transaction or after). */
export async function stampLayoutVersion(db: Db, version: number): Promise<void> {
  await db.run(`INSERT OR REPLACE INTO _evsync.meta VALUES (?, ?)`, [LAYOUT_KEY, String(version)]);
}
