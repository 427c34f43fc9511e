/**
 * The warehouse: one DuckDB file holding a typed table per stream (schema `main`), bookkeeping (`_evsync`) and
 * views (`analytics`). Every public method runs exclusively (one at a time, in call order) on one connection.
 */

import { existsSync } from 'node:fs';
import type { ResolvedStream, ScalarType, StreamDefinition } from '../../connectors/types.js';
import type { Now } from '../../schemas/clock.js';
import { Archive, type ArchiveRemote, type ArchiveStats } from './archive/archive.js';
import { archiveBegan } from './archive/archive-began.js';
import { firstPageEntry, lastOpSeq, loggedStreams, type Op, OpLog, readOps } from './archive/op-log.js';
import { compareRebuilt, replaceWithRebuilt, stampRows, type TableChange } from './archive/rebuilt-tables.js';
import { exportParquet } from './copies/export.js';
import { type PartFingerprints, partFingerprints } from './copies/export-unchanged.js';
import { type QueryCopyWritten, writeQueryCopy } from './copies/query-copy.js';
import { WarehouseSide } from './copies/side.js';
import { publishSnapshot, type SnapshotOptions, type SnapshotResult } from './copies/snapshot.js';
import { type TablePart, tableParts } from './copies/table-parts.js';
import {
  Db,
  DEFAULT_MEMORY_LIMIT,
  LOAD_MEMORY_LIMIT,
  memoryLimitBytes,
  type QueryLimits,
  type QueryResult,
} from './db/connection.js';
import { ident, utcNow } from './db/sql.js';
import {
  ensureHistory,
  forgetReadyHistory,
  type HistoryStats,
  historyOff,
  historyStats,
  setHistoryOff,
} from './history/versions.js';
import { CaptureStore } from './journal/capture.js';
import { createLayout } from './layout/create.js';
import { migrateLayout } from './layout/migrations.js';
import { LAYOUT_VERSION, readLayoutVersion } from './layout/version.js';
import * as ddl from './load/ddl.js';
import { type LoadDeps, loadPage, stepTimer } from './load/load.js';
import { emptyStagedMerge, type MergeCounts, mergeStaged, type StagedMerge } from './load/merge-staged.js';
import { LoadSession } from './load/session.js';
import { Staging } from './load/stage.js';
import { type StagedFilter, stagedPages } from './load/staged.js';
import { AccountRecord, type ExportOrigins, unknownOrigins } from './state/account.js';
import { tableExists } from './state/bookkeeping.js';
import { CurrentRows } from './state/current-rows.js';
import { Cursors } from './state/cursors.js';
import { type MarkMissingInput, markMissing } from './state/deletes.js';
import { Marks } from './state/marks.js';
import { owePartitions, type Partition, partitionOf } from './state/publish-pending.js';
import { rejectedCounts } from './state/rejected.js';
import { RunLog } from './state/run-log.js';
import { type StatusHistory, statusHistory } from './state/status-history.js';
import { UnavailableStreams } from './state/unavailable.js';
import type { ExportOptions, ExportResult, JsonQueryResult, LoadPageInput, LoadResult, Sandbox } from './types.js';
import { AnalyticsViewsError, type AnalyticsViewsReport, createAnalyticsViews } from './views/views.js';

