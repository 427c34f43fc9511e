/**
 * The snapshot: a read-only DuckDB copy of the warehouse that any DuckDB client (the duckdb CLI, Python, DBeaver,
 * Metabase) can open while evsync holds the live file (DuckDB lets no other process open a file one process holds).
 *
 * What it holds: every stream table (all rows, `_deleted_at` included, as in the warehouse), the `_evsync` tables
 * the views need (`custom_fields`), `_evsync.snapshot` (one row: when and from where it was published, and the digest
 * of what it holds: snapshot-digest.ts), and the
 * `analytics` views created again inside the copy, so they name nothing outside it.
 *
 * How it is written, so that a reader never sees half of it:
 *   1. leftovers of a publish that was killed (`.<name>.publish-<hex>.tmp`, with its `.wal`) are removed;
 *   2. the copy is written to a new temporary file beside the target (same folder: same file system, so the rename
 *      is atomic), attached to the warehouse's own DuckDB instance, the tables copied in one transaction (one
 *      consistent point in time while writes go on through other connections). With `changedTables` (the daemon's
 *      publisher), the temporary file starts as a copy of the previous snapshot and only those tables are copied
 *      again: a publish costs what changed, not the whole warehouse;
 *   3. detached (DuckDB checkpoints it), fsynced, made owner-only (it holds personal data);
 *   4. renamed over the target, then the folder fsynced. A reader holding the previous file open keeps reading it
 *      (the old inode lives until it closes); the next open gets the new one.
 * Killed before step 4, the previous snapshot is untouched.
 *
 * `COPY FROM DATABASE` copies the whole file faster than one `CREATE TABLE ... AS SELECT` per table (measured on
 * medium: bench/results/publish.json), but it copies every `_evsync` table too (the webhook
 * journal with its raw deliveries, staged pages, seen ids), which grow with the daemon's life and are no reader's
 * business, and it cannot copy some tables only: per table it is, so the copy holds exactly what the views need and
 * a daemon's publish copies only the tables that changed.
 */
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  fsyncSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { COPY_FILE_OPTIONS, type Db, EXISTING_FILE_OPTIONS } from '../db/connection.js';
import { WarehouseError } from '../db/errors.js';
import { ident, literal, utcNow } from '../db/sql.js';
import { listStreamTables } from '../load/ddl.js';
import { type AnalyticsViewsReport, createAnalyticsViews } from '../views/views.js';
import { contentDigest } from './snapshot-digest.js';
import { snapshotTargetProblem } from './snapshot-target.js';

/**
 * `_evsync` tables copied into the snapshot (no journal, no raw records): the custom-field labels of the
 * column-per-field shape, which no view reads any more (they read the definitions tables) and nothing writes; kept
 * while snapshots carry it for their readers.
 */
const BOOKKEEPING_COPIED = ['custom_fields'] as const;

/** The snapshot file's layout: a copy's (connection.ts, COPY_FILE_OPTIONS), to bound memory. */
const SNAPSHOT_FILE_OPTIONS = COPY_FILE_OPTIONS;
/** A file keeps the block size it was made with. */
const REUSED_FILE_OPTIONS = EXISTING_FILE_OPTIONS;

export interface SnapshotOptions {
  /**
   * Called after each table is copied (n counts from 1), inside the copy's transaction, and awaited: progress, and a
   * test's kill point or pause.
   */
  onTable?: (table: string, n: number) => void | Promise<void>;
  /** What the snapshot was published after (a run id), recorded in `_evsync.snapshot`. */
  runId?: string | null;
  /**
   * The stream tables changed since the previous snapshot at the target: the others are taken from it (a file copy)
   * instead of copied again. Ignored (everything copied) when there is no previous snapshot, or it was published
   * from another warehouse. Without it, every table is copied.
   */
  changedTables?: readonly string[];
  /**
   * Leave the previous snapshot at the target as it is when this warehouse published it and nothing it would hold
   * has changed since (snapshot-digest.ts): the one-shot commands' publish, so a run that changed nothing writes
   * nothing. (The daemon's publisher publishes only what it was told changed.)
   */
  keepUnchanged?: boolean;
}

