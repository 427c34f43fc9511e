/**
 * A point-in-time copy of the whole warehouse (every schema, `_evsync` included) in a file of its own: what SQL typed
 * through the daemon runs on, since DuckDB lets no second instance of this process open the live file safely (see
 * `Db.openSnapshotReader`). Unlike the snapshot published for readers (snapshot.ts: stream tables and views, copied
 * table by table), a query must see everything `evsync query` sees without a daemon, bookkeeping included.
 *
 * The copy is the file's bytes as of a checkpoint: in the writer's queue the file is checkpointed and DuckDB is kept
 * from checkpointing again (Db.holdCheckpoints); then, beside the queue while the writer goes on, the file is copied
 * by a child process (copyFileAside says why), and checkpoints are allowed again. Between
 * two checkpoints DuckDB writes only the WAL and blocks the last checkpoint does not use, so the copy opens as the
 * database at that checkpoint (tested while large appends, updates, deletes and drops ran through 111 rounds of
 * copying). Copying the bytes costs next to no CPU (bench/results/replay.json, the query copy of the 5M-row
 * warehouse) where `COPY FROM DATABASE` reads and writes every row; it stays as the way when DuckDB refuses the checkpoint (another connection's write
 * transaction open). Either copy is written under a temporary name beside the target, then renamed over it: a reader
 * that holds the previous copy open keeps reading it (the old file lives on until it closes it).
 */

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { COPY_FILE_OPTIONS, type Db } from '../db/connection.js';
import { ident, literal } from '../db/sql.js';

export interface QueryCopyWritten {
  path: string;
  bytes: number;
  /** The writer's change count the copy reflects (see `Db.generation`). */
  generation: number;
}

/** Temporary files a killed copy left beside `target` (`<name>.tmp-<hex>` and their WALs). */
export function removeQueryCopyLeftovers(target: string): void {
  const prefix = `${basename(target)}.tmp-`;
  let names: string[];
  try {
    names = readdirSync(dirname(target));
  } catch {
    return;
  }
  for (const name of names) if (name.startsWith(prefix)) rmSync(join(dirname(target), name), { force: true });
}

// Run by a child Node: see copyFileAside.
const COPY_SCRIPT =
  "const fs = require('node:fs'); fs.copyFileSync(process.argv[1], process.argv[2], fs.constants.COPYFILE_FICLONE);";

/**
 * Copies `from` to `to` in a child process. Never in this one: DuckDB's lock on the warehouse file is a POSIX record
 * lock, and closing any descriptor this process opened on the file drops every lock it holds there (a copy made
 * in-process let a second `evsync sync` open the file while the daemon ran: test/capture/daemon.test.ts). The child's
 * descriptors are its own. The copy is a reflink where the file system has them, else the kernel's copy; the mode
 * (0600) comes with it.
 */
export async function copyFileAside(from: string, to: string): Promise<void> {
  await promisify(execFile)(process.execPath, ['-e', COPY_SCRIPT, from, to], { windowsHide: true });
}

/** The whole database by `COPY FROM DATABASE` on a connection beside the queue (MVCC gives it one consistent view). */
async function copyDatabase(db: Db, catalog: string, temporary: string, alias: string): Promise<void> {
  await db.sideConnection(async (connection) => {
    await connection.run(`ATTACH ${literal(temporary)} AS ${alias} (${COPY_FILE_OPTIONS})`);
    try {
      await connection.run(`COPY FROM DATABASE ${ident(catalog)} TO ${alias}`);
    } finally {
      await connection.run(`DETACH ${alias}`);
    }
  });
}

/**
 * The file's bytes while checkpoints are held (released here, whatever happens); false, leaving nothing behind, when
 * the copy is refused (a platform whose locks keep another process from reading a file DuckDB holds): the caller
 * then has DuckDB copy the database instead.
 */
async function copyHeldFile(db: Db, temporary: string): Promise<boolean> {
  try {
    await copyFileAside(db.path, temporary);
    return true;
  } catch {
    rmSync(temporary, { force: true });
    return false;
  } finally {
    await db.releaseCheckpoints();
  }
}

/**
 * Copies every schema of the warehouse (tables, views) to `target`, replacing it atomically. `settle` runs first in
 * the writer's queue (merging staged pages), right before the checkpoint the copy is made from.
 */
export async function writeQueryCopy(db: Db, target: string, settle: () => Promise<void>): Promise<QueryCopyWritten> {
  const catalog = db.catalog;
  if (catalog === null) throw new Error('an in-memory warehouse has no snapshot');
  removeQueryCopyLeftovers(target);
  const tag = randomBytes(6).toString('hex');
  const temporary = `${target}.tmp-${tag}`;
  const { generation, held } = await db.exclusive(async () => {
    await settle();
    return { generation: db.generation, held: await db.holdCheckpoints() };
  });
  try {
    if (!(held && (await copyHeldFile(db, temporary)))) {
      await copyDatabase(db, catalog, temporary, `evsync_query_copy_${tag}`);
    }
    // Not synced to disk: after a crash the daemon removes the copy and makes a new one before the first query
    // (QueryService), so flushing it (the whole database's size) would buy nothing.
    renameSync(temporary, target);
  } catch (err) {
    rmSync(temporary, { force: true });
    rmSync(`${temporary}.wal`, { force: true });
    throw err;
  }
  return { path: target, bytes: statSync(target).size, generation };
}