export interface OpenOptions {
  readOnly?: boolean;
  /**
   * For SQL a person types (`evsync query`): read-only, no file access except `allowRead` folders, no spilling, and
   * a locked configuration (see `Sandbox` in connection.ts). Implies `readOnly`.
   */
  sandbox?: Sandbox;
  /**
   * DuckDB threads while loading pages (default 1). Per-page statements are small: on 2 shared cores one thread
   * ran them ~2x faster than two (less scheduling, and the other core stays free for parsing and normalizing the
   * next page). Queries, views and exports switch back to DuckDB's default (one per core).
   */
  loadThreads?: number;
  /**
   * Rows of one stream staged by a run before they are merged into the table in one batch (default 100,000); walks
   * that detect deletes also merge when they end. Larger batches merge less often; the batch is held in memory
   * while it merges.
   */
  mergeRows?: number;
  /**
   * DuckDB's memory_limit for a warehouse opened for writing (default 160MB, and 100MB while pages load): what its buffer manager may hold
   * (cached table blocks, batches being merged); more spills to `<database>.tmp`. Set by the first open of the
   * file in the process. What loading takes under it: bench/results/replay.json.
   */
  memoryLimit?: string;
  /**
   * Keep `memoryLimit` while pages load too (no switch to LOAD_MEMORY_LIMIT): for a process whose other work runs
   * beside its loads on the same instance (the daemon's publisher), which a lower limit set for a load would starve.
   */
  sameLimitWhileLoading?: boolean;
  /** The clock of every time the warehouse records (default the machine's; see schemas/clock.ts). */
  now?: Now;
  /**
   * A daemon publishes this warehouse for readers (src/daemon/publisher.ts): every merge of staged pages and every
   * delete mark records the partitions it changed in `_evsync.publish_pending`, in its own transaction, so a daemon
   * killed before its publisher heard of a change (or with pages staged, merged at the next open) still owes it.
   */
  publishing?: boolean;
  /**
   * Keep every loaded page and accepted delivery in the archive beside the file (archive/archive.ts); default true
   * for a file opened for writing. Off for a rebuild's scratch warehouse, whose pages are the archive's own.
   */
  archive?: boolean;
  /** Where the archive's segments go once compressed (the lake), instead of staying beside the file. */
  archiveRemote?: ArchiveRemote | null;
  /**
   * A rebuild's scratch warehouse (src/sync/rebuild/): staged pages merge only where the op log it replays merged
   * them, never on their own (no merge at open, none when a batch fills).
   */
  replay?: boolean;
}

/** Told the partitions a change committed to (see Warehouse.onChanged). */
export type ChangeListener = (parts: readonly Partition[]) => void;

const DEFAULT_MERGE_ROWS = 100_000;

/** The open's memory limit, and the one for loading: LOAD_MEMORY_LIMIT unless the open's is smaller. */
function memoryLimits(open: string, same: boolean): { open: string; load: string } {
  if (same) return { open, load: open };
  const a = memoryLimitBytes(open);
  const b = memoryLimitBytes(LOAD_MEMORY_LIMIT) as number;
  // A limit that is not a plain size (a percentage) is kept as given, loading included.
  return { open, load: a === null || a <= b ? open : LOAD_MEMORY_LIMIT };
}

export class Warehouse {
  private readonly tables = new Map<string, ddl.TableColumns>();
  private readonly staging: Staging;
  private readonly deps: LoadDeps;
  private readonly timings: Record<string, number> = {};
  private loading = false;
  private closed = false;
  /** Load sessions open (openLoad), by run id: pages of these runs are staged and merged in batches. */
  private readonly sessions = new Map<string, LoadSession>();
  /** Rows staged per stream since its last merge (this warehouse's pages). */
  private readonly pending = new Map<string, number>();
  /** What merges did with the rows of each run, per stream, until its load session's end hands it over. */
  private readonly merged = new Map<string, Map<string, MergeCounts>>();
  private readonly listeners = new Set<ChangeListener>();
  private captureStore: CaptureStore | null = null;
  private layout: number | null = null;
  /** The runs' record: start and end, progress, credits, past runs (run-log.ts). */
  readonly runs: RunLog;
  /** Where each walk stands: cursors and seen ids (cursors.ts). */
  readonly cursors: Cursors;
  /** Streams the service does not serve (unavailable.ts). */
  readonly unavailable: UnavailableStreams;
  /** Named values in `_evsync.meta`: the demo's mark, the daemon's heartbeat (marks.ts). */
  readonly marks: Marks;
  /** The account whose data this warehouse holds (account.ts). */
  readonly account: AccountRecord;
  /** What the stream tables hold now, read after staged pages merge (current-rows.ts). */
  readonly current: CurrentRows;
  /** Every page and delivery as received (null: not kept, e.g. read-only or a rebuild's scratch). */
  readonly archive: Archive | null;
  /** Every write to a stream table, logged in its transaction (archive/op-log.ts). */
  private readonly ops: OpLog;

  private constructor(
    private readonly db: Db,
    private readonly loadThreads: number,
    private readonly mergeRows: number,
    private readonly memoryLimits: { open: string; load: string },
    private readonly publishing: boolean,
    archive: boolean,
    private readonly replay: boolean,
    private readonly archiveRemote: ArchiveRemote | null,
  ) {
    this.staging = Staging.forDatabase(db.path);
    this.ops = new OpLog(!db.readOnly);
    this.archive =
      archive && !db.readOnly && db.path !== ':memory:' ? Archive.open(db.path, { remote: archiveRemote }) : null;
    this.deps = {
      ops: this.ops,
      durable: !replay,
      db,
      staging: this.staging,
      timings: this.timings,
      loadMode: () => this.threadsFor(true),
      columns: (stream) => this.columnsOf(stream),
      forget: (table) => {
        this.tables.delete(table);
        db.forgetPrepared();
      },
      skipped: new Set(),
    };
    this.runs = new RunLog(db, async (runId) => {
      this.sessions.delete(runId);
      await this.mergeNow();
      this.merged.delete(runId);
    });
    this.cursors = new Cursors(db);
    this.unavailable = new UnavailableStreams(db);
    this.marks = new Marks(db);
    this.account = new AccountRecord(db);
    this.current = new CurrentRows(db, (filter) => this.mergeNow(filter));
  }