export interface SnapshotResult {
  /** The snapshot's absolute path. */
  path: string;
  tables: string[];
  /** The tables copied from the warehouse this time (the others came from the previous snapshot). */
  copied: string[];
  /** Rows copied per copied table (all rows, deleted ones included). */
  rows: Record<string, number>;
  /** Size of the snapshot file. */
  bytes: number;
  /** The analytics views created in the copy, and a warning per view that could not be. */
  views: AnalyticsViewsReport;
  /** Temporary files of an earlier, interrupted publish that were removed. */
  removedLeftovers: number;
  /** With `keepUnchanged`: nothing had changed, and the previous snapshot was left as it is (nothing written). */
  unchanged: boolean;
  ms: number;
}

/** A snapshot that cannot be written where asked (the target is the warehouse itself, or a folder). */
export class SnapshotRefusedError extends WarehouseError {
  override name = 'SnapshotRefusedError';
}

function tempPrefix(target: string): string {
  return `.${basename(target)}.publish-`;
}

const TEMP_RE = /^[0-9a-f]{16}\.tmp(\.wal)?$/;

/** Removes what a killed publish to `target` left beside it; returns how many files. */
function removeSnapshotLeftovers(target: string): number {
  const dir = dirname(target);
  const prefix = tempPrefix(target);
  let removed = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !TEMP_RE.test(name.slice(prefix.length))) continue;
    rmSync(join(dir, name), { force: true });
    removed++;
  }
  return removed;
}

