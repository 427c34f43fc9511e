/**
 * Is `--db` a usable warehouse path? Said the same way by `check` (as a failed check) and by every command that
 * opens the warehouse (as a usage error, exit 2), before DuckDB's own words ("IO Error: Could not read from file")
 * can reach the user.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, lstatSync, openSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { errnoCode, errnoReason } from '../warehouse/db/fs-errors.js';
import { errorMessage } from './errors.js';

/** How the codes whose plain meaning does not fit a database file are said. */
const DATABASE_WORDING = {
  EROFS: 'read-only file system (EROFS)',
  ENOENT: 'no such file or folder, or the file system refuses new files there (ENOENT)',
};

const POINT_ELSEWHERE = 'point --db / EVSYNC_DB elsewhere';

function fsReason(err: unknown): string {
  return errnoReason(errnoCode(err), DATABASE_WORDING) ?? errorMessage(err);
}

/** Creates and removes an owner-only file in `folder`: the one sure test that files can be created there. */
function probeFolder(folder: string): void {
  const probe = join(folder, `.evsync-check-${randomBytes(6).toString('hex')}`);
  closeSync(openSync(probe, 'wx', 0o600));
  rmSync(probe, { force: true });
}

/** What is wrong with the existing entry at `db` as the warehouse file: a folder, or a file `open(flags)` refuses. */
function existingFileProblem(
  db: string,
  st: ReturnType<typeof lstatSync> | undefined,
  flags: 'r' | 'r+',
  cannot: string,
): string | null {
  if (st?.isDirectory()) return `${db} is a folder, not a database file (${POINT_ELSEWHERE})`;
  if (!st) return null;
  try {
    closeSync(openSync(db, flags));
    return null;
  } catch (err) {
    return `${db} ${cannot}: ${fsReason(err)}`;
  }
}

/** Why `db` cannot be read as a warehouse file (a folder, unreadable), or null; a missing file is no problem here. */
export function warehouseUnreadable(db: string): string | null {
  let st: ReturnType<typeof lstatSync> | undefined;
  try {
    st = statSync(db, { throwIfNoEntry: false });
  } catch (err) {
    return `${db} cannot be read: ${fsReason(err)}`;
  }
  return existingFileProblem(db, st, 'r', 'cannot be read');
}

/**
 * Why a sync could not write the warehouse, or null: the file itself (opened for writing, nothing written) and its
 * folder, where DuckDB creates `<db>.wal` on the first write. Permission bits are not consulted: root ignores them,
 * so only trying says the truth (a read-only mount, a path under a file, /proc).
 */
export function warehouseWritable(db: string): string | null {
  const folder = dirname(db);
  let st: ReturnType<typeof lstatSync> | undefined;
  try {
    st = lstatSync(db, { throwIfNoEntry: false });
  } catch (err) {
    return `${db} cannot be created: ${fsReason(err)}`;
  }
  if (st) {
    const problem = existingFileProblem(db, st, 'r+', 'cannot be written');
    if (problem) return st.isDirectory() ? problem : `${problem}; a sync writes it`;
  } else {
    let folderStat: ReturnType<typeof statSync> | undefined;
    try {
      folderStat = statSync(folder, { throwIfNoEntry: false });
    } catch (err) {
      return `${db} cannot be created: ${fsReason(err)}`;
    }
    if (!folderStat)
      return `${db} cannot be created: folder ${folder} does not exist (create it, or ${POINT_ELSEWHERE})`;
    if (!folderStat.isDirectory()) return `${db} cannot be created: ${folder} is a file, not a folder`;
  }
  try {
    probeFolder(folder);
  } catch (err) {
    return `${st ? `${db} cannot be written` : `${db} cannot be created`}: folder ${folder} refuses new files (${fsReason(err)}); DuckDB writes ${basename(db)}.wal there`;
  }
  return null;
}

/** DuckDB's refusal of a file that is not one of its databases, said for a user; null for any other error. */
export function notADatabase(db: string, err: unknown): string | null {
  return /not a valid DuckDB database file/i.test(errorMessage(err))
    ? `${db} is not a DuckDB database (an evsync warehouse is one): ${POINT_ELSEWHERE}, or move the file away`
    : null;
}