  /**
   * Ops of the log after `afterSeq` (of `streams` only, when given), in order, at most `limit`: what a rebuild
   * replays (archive/op-log.ts).
   */
  opsAfter(afterSeq: number, limit: number, streams?: readonly string[]): Promise<Op[]> {
    return this.db.exclusive(() => readOps(this.db, afterSeq, limit, streams));
  }

  /** The first archive entry a page op of `streams` refers to (null: none): a prune must not have removed it. */
  firstPageEntry(streams: readonly string[]): Promise<number | null> {
    return this.db.exclusive(() => firstPageEntry(this.db, streams));
  }

  /**
   * What the archive beside the file holds (entries, bytes, since when) and what a prune removed; null when there
   * is none. Reads only, also for a read-only open.
   */
  async archiveStatus(): Promise<(ArchiveStats & { pruned: { before: string; through: number } | null }) | null> {
    const archive = this.archiveReader();
    try {
      if (!existsSync(archive.dir)) return null;
      return { ...(await archive.stats()), pruned: archive.pruned() };
    } finally {
      if (archive !== this.archive) await archive.close({ keepSpool: true });
    }
  }

  /** The archive to read (its own when it keeps one, else one read-only, with the same remote): close it after. */
  archiveReader(): Archive {
    return this.archive ?? Archive.open(this.db.path, { readOnly: true, remote: this.archiveRemote });
  }

  /** The streams the op log has writes of (a dropped table's included). */
  loggedStreams(): Promise<string[]> {
    return this.db.exclusive(() => loggedStreams(this.db));
  }

  /** The last op this warehouse logged: for a rebuild's scratch, the last live op it reproduced. */
  lastOp(): Promise<number> {
    return this.db.exclusive(() => lastOpSeq(this.db));
  }

  /**
   * A rebuild's scratch (opened with `replay`): the writes that follow reproduce live op `seq` and log it under that
   * seq; null when done.
   */
  reproducing(seq: number | null): void {
    if (!this.replay) throw new Error('reproducing: only a warehouse opened with replay reproduces ops');
    this.ops.replaying = seq;
  }

  /** A rebuild's scratch: the rows a live rebuild stamped get the clock's time and its run (rebuilt-tables.ts). */
  stampRows(table: string, detail: { key: string[]; rows: unknown[][] }, runId: string): Promise<void> {
    return this.db.exclusive(() => stampRows(this.db, this.ops, table, detail, runId));
  }

  /** A rebuild's scratch: merges the staged pages of the given page ops of `stream` now, as one logged merge did. */
  mergeOps(stream: string, ops: readonly number[]): Promise<void> {
    return this.db.exclusive(() => this.mergeNow({ stream, ops }));
  }

  /** Rows each stream table held before the op log began: a rebuild cannot reproduce them (archive-began.ts). */
  archiveBegan(): Promise<Record<string, number>> {
    return this.db.exclusive(() => archiveBegan(this.db));
  }

  /**
   * What replacing each of `tables` with the rebuilt one in the scratch file at `scratch` would change (rebuilt-
   * tables.ts); `keys` gives each table's key columns. The scratch must be closed.
   */
  compareRebuilt(
    scratch: string,
    tables: readonly string[],
    keys: (table: string) => readonly string[],
    /** Rows per slice of the comparison's join (rebuilt-tables.ts DIFF_SLICE_ROWS by default). */
    sliceRows?: number,
  ): Promise<TableChange[]> {
    return this.db.exclusive(async () => {
      // Under the load's memory limit: the comparison scans every column of the tables once, and the open's limit
      // would keep more of their blocks cached (a rebuild of a million registrants peaked at 403 MB without).
      await this.threadsFor(true);
      return compareRebuilt(this.db, scratch, tables, keys, sliceRows);
    });
  }

