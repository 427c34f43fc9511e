/**
 * The snapshot: a read-only DuckDB catalogue of the warehouse that any DuckDB client (the duckdb CLI, Python,
 * DBeaver, Metabase) can open while evsync holds the live file (DuckDB lets no other process open a file one
 * process holds).
 *
 * What it is: a small DuckDB file (snapshot-catalogue.ts) whose stream tables are views over Parquet parts kept
 * beside it, in `<snapshot>.parts/` (snapshot-parts.ts): every row, `_deleted_at` included, as in the warehouse;
 * each stream's kept versions as a view `_history.<stream>` over parts of their own (`<snapshot>.parts/_history.<stream>/`,
 * cut and fingerprinted as the stream's), so that the `analytics` views and the `history` views and macros
 * (history/history-views.ts), created again inside it, answer as the warehouse's; `_evsync.custom_fields`, and what
 * it was made of.
 *
 * Why parts (issue 35): a copy of the whole warehouse per publish cost what the warehouse holds, not what changed
 * (679 MiB, 20 s of CPU and 520 MB on `large` for a run that changed nothing). A table is cut into parts
 * (table-parts.ts: an event's rows, or a hash bucket of a big scope's ids), each with a fingerprint of its rows;
 * a publish writes again only the parts whose fingerprint changed, and a new catalogue naming them. A publish after
 * nothing changed writes nothing; one changed record writes its part and the catalogue. Rejected: copying the
 * previous snapshot file and replacing the changed tables in it (every publish still writes the whole file, unless
 * the file system clones, and a changed table is copied whole), and updating the previous file in place (a reader
 * holding it would block the writer, or see it change under it).
 *
 * How it is written, so that a reader never sees half of it:
 *   1. leftovers of a killed publish (`.<name>.publish-<hex>.tmp`, with its `.wal`) are removed;
 *   2. in one transaction (one consistent point in time while writes go on through other connections), the parts
 *      are fingerprinted and the changed ones written to new files (never over a file a reader may read);
 *   3. the catalogue is written to a new temporary file beside the target (starting from a copy of the previous
 *      catalogue, which keeps its views), checkpointed, fsynced, made owner-only (the parts hold personal data);
 *   4. renamed over the target, then the folder fsynced. A reader holding the previous catalogue keeps reading the
 *      parts it lists: replaced parts stay for the grace period (`graceMs`, 15 minutes) before a later publish
 *      removes them. A reader holding a snapshot open longer reopens it.
 * Killed before step 4, the previous snapshot is untouched (the new parts are removed by the next publish).
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { COPY_FILE_OPTIONS, type Db, EXISTING_FILE_OPTIONS, holdOwnerOnlyUmask } from '../db/connection.js';
import { WarehouseError } from '../db/errors.js';
import { fsyncPath } from '../db/fsync.js';
import { ident, literal, utcNow } from '../db/sql.js';
import { listStreamTables } from '../load/ddl.js';
import { tableExists } from '../state/bookkeeping.js';
import { CUSTOM_FIELD_TYPES_TABLE } from '../state/custom-field-types.js';
import { type AnalyticsViewsReport, createAnalyticsViews } from '../views/views.js';
import { type PreviousSnapshot, readPrevious, writeCatalogue } from './snapshot-catalogue.js';
import { contentDigest } from './snapshot-digest.js';
import {
  partsFolder,
  type RecordedPart,
  type RetiredPart,
  SNAPSHOT_GRACE_MS,
  sweepParts,
  syncPartFolders,
  writePart,
} from './snapshot-parts.js';
import { snapshotTargetProblem } from './snapshot-target.js';
import { columnsSignatures, copiedTable, HISTORY_SCHEMA, historyId, keptHistories, tableParts } from './table-parts.js';

export { SNAPSHOT_GRACE_MS };

/**
 * `_evsync` tables copied into the snapshot (no journal, no raw records): the custom-field labels of the
 * column-per-field shape, which no view reads any more (they read the definitions tables) and nothing writes; kept
 * while snapshots carry it for their readers.
 */
const BOOKKEEPING_COPIED = ['custom_fields'] as const;

/**
 * The bookkeeping to copy: BOOKKEEPING_COPIED, and the custom-field types when the warehouse has them (made on first
 * use, see custom-field-types.ts): the snapshot's custom-field views are built from its copy, and must type those
 * fields as the live views do.
 */
async function bookkeepingCopied(db: Db): Promise<string[]> {
  const typed = await tableExists(db, '_evsync', CUSTOM_FIELD_TYPES_TABLE);
  return [...BOOKKEEPING_COPIED, ...(typed ? [CUSTOM_FIELD_TYPES_TABLE] : [])];
}