function fsyncPath(path: string, flags: 'r' | 'r+'): void {
  const fd = openSync(path, flags);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Refuses a target holding a DuckDB database that is not an evsync snapshot (someone's own database). Returns the
 * digest the previous snapshot recorded when this warehouse published it (snapshot-digest.ts), else null (no file,
 * another warehouse's, or one written before snapshots carried a digest): read on the same attach.
 */
async function checkPrevious(db: Db, target: string): Promise<string | null> {
  if (!existsSync(target) || statSync(target).size === 0) return null;
  const alias = `evsync_previous_${randomBytes(6).toString('hex')}`;
  let ours = false;
  let digest: string | null = null;
  try {
    await db.run(`ATTACH ${literal(target)} AS ${ident(alias)} (READ_ONLY)`);
    try {
      const r = await db.query(
        `SELECT count(*) AS n FROM duckdb_tables()
          WHERE database_name = ? AND schema_name = '_evsync' AND table_name = 'snapshot'`,
        [alias],
      );
      ours = Number(r.rows[0]?.n ?? 0) === 1;
      if (ours) digest = await previousDigest(db, alias);
    } finally {
      await db.run(`DETACH ${ident(alias)}`);
    }
  } catch {
    // Unreadable as a database (damaged, another program's lock): not provably ours.
  }
  if (!ours) {
    throw new SnapshotRefusedError(
      `snapshot: ${target} exists and is not a snapshot evsync published; evsync replaces only its own (move the file away or name another)`,
    );
  }
  return digest;
}

/** The digest in the attached snapshot's `_evsync.snapshot` when this warehouse published it (null: none, or not). */
async function previousDigest(db: Db, alias: string): Promise<string | null> {
  try {
    const r = await db.query(`SELECT source, digest FROM ${ident(alias)}._evsync.snapshot`);
    const row = r.rows.length === 1 ? r.rows[0] : undefined;
    return row?.source === db.path && typeof row.digest === 'string' ? row.digest : null;
  } catch {
    return null; // written before snapshots carried a digest
  }
}

/** The checks that keep a snapshot from ever replacing something it must not. */
function checkTarget(db: Db, target: string): void {
  if (db.path === ':memory:') throw new SnapshotRefusedError('snapshot: an in-memory warehouse cannot be published');
  const problem = snapshotTargetProblem(target, db.path);
  if (problem) throw new SnapshotRefusedError(`snapshot: ${problem}`);
}

/**
 * Attaches the new copy as `alias` at `temp`. With `reuse`, the copy starts as the previous snapshot (a file copy:
 * far cheaper than copying its tables again) if that one was published from this warehouse; returns the stream
 * tables it holds then, or null for a new, empty copy.
 */
async function attachCopy(db: Db, target: string, temp: string, alias: string, reuse: boolean) {
  if (reuse && existsSync(target)) {
    copyFileSync(target, temp, constants.COPYFILE_FICLONE);
    let attached = false;
    try {
      await db.run(`ATTACH ${literal(temp)} AS ${ident(alias)} (${REUSED_FILE_OPTIONS})`);
      attached = true;
      const r = await db.query(`SELECT source FROM ${ident(alias)}._evsync.snapshot`);
      if (r.rows.length === 1 && r.rows[0]?.source === db.path) {
        const held = await db.query(
          `SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main'`,
          [alias],
        );
        return new Set(held.rows.map((row) => String(row.table_name)));
      }
    } catch {
      // Not readable as this warehouse's snapshot (damaged, an older layout): written anew below.
    }
    if (attached) await db.run(`DETACH ${ident(alias)}`);
    rmSync(temp, { force: true });
    rmSync(`${temp}.wal`, { force: true });
  }
  await db.run(`ATTACH ${literal(temp)} AS ${ident(alias)} (${SNAPSHOT_FILE_OPTIONS})`);
  return null;
}

/** The live warehouse's database and the attached copy's, by their names on the connection. */
interface CopyNames {
  live: string;
  alias: string;
}

/** How often, and how far apart, a refused checkpoint of the copy is tried again (see checkpointCopy). */
const CHECKPOINT_TRIES = 200;
const CHECKPOINT_PAUSE_MS = 25;

/**
 * Checkpoints the attached copy, so the file moved into place holds everything without its WAL. DuckDB refuses a
 * checkpoint while another connection's transaction is open on that database, and the writer's connection reaches
 * every attached database when it reads the catalog (a page's commit in a daemon run does, while a publish copies):
 * such a transaction lasts a page, so the checkpoint is tried again, a few seconds at most, before the publish
 * fails (and the publisher tries again at its next cadence).
 */
async function checkpointCopy(db: Db, alias: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await db.run(`CHECKPOINT ${ident(alias)}`);
      return;
    } catch (err) {
      const refused = err instanceof Error && /Cannot CHECKPOINT: there are other write transactions/.test(err.message);
      if (!refused || attempt >= CHECKPOINT_TRIES) throw err;
      await new Promise((resolve) => setTimeout(resolve, CHECKPOINT_PAUSE_MS));
    }
  }
}

/**
 * Copies the stream tables (all, or with a reused copy those changed and those it lacks) and the bookkeeping into
 * the attached copy, in one transaction: one consistent point in time. Returns the copied tables' row counts.
 */
async function copyTables(
  db: Db,
  names: CopyNames,
  tables: string[],
  held: Set<string> | null,
  opts: SnapshotOptions & { digest: string },
): Promise<{ copied: string[]; rows: Record<string, number> }> {
  const rows: Record<string, number> = {};
  const copied: string[] = [];
  const changed = new Set(opts.changedTables ?? []);
  const to = (schema: string, table: string) => `${ident(names.alias)}.${ident(schema)}.${ident(table)}`;
  const from = (schema: string, table: string) => `${ident(names.live)}.${ident(schema)}.${ident(table)}`;
  const copy = async (schema: string, table: string) => {
    await db.run(`DROP TABLE IF EXISTS ${to(schema, table)}`);
    await db.run(`CREATE TABLE ${to(schema, table)} AS SELECT * FROM ${from(schema, table)}`);
  };
  await db.transaction(async () => {
    if (held === null) {
      await db.run(`CREATE SCHEMA ${ident(names.alias)}._evsync`);
      await db.run(`CREATE SCHEMA ${ident(names.alias)}.analytics`);
    }
    // Tables the warehouse no longer has leave the copy too.
    for (const table of held ?? []) if (!tables.includes(table)) await db.run(`DROP TABLE ${to('main', table)}`);
    let done = 0;
    for (const table of tables) {
      if (held?.has(table) && !changed.has(table)) continue;
      await copy('main', table);
      copied.push(table);
      // CREATE TABLE AS reports no row count: the copy is counted (from its fresh row groups' metadata).
      const counted = await db.query(`SELECT count(*) AS n FROM ${to('main', table)}`);
      rows[table] = Number(counted.rows[0]?.n ?? 0);
      await opts.onTable?.(table, ++done);
    }
    for (const table of BOOKKEEPING_COPIED) await copy('_evsync', table);
    await db.run(`DROP TABLE IF EXISTS ${to('_evsync', 'snapshot')}`);
    await db.run(
      `CREATE TABLE ${to('_evsync', 'snapshot')} AS
         SELECT CAST(? AS TIMESTAMP) AS published_at, ? AS source, ? AS run_id, ? AS tables, ? AS digest`,
      [utcNow(db.now), db.path, opts.runId ?? null, tables.length, opts.digest],
    );
  });
  return { copied, rows };
}

/** The views are made inside the copy (its own `main`), so a reader opening it alone can use them. */
async function createViewsInCopy(db: Db, names: CopyNames): Promise<AnalyticsViewsReport> {
  await db.run(`USE ${ident(names.alias)}`);
  try {
    return await createAnalyticsViews(db);
  } finally {
    await db.run(`USE ${ident(names.live)}`);
  }
}

/** The finished copy, owner-only and synced, renamed over the target: readers see the old file or the new one. */
function moveIntoPlace(temp: string, target: string): void {
  rmSync(`${temp}.wal`, { force: true });
  chmodSync(temp, 0o600);
  fsyncPath(temp, 'r+');
  renameSync(temp, target);
  fsyncPath(dirname(target), 'r');
}

/**
 * Writes the snapshot of the warehouse `db` is connected to (its current database) and puts it at `target`.
 * Run it on a connection of its own to let writes go on meanwhile: it reads one consistent point in time.
 */
export async function publishSnapshot(db: Db, targetPath: string, opts: SnapshotOptions = {}): Promise<SnapshotResult> {
  const started = performance.now();
  const target = resolve(targetPath);
  checkTarget(db, target);
  const recorded = await checkPrevious(db, target);
  const removedLeftovers = removeSnapshotLeftovers(target);
  const tables = await listStreamTables(db);
  const digest = await contentDigest(db, tables, BOOKKEEPING_COPIED);
  if (opts.keepUnchanged && recorded === digest) {
    const views = { created: [], warnings: [] };
    const ms = performance.now() - started;
    return {
      path: target,
      tables,
      copied: [],
      rows: {},
      bytes: statSync(target).size,
      views,
      removedLeftovers,
      unchanged: true,
      ms,
    };
  }
  const temp = join(dirname(target), `${tempPrefix(target)}${randomBytes(8).toString('hex')}.tmp`);
  const names: CopyNames = {
    live: await currentDatabase(db),
    alias: `evsync_snapshot_${randomBytes(6).toString('hex')}`,
  };
  let attached = false;
  try {
    const held = await attachCopy(db, target, temp, names.alias, opts.changedTables !== undefined);
    attached = true;
    const { copied, rows } = await copyTables(db, names, tables, held, { ...opts, digest });
    const views = await createViewsInCopy(db, names);
    await checkpointCopy(db, names.alias);
    await db.run(`DETACH ${ident(names.alias)}`);
    attached = false;
    moveIntoPlace(temp, target);
    const bytes = statSync(target).size;
    const ms = performance.now() - started;
    return { path: target, tables, copied, rows, bytes, views, removedLeftovers, unchanged: false, ms };
  } catch (err) {
    if (attached) await db.run(`DETACH ${ident(names.alias)}`).catch(() => undefined);
    rmSync(temp, { force: true });
    rmSync(`${temp}.wal`, { force: true });
    throw err;
  }
}

async function currentDatabase(db: Db): Promise<string> {
  const r = await db.query('SELECT current_database() AS name');
  const name = r.rows[0]?.name;
  if (typeof name !== 'string') throw new Error('snapshot: no current database');
  return name;
}