  /**
   * Replaces `tables` with the scratch's rebuilt ones in one transaction, rows that changed stamped with the
   * rebuild's run (rebuilt-tables.ts); returns those replaced.
   */
  replaceWithRebuilt(
    scratch: string,
    tables: readonly string[],
    keys: (table: string) => readonly string[],
    runId: string,
    /** Rows per slice of the comparison's join (rebuilt-tables.ts DIFF_SLICE_ROWS by default). */
    sliceRows?: number,
  ): Promise<string[]> {
    return this.db.exclusive(async () => {
      await this.mergeNow();
      await this.threadsFor(true);
      const stamp = { at: utcNow(this.db.now), runId };
      const done = await replaceWithRebuilt(
        this.db,
        this.ops,
        scratch,
        tables,
        keys,
        stamp,
        this.publishing,
        sliceRows,
      );
      for (const t of done) this.tables.delete(t);
      forgetReadyHistory(this.db);
      this.db.forgetPrepared();
      this.changed(done.map((table) => ({ table, eventId: null })));
      return done;
    });
  }

  /** The clock of every time the warehouse records. */
  get now(): Now {
    return this.db.now;
  }

  /** The bound account as the archive names it (null until a run bound one). */
  get accountLabel(): string | null {
    return this.account.label;
  }

  /**
   * Opens (or creates) the database file. New files and their WAL are owner-only (0600). Unless read-only, creates
   * the `_evsync` and `analytics` schemas of a new file at the current layout, or migrates an older layout to it
   * (layout/). Another process holding the file gives `DatabaseInUseError`; a file of a newer layout than this
   * program's, `WarehouseLayoutError`, before anything is written to it.
   */
  static async open(path: string, opts: OpenOptions = {}): Promise<Warehouse> {
    const loadThreads = opts.loadThreads ?? 1;
    if (!Number.isSafeInteger(loadThreads) || loadThreads < 1) {
      throw new Error(`loadThreads must be a positive integer, got ${loadThreads}`);
    }
    const mergeRows = opts.mergeRows ?? DEFAULT_MERGE_ROWS;
    if (!Number.isSafeInteger(mergeRows) || mergeRows < 0) {
      throw new Error(`mergeRows must be a non-negative integer, got ${mergeRows}`);
    }
    const db = await Db.open(path, opts.readOnly === true, {
      memoryLimit: opts.memoryLimit,
      sandbox: opts.sandbox,
      now: opts.now,
    });
    let warehouse: Warehouse | null = null;
    try {
      const found = await db.exclusive(() => readLayoutVersion(db));
      warehouse = new Warehouse(
        db,
        loadThreads,
        mergeRows,
        memoryLimits(opts.memoryLimit ?? DEFAULT_MEMORY_LIMIT, opts.sameLimitWhileLoading === true),
        opts.publishing === true && !db.readOnly,
        opts.archive ?? true,
        opts.replay === true,
        opts.archiveRemote ?? null,
      );
      warehouse.layout = found;
      if (!db.readOnly) await db.exclusive(() => warehouse!.recover(found));
      if (!db.readOnly) await warehouse.account.binding();
    } catch (err) {
      await db.close();
      warehouse?.staging.dispose();
      throw err;
    }
    return warehouse;
  }

  /**
   * Brings the file to the current layout: a new file is created at it, an older layout migrated step by step
   * (layout/migrations.ts; a step merges the pages staged in the old layout before it changes the tables). Then, at
   * the first open of the file in this process: merges the pages a killed process staged and committed, and removes
   * staged files nothing registers (the page each walk had in flight when the process died).
   */
  private async recover(found: number | null): Promise<void> {
    if (found === null) await createLayout(this.db);
    else if (await migrateLayout({ db: this.db, mergeStaged: () => this.mergeNow() }, found)) this.tables.clear();
    this.layout = LAYOUT_VERSION;
    if (!this.db.firstOpen || this.replay) return;
    await this.mergeNow();
    const keep = new Set((await stagedPages(this.db)).map((p) => p.file));
    this.staging.clear(keep);
  }

  /**
   * The file's layout version (layout/version.ts): the current one once opened for writing; as found for a
   * read-only open (null: a file evsync never wrote).
   */
  get layoutVersion(): number | null {
    return this.layout;
  }