/** The catalogue file's layout: a copy's (connection.ts, COPY_FILE_OPTIONS). */
const SNAPSHOT_FILE_OPTIONS = COPY_FILE_OPTIONS;
/** A file keeps the block size it was made with. */
const REUSED_FILE_OPTIONS = EXISTING_FILE_OPTIONS;

export interface SnapshotOptions {
  /**
   * Called after the changed parts of each table (by id: `registrants`, `_history.registrants`) are written (n
   * counts from 1), inside the publish's transaction,
   * and awaited: progress, and a test's kill point or pause.
   */
  onTable?: (table: string, n: number) => void | Promise<void>;
  /** What the snapshot was published after (a run id), recorded in `_evsync.snapshot`. */
  runId?: string | null;
  /**
   * The stream tables that may have changed since the previous snapshot at the target (the daemon's publisher knows
   * what it was told): the others keep their parts without being fingerprinted again, when their columns are
   * unchanged. Without it, every table's parts are fingerprinted.
   */
  changedTables?: readonly string[];
  /** How long a replaced part stays for readers of an earlier snapshot (default SNAPSHOT_GRACE_MS). */
  graceMs?: number;
}

export interface SnapshotResult {
  /** The snapshot's absolute path (the catalogue; its parts are in `<path>.parts`). */
  path: string;
  tables: string[];
  /**
   * The tables with a part written this time (the others' parts were unchanged), by id: a stream table's name, or
   * `_history.<stream>` for its kept versions (table-parts.ts).
   */
  copied: string[];
  /** Rows written per copied table (the rows of its changed parts, deleted ones included; versions for a history). */
  rows: Record<string, number>;
  /** Bytes this publish wrote: the parts written and the catalogue (0 when unchanged). */
  bytes: number;
  /** Bytes a reader of the snapshot reads from: the catalogue and every part it lists. */
  size: number;
  parts: {
    /** Parts written this time. */
    written: number;
    /** Parts the snapshot reads, written by earlier publishes and unchanged since. */
    kept: number;
    /** Parts replaced this time (kept for the grace period). */
    retired: number;
    /** Files removed: replaced parts past the grace, and parts no snapshot lists. */
    removed: number;
  };
  /** The analytics views created in the catalogue, and a warning per view that could not be. */
  views: AnalyticsViewsReport;
  /** Temporary files of an earlier, interrupted publish that were removed. */
  removedLeftovers: number;
  /** Nothing had changed since the previous snapshot of this warehouse: it was left as it is (nothing written). */
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

/**
 * Refuses a target holding a DuckDB database that is not an evsync snapshot (someone's own database). Returns what
 * the previous snapshot was (null: no file).
 */
async function checkPrevious(db: Db, target: string): Promise<PreviousSnapshot | null> {
  if (!existsSync(target) || statSync(target).size === 0) return null;
  const alias = `evsync_previous_${randomBytes(6).toString('hex')}`;
  let previous: PreviousSnapshot | null = null;
  try {
    await db.run(`ATTACH ${literal(target)} AS ${ident(alias)} (READ_ONLY)`);
    try {
      previous = await readPrevious(db, alias);
    } finally {
      await db.run(`DETACH ${ident(alias)}`);
    }
  } catch {
    // Unreadable as a database (damaged, another program's lock): not provably ours.
  }
  if (previous === null) {
    throw new SnapshotRefusedError(
      `snapshot: ${target} exists and is not a snapshot evsync published; evsync replaces only its own (move the file away or name another)`,
    );
  }
  return previous;
}

/** The checks that keep a snapshot from ever replacing something it must not. */
function checkTarget(db: Db, target: string): void {
  if (db.path === ':memory:') throw new SnapshotRefusedError('snapshot: an in-memory warehouse cannot be published');
  const problem = snapshotTargetProblem(target, db.path);
  if (problem) throw new SnapshotRefusedError(`snapshot: ${problem}`);
}

/** How often, and how far apart, a refused checkpoint of the copy is tried again (see checkpointCopy). */
const CHECKPOINT_TRIES = 200;
const CHECKPOINT_PAUSE_MS = 25;

/**
 * Checkpoints the attached catalogue, so the file moved into place holds everything without its WAL. DuckDB refuses
 * a checkpoint while another connection's transaction is open on that database, and the writer's connection reaches
 * every attached database when it reads the catalog (a page's commit in a daemon run does, while a publish runs):
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

/** What step 2 found and wrote: every table's parts now, and what changed. */
interface PartsPass {
  /** The stream tables. */
  tables: string[];
  digest: string;
  /**
   * Every copied table's parts, by id (table-parts.ts CopiedTable): the stream tables and their kept versions (a
   * history that holds nothing yet has no part: the catalogue holds it as an empty table).
   */
  parts: Map<string, RecordedPart[]>;
  /** Tables whose set of files changed (their view is made again). */
  changed: Set<string>;
  /** Rows written per table with a part written (its keys: the tables copied). */
  rows: Record<string, number>;
  written: RecordedPart[];
  /** Files the snapshot no longer reads. */
  retired: string[];
}

/**
 * Step 2: fingerprints the tables' parts and writes those that differ from the previous snapshot's, in one
 * transaction (the parts and the digest are one point in time).
 */
async function writeChangedParts(
  db: Db,
  folder: string,
  before: readonly RecordedPart[],
  opts: SnapshotOptions,
): Promise<PartsPass> {
  return db.transaction(async () => {
    const tables = await listStreamTables(db);
    const histories = new Set(await keptHistories(db, tables));
    // Each stream table, then its kept versions (`_history.<stream>`).
    const ids = tables.flatMap((t) => (histories.has(t) ? [t, historyId(t)] : [t]));
    const signatures = await columnsSignatures(db);
    const digest = await contentDigest(db, ids, signatures, await bookkeepingCopied(db));
    const hint = opts.changedTables ? new Set(opts.changedTables) : null;
    const pass: PartsPass = {
      tables,
      digest,
      parts: new Map(),
      changed: new Set(),
      rows: {},
      written: [],
      retired: [],
    };
    let n = 0;
    for (const table of ids) {
      const copied = copiedTable(table);
      const history = copied.schema === HISTORY_SCHEMA;
      const columns = signatures.get(table) ?? '';
      const had = before.filter((p) => p.table === table);
      const sameColumns = had.length > 0 && had.every((p) => p.columns === columns);
      // A stream's versions are kept by the writes to its table: told which tables changed, its history follows.
      if (hint && !hint.has(copied.name) && sameColumns) {
        pass.parts.set(table, had);
        continue;
      }
      const reusable = new Map(sameColumns ? had.map((p) => [p.key, p]) : []);
      const next: RecordedPart[] = [];
      for (const part of await tableParts(db, table)) {
        // No version kept yet: no file (most tables of a new warehouse; the catalogue makes the empty table).
        if (history && part.rows === 0) continue;
        const kept = reusable.get(part.key);
        if (kept?.fingerprint === part.fingerprint) {
          next.push(kept);
          continue;
        }
        const written = await writePart(db, folder, table, part, columns);
        next.push(written);
        pass.written.push(written);
        pass.rows[table] = (pass.rows[table] ?? 0) + written.rows;
      }
      const files = new Set(next.map((p) => p.file));
      const gone = had.filter((p) => !files.has(p.file)).map((p) => p.file);
      pass.retired.push(...gone);
      pass.parts.set(table, next);
      if (gone.length > 0 || next.length !== had.length) pass.changed.add(table);
      if (pass.rows[table] !== undefined) await opts.onTable?.(table, ++n);
    }
    // Tables the warehouse no longer has: their parts go too.
    for (const p of before) if (!pass.parts.has(p.table)) pass.retired.push(p.file);
    return pass;
  });
}

/**
 * Attaches the new catalogue as `alias` at `temp`: a copy of the previous catalogue (small: its views are kept)
 * when that one is of this layout and warehouse, else a new file. Returns whether it was copied.
 */
async function attachCatalogue(db: Db, target: string, temp: string, alias: string, reuse: boolean) {
  if (reuse) {
    copyFileSync(target, temp);
    try {
      await db.run(`ATTACH ${literal(temp)} AS ${ident(alias)} (${REUSED_FILE_OPTIONS})`);
      return true;
    } catch {
      // Not attachable as written (damaged): written anew below.
      rmSync(temp, { force: true });
      rmSync(`${temp}.wal`, { force: true });
    }
  }
  await db.run(`ATTACH ${literal(temp)} AS ${ident(alias)} (${SNAPSHOT_FILE_OPTIONS})`);
  return false;
}

/** The views are made inside the catalogue (its own `main`), so a reader opening it alone can use them. */
async function createViewsIn(db: Db, alias: string, live: string): Promise<AnalyticsViewsReport> {
  await db.run(`USE ${ident(alias)}`);
  try {
    return await createAnalyticsViews(db);
  } finally {
    await db.run(`USE ${ident(live)}`);
  }
}

/** The finished catalogue, owner-only and synced, renamed over the target: readers see the old one or the new. */
function moveIntoPlace(temp: string, target: string): void {
  rmSync(`${temp}.wal`, { force: true });
  chmodSync(temp, 0o600);
  fsyncPath(temp, 'r+');
  renameSync(temp, target);
  fsyncPath(dirname(target), 'r');
}

/** Step 3 and 4: the catalogue naming `pass`'s parts, written beside the target and renamed over it. */
async function replaceCatalogue(
  db: Db,
  target: string,
  folder: string,
  previous: PreviousSnapshot | null,
  pass: PartsPass,
  retired: RetiredPart[],
  opts: SnapshotOptions,
): Promise<AnalyticsViewsReport> {
  const temp = join(dirname(target), `${tempPrefix(target)}${randomBytes(8).toString('hex')}.tmp`);
  const live = await currentDatabase(db);
  const alias = `evsync_snapshot_${randomBytes(6).toString('hex')}`;
  let attached = false;
  try {
    const reused = await attachCatalogue(db, target, temp, alias, previous?.parts != null);
    attached = true;
    const bookkeeping = await bookkeepingCopied(db);
    await db.transaction(() =>
      writeCatalogue(db, alias, {
        live,
        parts: pass.parts,
        remake: reused ? pass.changed : new Set(pass.parts.keys()),
        folder,
        retired,
        record: {
          publishedAt: utcNow(db.now),
          source: db.path,
          runId: opts.runId ?? null,
          digest: pass.digest,
          tables: pass.tables.length,
        },
        bookkeeping,
      }),
    );
    const views = await createViewsIn(db, alias, live);
    await checkpointCopy(db, alias);
    await db.run(`DETACH ${ident(alias)}`);
    attached = false;
    moveIntoPlace(temp, target);
    return views;
  } catch (err) {
    if (attached) await db.run(`DETACH ${ident(alias)}`).catch(() => undefined);
    rmSync(temp, { force: true });
    rmSync(`${temp}.wal`, { force: true });
    throw err;
  }
}

/**
 * Publishes the snapshot of the warehouse `db` is connected to (its current database) at `target`, writing only
 * what changed since the snapshot there. Run it on a connection of its own to let writes go on meanwhile.
 */
export async function publishSnapshot(db: Db, targetPath: string, opts: SnapshotOptions = {}): Promise<SnapshotResult> {
  const started = performance.now();
  const target = resolve(targetPath);
  checkTarget(db, target);
  const previous = await checkPrevious(db, target);
  const removedLeftovers = removeSnapshotLeftovers(target);
  const folder = partsFolder(target);
  const graceMs = opts.graceMs ?? SNAPSHOT_GRACE_MS;
  const before = previous?.parts ?? [];
  const release = holdOwnerOnlyUmask();
  try {
    const pass = await writeChangedParts(db, folder, before, opts);
    const nowMs = db.now();
    const unchanged =
      previous?.parts != null &&
      pass.written.length === 0 &&
      pass.retired.length === 0 &&
      previous.digest === pass.digest;
    let views: AnalyticsViewsReport = { created: [], warnings: [], history: [] };
    let catalogueBytes = 0;
    const allRetired = [...(previous?.retired ?? []), ...pass.retired.map((file) => ({ file, retiredAt: nowMs }))];
    if (!unchanged) {
      if (pass.written.length > 0)
        syncPartFolders(
          folder,
          pass.written.map((p) => p.table),
        );
      const stillKept = allRetired.filter((r) => r.retiredAt + graceMs > nowMs);
      views = await replaceCatalogue(db, target, folder, previous, pass, stillKept, opts);
      catalogueBytes = statSync(target).size;
    }
    const current = [...pass.parts.values()].flat();
    const swept = sweepParts(folder, new Set(current.map((p) => p.file)), allRetired, graceMs, nowMs);
    return {
      path: target,
      tables: pass.tables,
      copied: Object.keys(pass.rows),
      rows: pass.rows,
      bytes: catalogueBytes + pass.written.reduce((n, p) => n + p.bytes, 0),
      // What each part measured when written, recorded: no file is read again.
      size: (statSync(target, { throwIfNoEntry: false })?.size ?? 0) + current.reduce((n, p) => n + p.bytes, 0),
      parts: {
        written: pass.written.length,
        kept: current.length - pass.written.length,
        retired: pass.retired.length,
        removed: swept.removed,
      },
      views,
      removedLeftovers,
      unchanged,
      ms: performance.now() - started,
    };
  } finally {
    release();
  }
}

async function currentDatabase(db: Db): Promise<string> {
  const r = await db.query('SELECT current_database() AS name');
  const name = r.rows[0]?.name;
  if (typeof name !== 'string') throw new Error('snapshot: no current database');
  return name;
}