  /** Merges staged pages (all, or those `filter` selects) into their tables; counts go to the runs that staged them. */
  private async mergeNow(filter: StagedFilter = {}): Promise<void> {
    if (this.db.readOnly) return;
    const time = stepTimer(this.timings);
    // A merge a read or the run's end asks for is still a load: on the replay bench, the last batch merged under the
    // open's limit (after a walk's end had switched to it) was the run's peak, well above the pages'.
    const merged = emptyStagedMerge();
    try {
      await mergeStaged(
        this.db,
        this.staging,
        filter,
        { time, loading: () => this.threadsFor(true), owe: this.publishing, ops: this.ops },
        merged,
      );
    } finally {
      // What committed before a failure is counted and told all the same.
      this.forgetPending(filter, merged);
      this.countMerged(merged);
      this.changed(merged.partitions);
    }
  }

  private countMerged(merged: StagedMerge): void {
    for (const { runId, stream: name, counts } of merged.counts) {
      let byStream = this.merged.get(runId);
      if (!byStream) {
        byStream = new Map();
        this.merged.set(runId, byStream);
      }
      const sum = byStream.get(name) ?? { inserted: 0, updated: 0, unchanged: 0 };
      sum.inserted += counts.inserted;
      sum.updated += counts.updated;
      sum.unchanged += counts.unchanged;
      byStream.set(name, sum);
    }
  }

  /** Rows staged per stream since its last merge, less what a merge took (a scope's merge takes part of them). */
  private forgetPending(filter: StagedFilter, merged: StagedMerge): void {
    if (filter.stream === undefined) {
      this.pending.clear();
      return;
    }
    if (filter.scope === undefined && filter.exceptWalk === undefined) {
      this.pending.delete(filter.stream);
      return;
    }
    const left = (this.pending.get(filter.stream) ?? 0) - (merged.rows.get(filter.stream) ?? 0);
    if (left > 0) this.pending.set(filter.stream, left);
    else this.pending.delete(filter.stream);
  }

  /** Tells the listeners of committed changes (a listener's failure is its own: the change is committed). */
  private changed(parts: readonly Partition[]): void {
    if (parts.length === 0) return;
    for (const listener of this.listeners) {
      try {
        listener(parts);
      } catch {
        // A listener must not fail the load that told it; the publisher records what it was told on its own.
      }
    }
  }

  /**
   * Calls `listener` with the partitions (a table's event, or the whole table) of every change committed to stream
   * tables by a merge of staged pages or a delete mark, once committed: the daemon's publisher follows a run's
   * changes this way, as they land. Returns the function that stops it.
   */
  onChanged(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Merges the staged pages of one scope of a stream now: a work item that completed (a daemon's run, so that its
   * readers get the item at the next publish instead of at the run's end).
   */
  mergeScope(stream: string, scope: string): Promise<void> {
    return this.db.exclusive(() => this.mergeNow({ stream, scope }));
  }

  /**
   * Switches DuckDB's thread count and memory limit between loading and everything else (only when it changes): a
   * load holds less with LOAD_MEMORY_LIMIT (or the open's limit when smaller), views and queries get the open's.
   */
  private async threadsFor(loading: boolean): Promise<void> {
    if (this.loading === loading) return;
    // Settings, not data: uncounted, so a status read that switches them leaves the daemon's query copy current.
    await this.db.runUncounted(loading ? `SET threads = ${this.loadThreads}` : 'RESET threads');
    if (this.memoryLimits.load !== this.memoryLimits.open) {
      const limit = loading ? this.memoryLimits.load : this.memoryLimits.open;
      await this.db.runUncounted(`SET memory_limit = '${limit}'`);
    }
    this.loading = loading;
  }

  /** Milliseconds spent in each step of loadPage since open (prepare, write, commit, and within commit probe and insert...). */
  loadTimings(): Record<string, number> {
    return { ...this.timings };
  }

  /** Absolute path of the database file (or `:memory:`). */
  get path(): string {
    return this.db.path;
  }

  get readOnly(): boolean {
    return this.db.readOnly;
  }

  private async columnsOf(stream: ResolvedStream): Promise<ddl.TableColumns> {
    let columns = this.tables.get(stream.name);
    if (!columns) {
      columns = (await ddl.readTableColumns(this.db, stream.name)) ?? undefined;
      if (!columns) {
        await this.ensureTableNow(stream);
        columns = (await ddl.readTableColumns(this.db, stream.name)) ?? undefined;
      }
      if (!columns) throw new Error(`table ${stream.name} could not be created`);
      this.tables.set(stream.name, columns);
    }
    return columns;
  }

  private async ensureTableNow(stream: ResolvedStream): Promise<void> {
    const changes = await ddl.ensureTable(this.db, stream);
    await ensureHistory(this.db, stream.name, stream.kind !== 'audit' && stream.key.length > 0);
    if (changes.length) this.deps.forget(stream.name);
    this.tables.delete(stream.name);
  }

  /** The versions the history keeps beyond the current rows, per stream, and the streams whose history is off. */
  historyStatus(): Promise<HistoryStats> {
    return this.db.exclusive(() => historyStats(this.db));
  }

  /** The streams whose history is off (history/versions.ts). */
  historyOff(): Promise<string[]> {
    return this.db.exclusive(async () => [...(await historyOff(this.db))].sort());
  }

  /** Turns the history of these streams off and every other stream's on (the config's `history: false`). */
  setHistoryOff(streams: readonly string[]): Promise<void> {
    return this.db.exclusive(() => setHistoryOff(this.db, streams));
  }

  /**
   * CREATE TABLE IF NOT EXISTS `<stream>` (columns, `_synced_at`, `_run_id`, `_deleted_at`; no key constraint: the
   * merge keeps one row per key, see merge.ts); for an existing table, adds the columns it lacks and widens declared types (recorded in `_evsync.schema_changes`).
   */
  ensureTable(stream: ResolvedStream): Promise<void> {
    return this.db.exclusive(() => this.ensureTableNow(stream));
  }

  /**
   * Opens the load session of run `runId` (load/session.ts): until it finishes, the run's pages are staged (durably,
   * with their cursor) and merged in batches, and their counts come from its `finish`. The same session while open.
   */
  openLoad(runId: string): LoadSession {
    let session = this.sessions.get(runId);
    if (!session) {
      session = new LoadSession(runId, {
        // Through loadPage, which stages the pages of a run whose session is open (after its finish: merged at once).
        load: (input) => this.loadPage(input),
        finish: (id) => this.finishLoads(id),
      });
      this.sessions.set(runId, session);
    }
    return session;
  }

  /**
   * Loads one page in one transaction (see load.ts): through the load session of its run when one is open (staged,
   * merged in batches), else merged at once.
   */
  loadPage(input: LoadPageInput): Promise<LoadResult> {
    return this.db.exclusive(() => this.loadNow(input));
  }

  private async loadNow(input: LoadPageInput): Promise<LoadResult> {
    const result = await loadPage(this.deps, input, input.stage ?? this.sessions.has(input.runId));
    if (result.staged && !this.replay) {
      const name = input.stream.name;
      const pending = (this.pending.get(name) ?? 0) + result.staged;
      this.pending.set(name, pending);
      if (pending >= this.mergeRows) await this.mergeNow({ stream: name });
    }
    return result;
  }

  /**
   * The end of run `runId`'s load session (LoadSession.finish): merges every staged page, then returns per stream
   * what the run's rows did (inserted, updated, unchanged) in the merges since the session opened, and forgets those
   * counts. Call it once loading is done and before runs.finish; afterwards the run's pages are merged at once again.
   */
  finishLoads(runId: string): Promise<Record<string, MergeCounts>> {
    return this.db.exclusive(async () => {
      this.sessions.delete(runId);
      await this.mergeNow();
      const out: Record<string, MergeCounts> = {};
      for (const [name, c] of this.merged.get(runId) ?? []) out[name] = { ...c };
      this.merged.delete(runId);
      return out;
    });
  }

  /**
   * Marks rows of the scope not seen by the walk as deleted (`_deleted_at = at`, if not already), clears
   * `_deleted_at` of rows it saw, then drops the walk's seen ids. Only for a walk that covered the whole scope.
   */
  markMissing(input: MarkMissingInput): Promise<{ deleted: number; restored: number }> {
    return this.db.exclusive(async () => {
      // Rows the walk staged were all seen, so they need not be merged first (they merge later in a larger batch):
      // only pages of the scope staged by other walks do, since one of them may hold a row this walk did not see.
      await this.mergeNow({ stream: input.stream.name, scope: input.scope.key, exceptWalk: input.walkId });
      await this.threadsFor(false);
      const parts = [{ table: input.stream.name, eventId: partitionOf(input.scope) }];
      const marked = await markMissing(this.db, this.ops, input, async () => {
        if (this.publishing) await owePartitions(this.db, parts);
      });
      if (marked.deleted + marked.restored > 0) this.changed(parts);
      return marked;
    });
  }

  /** Current rows (`_deleted_at IS NULL`) per stream table. */
  tableCounts(): Promise<Record<string, number>> {
    return this.db.exclusive(async () => {
      await this.mergeNow();
      await this.threadsFor(false);
      const tables = await ddl.listStreamTables(this.db);
      if (tables.length === 0) return {};
      const sql = tables
        .map(
          (t) =>
            `SELECT '${t.replaceAll("'", "''")}' AS t, count(*) AS n FROM main.${ident(t)} WHERE "_deleted_at" IS NULL`,
        )
        .join(' UNION ALL ');
      const r = await this.db.query(sql);
      const out: Record<string, number> = {};
      for (const t of tables) out[t] = 0;
      for (const row of r.rows) out[String(row.t)] = Number(row.n);
      return out;
    });
  }

  /** Stream tables present in the database. */
  listTables(): Promise<string[]> {
    return this.db.exclusive(() => ddl.listStreamTables(this.db));
  }

  /** Columns schema evolution added in earlier runs, with their current type (resolve them in the next run). */
  existingExtraFields(stream: StreamDefinition): Promise<Record<string, ScalarType>> {
    return this.db.exclusive(async () =>
      (await tableExists(this.db, '_evsync', 'cursors')) ? ddl.existingExtraFields(this.db, stream) : {},
    );
  }

  /**
   * (Re)creates the analytics views whose tables exist, each on its own; returns the views created and a warning
   * per view that could not be (show them to the user: that view is missing).
   */
  buildAnalyticsViews(): Promise<AnalyticsViewsReport> {
    return this.db.exclusive(async () => {
      await this.mergeNow();
      await this.threadsFor(false);
      return createAnalyticsViews(this.db);
    });
  }

  /**
   * As buildAnalyticsViews, returning the names created; throws AnalyticsViewsError (after building every other
   * view) when a view failed, so callers that report a thrown error as a warning keep doing so.
   */
  async createAnalyticsViews(): Promise<string[]> {
    const report = await this.buildAnalyticsViews();
    if (report.warnings.length > 0) throw new AnalyticsViewsError(report);
    return report.created;
  }

  /**
   * Runs SQL with `?` (or `$n`) parameters. Values come as JSON-safe scalars: BIGINT, DECIMAL, TIMESTAMP and DATE
   * as strings (never lossy), lists and structs as JSON text. Staged pages are merged first: a query sees every
   * committed page.
   */
  query(sql: string, params?: unknown[]): Promise<QueryResult> {
    return this.db.exclusive(async () => {
      await this.mergeNow();
      await this.threadsFor(false);
      return this.db.query(sql, params ?? []);
    });
  }

  /**
   * SQL a person typed: reading statements only (anything else is refused before it runs, see `Db.readQuery`),
   * column types, and values as exact JSON (numbers when a double holds them, lists and JSON as JSON).
   */
  readQuery(sql: string, form: 'json' | 'text' = 'json', limits: QueryLimits = {}): Promise<JsonQueryResult> {
    return this.db.exclusive(() => this.db.readQuery(sql, form, limits));
  }

  /** Changes committed through this warehouse so far: a snapshot taken at generation g is current while it is g. */
  get generation(): number {
    return this.db.generation;
  }

  /**
   * Copies the warehouse to `target` (replaced atomically, see query-copy.ts). Staged pages are merged first, in the
   * queue, with the checkpoint the copy starts from (so the copy holds every committed page); the copy itself runs
   * beside the queue and never holds up journaling or applying.
   */
  async writeQueryCopy(target: string): Promise<QueryCopyWritten> {
    return writeQueryCopy(this.db, target, () => this.mergeNow());
  }

  /**
   * SQL a person typed, on a copy (see `writeQueryCopy`) rather than the live file: a sandboxed read-only
   * instance of its own, with few threads and a memory limit, bounded and cancellable (see `Db.readQuery`).
   */
  static async querySnapshot(
    path: string,
    sql: string,
    o: { form: 'json' | 'text'; sandbox: Sandbox; limits: QueryLimits; threads?: number; memoryLimit?: string },
  ): Promise<JsonQueryResult> {
    const reader = await Db.openSnapshotReader(path, o.sandbox, {
      ...(o.threads ? { threads: o.threads } : {}),
      ...(o.memoryLimit ? { memoryLimit: o.memoryLimit } : {}),
    });
    try {
      return await reader.exclusive(() => reader.readQuery(sql, o.form, o.limits));
    } finally {
      await reader.close();
    }
  }

  /**
   * Exports Parquet (export.ts). A copy for readers runs as a load does (one thread, the load's memory): its COPYs
   * are one partition each, where a second thread costs more CPU than it saves and holds a second writer's buffers
   * (on `large`, one thread published the snapshot in 6.3 s of CPU against 10.8 s with two, and peaked lower).
   */
  exportParquet(opts: ExportOptions): Promise<ExportResult> {
    return this.db.exclusive(async () => {
      await this.mergeNow();
      await this.threadsFor(true);
      return exportParquet(this.db, opts);
    });
  }

  /**
   * The sources of `table`'s partitions now (export-unchanged.ts), for an output deciding what it need not write
   * again (the lake). Merges what is staged first, as exportParquet does: what it reads is what an export would copy.
   */
  partFingerprints(table: string, includeDeleted: boolean): Promise<PartFingerprints | null> {
    return this.db.exclusive(async () => {
      await this.mergeNow();
      return partFingerprints(this.db, table, includeDeleted);
    });
  }

  /**
   * Publishes the snapshot at `target` (snapshot.ts): a catalogue over Parquet parts, writing only the parts that
   * changed since the snapshot there, renamed over it, so readers of the previous one keep a consistent view. Merges
   * what is staged first.
   */
  publishSnapshot(target: string, opts: SnapshotOptions = {}): Promise<SnapshotResult> {
    return this.db.exclusive(async () => {
      await this.mergeNow();
      // As a load (see exportParquet).
      await this.threadsFor(true);
      return publishSnapshot(this.db, target, opts);
    });
  }

  /** The parts a readers' copy cuts `table` into, with their fingerprints (copies/table-parts.ts). */
  tableParts(table: string, splitAbove?: number): Promise<TablePart[]> {
    return this.db.exclusive(async () => {
      await this.mergeNow();
      return tableParts(this.db, table, splitAbove);
    });
  }

  /** A second connection to this warehouse for work beside its queue (side.ts): the daemon's publisher. */
  openSide(): Promise<WarehouseSide> {
    if (this.closed) return Promise.reject(new Error(`warehouse ${this.path} is closed`));
    return WarehouseSide.open(this.db.path, this.db.readOnly, this.db.now);
  }

  /** Change capture's journal and the row versions it compares (capture.ts), in this warehouse's queue. */
  get capture(): CaptureStore {
    this.captureStore ??= new CaptureStore(this.db, this.ops, this.archive, () => this.account.label);
    return this.captureStore;
  }

  // -------------------------------------------------------------------------------------------------------------
  // the engine's state (state/): typed questions instead of SQL in src/sync and src/cli; most of it is grouped by
  // what it holds (the fields runs, cursors, unavailable, marks, account, current), each part owning its SQL

  /** Rejected records per stream. */
  rejectedCounts(): Promise<Record<string, number>> {
    return this.db.exclusive(() => rejectedCounts(this.db));
  }

  /** Credits per window, deliveries per hour and webhook lag from `since` to `until` (UTC): the status page's charts. */
  statusHistory(since: string, until: string): Promise<StatusHistory> {
    return this.db.exclusive(() => statusHistory(this.db, since, until));
  }

  /** Of the runs and events an export folder names, those this warehouse never held (account.ts, unknownOrigins). */
  unknownOrigins(origins: ExportOrigins): Promise<ExportOrigins> {
    return this.db.exclusive(() => unknownOrigins(this.db, origins));
  }

  /**
   * Writes everything to the database file and truncates the WAL; skipped while a query copy is being made from the
   * file (a checkpoint then would change the blocks being copied: see Db.holdCheckpoints). DuckDB checkpoints on its
   * own once the copy ends, so nothing is lost by skipping.
   */
  checkpoint(): Promise<void> {
    return this.db.exclusive(async () => {
      // A checkpoint moves no data a reader sees: uncounted.
      if (!this.db.checkpointsHeld) await this.db.runUncounted('CHECKPOINT');
    });
  }

  /** Merges what is staged (after a failure it stays for the next open, which merges first), then closes. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    let failure: unknown = null;
    // A rebuild's scratch merges only where its log says: what it staged waits for the rebuild to resume.
    if (!this.replay) {
      await this.db
        .exclusive(() => this.mergeNow())
        .catch((err: unknown) => {
          failure = err;
        });
    }
    await this.archive?.close().catch((err: unknown) => {
      failure ??= err;
    });
    this.archiveRemote?.close?.();
    await this.db.close();
    this.staging.dispose();
    if (failure) throw failure;
  }
}
