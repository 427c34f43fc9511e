/**
 * The daemon's publisher: keeps what readers open fresh while `serve` holds the warehouse. Changes mark the
 * partitions they touched (`touched`); on a cadence the publisher re-exports only those partitions to Parquet (a
 * folder, or the lake on s3://, by the same code and the same manifest, ownership, lease and atomicity rules as
 * `export` and `sync --parquet-out`), then publishes the snapshot (src/warehouse/snapshot.ts), copying again only the
 * touched tables (the first snapshot of a process copies them all).
 *
 * - Coalesced: touches between two publishes make one publish; nothing touched, nothing published.
 * - One publish at a time: a tick that finds one running leaves its touches to the next.
 * - Beside the caller: it works on side connections of the warehouse (src/warehouse/side.ts), so the applier keeps
 *   writing through the warehouse while a publish reads one consistent point in time.
 * - Durable: every touch is recorded in `_evsync.publish_pending` (on a connection of its own, so recording never
 *   waits for a publish) and removed only once a publish that started after it completed. A daemon killed before or
 *   during a publish finds them at its next start and publishes them first; the previous Parquet state and snapshot
 *   stay readable meanwhile (both are replaced atomically).
 *
 * Call `touched` once the change is committed to its table: the publisher reads tables, never staged pages. With
 * `followChanges` it is told by the warehouse itself of what merges of staged pages and delete marks commit
 * (Warehouse.onChanged): a daemon's run reaches readers item by item, as each item's pages are merged.
 */

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Now, systemNow } from '../../schemas/clock.js';
import { exportToLake } from '../lake/export-lake.js';
import type { ObjectStore } from '../lake/store.js';
import { parseTarget } from '../lake/target.js';
import {
  type PartitionSelection,
  type PendingPartition,
  utcNow,
  type Warehouse,
  type WarehouseSide,
} from '../warehouse/index.js';

export type PublishLog = (level: 'info' | 'warn' | 'debug', message: string) => void;

/** How to reach the lake when `parquetOut` is `s3://...` (the CLI builds it from the config's `lake` block). */
export interface PublisherLake {
  store: ObjectStore;
  account: string;
  /** Owner-only staging folder beside the database. */
  stagingDir: string;
  leaseTtlMs: number;
  uploadConcurrency: number;
  /** Recorded in the lease for whoever is refused, e.g. `evsync serve`. */
  command: string;
}

/** A local Parquet folder a daemon holds (src/lake/folder-claim.ts FolderClaim). */
export interface HeldFolder {
  /** Resolves while the folder is still this publisher's; rejects once another writer has taken it. */
  assertHeld(): Promise<void>;
  /** After an export wrote into it (the owner record, written once). */
  exported(): void;
}

export interface PublisherOptions {
  /** The open (writable) warehouse the daemon writes through; the publisher opens side connections of it. */
  warehouse: Warehouse;
  /** A local folder, or `s3://bucket/prefix` (then `lake` is required). */
  parquetOut?: string;
  lake?: PublisherLake;
  /** With a local `parquetOut`: the folder as the daemon holds it (its lease and owner, src/lake/folder-claim.ts). */
  folder?: HeldFolder;
  /** The snapshot file (replaced atomically at each publish). */
  snapshot?: string;
  /** The cadence: a publish at most this often, when something was touched. */
  everyMs: number;
  log: PublishLog;
  /** Publish every table once at start (a new output, or to rebuild it), besides what was left pending. */
  publishAllAtStart?: boolean;
  /**
   * Mark touched what the warehouse commits by merging staged pages or marking deletes (Warehouse.onChanged), as it
   * commits it: a run's items are published as they land instead of when the run ends. (Open the warehouse with
   * `publishing` too, so that those changes are recorded as owed in the same transaction.)
   */
  followChanges?: boolean;
  /** After each table copied into the snapshot (n from 1), awaited: progress, and a test's kill point or pause. */
  onSnapshotTable?: (table: string, n: number) => void | Promise<void>;
  /** The daemon's clock (default the machine's). */
  now?: Now;
}

/** Numbers for `/metrics` and `status`: what publishing costs and whether it keeps up. */
export interface PublishStats {
  /** Publishes that completed, and that failed, since start. */
  publishes: number;
  failures: number;
  running: boolean;
  /** Partitions touched and not yet published (an event of a table, or a whole table). */
  pendingPartitions: number;
  lastStartedAt: string | null;
  lastFinishedAt: string | null;
  /** Wall time of the last completed publish. */
  lastDurationMs: number | null;
  /**
   * CPU time of the whole process (user + system, DuckDB's threads included) while the last publish ran: its cost,
   * plus whatever else the process did meanwhile (an upper bound).
   */
  lastCpuMs: number | null;
  /** Bytes the last publish wrote: Parquet files (or uploads) plus the snapshot file. */
  lastBytes: number | null;
  lastParquet: { tables: number; bytes: number; ms: number } | null;
  /** The last snapshot: tables copied from the warehouse (the rest came from the previous snapshot). */
  lastSnapshot: { tables: number; bytes: number; ms: number } | null;
  totalDurationMs: number;
  totalCpuMs: number;
  totalBytes: number;
  lastError: string | null;
  lastErrorAt: string | null;
}

export interface Publisher {
  /** Marks partitions changed: event ids of an event-scoped table, or 'all' (an account-scoped table, or unknown). */
  touched(table: string, eventIds: Iterable<number> | 'all'): void;
  /** Publishes what is touched now (after a publish in progress), and resolves when done; rejects if it failed. */
  flush(): Promise<void>;
  /** Stops the cadence, waits for a publish in progress and for touches to be recorded, closes its connections. */
  stop(): Promise<void>;
  stats(): PublishStats;
}

/** Touched partitions: per table, event ids or the whole table. */
type Touched = Map<string, Set<number> | 'all'>;

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function addTouch(into: Touched, table: string, ids: Iterable<number> | 'all'): void {
  const current = into.get(table);
  if (current === 'all') return;
  if (ids === 'all') {
    into.set(table, 'all');
    return;
  }
  const set = current ?? new Set<number>();
  for (const id of ids) set.add(id);
  into.set(table, set);
}

function countPartitions(t: Touched): number {
  let n = 0;
  for (const ids of t.values()) n += ids === 'all' ? 1 : Math.max(1, ids.size);
  return n;
}

/** The export's selection: tables touched whole are listed without partitions (written whole). */
function selection(batch: Touched): { tables: string[]; partitions: PartitionSelection[] } {
  const tables = [...batch.keys()].sort();
  const partitions: PartitionSelection[] = [];
  for (const [table, ids] of batch)
    if (ids !== 'all') partitions.push({ table, eventIds: [...ids].sort((a, b) => a - b) });
  return { tables, partitions };
}

class CadencedPublisher implements Publisher {
  private touchedNow: Touched = new Map();
  /** Touches not yet written to `_evsync.publish_pending`. */
  private unrecorded: (PendingPartition & { at: string })[] = [];
  private recording: Promise<void> = Promise.resolve();
  private recordScheduled = false;
  private running: Promise<void> | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private stopped = false;
  private unfollow: (() => void) | null = null;
  private readonly now: Now;
  /** The snapshot must be published even with nothing touched (it does not exist yet). */
  private snapshotDue: boolean;
  /** The next snapshot copies every table (until one has been published by this process). */
  private snapshotWhole = true;
  private readonly s: PublishStats = {
    publishes: 0,
    failures: 0,
    running: false,
    pendingPartitions: 0,
    lastStartedAt: null,
    lastFinishedAt: null,
    lastDurationMs: null,
    lastCpuMs: null,
    lastBytes: null,
    lastParquet: null,
    lastSnapshot: null,
    totalDurationMs: 0,
    totalCpuMs: 0,
    totalBytes: 0,
    lastError: null,
    lastErrorAt: null,
  };

  constructor(
    private readonly opts: PublisherOptions,
    /** Reads tables and writes Parquet and the snapshot. */
    private readonly reader: WarehouseSide,
    /** Records and clears pending touches, so recording never waits behind a publish. */
    private readonly pending: WarehouseSide,
    private readonly lakePrefix: string | null,
  ) {
    this.now = opts.now ?? systemNow;
    this.snapshotDue = opts.snapshot !== undefined && !existsSync(opts.snapshot);
  }

  start(initial: readonly PendingPartition[], all: readonly string[]): void {
    for (const p of initial) addTouch(this.touchedNow, p.table, p.eventId === null ? 'all' : [p.eventId]);
    for (const table of all) addTouch(this.touchedNow, table, 'all');
    if (initial.length > 0) {
      this.opts.log('info', `publish: ${initial.length} partition(s) left pending by the last run; publishing them`);
    }
    if (this.opts.followChanges) {
      this.unfollow = this.opts.warehouse.onChanged((parts) => {
        for (const p of parts) this.touched(p.table, p.eventId === null ? 'all' : [p.eventId]);
      });
    }
    this.timer = setInterval(() => this.tick(), this.opts.everyMs);
    this.timer.unref?.();
    // What the last run left (or a missing snapshot) is published now, not a cadence later.
    if (this.touchedNow.size > 0 || this.snapshotDue) this.tick();
  }

  touched(table: string, eventIds: Iterable<number> | 'all'): void {
    if (this.stopped) return;
    const ids = eventIds === 'all' ? 'all' : [...eventIds];
    addTouch(this.touchedNow, table, ids);
    const at = utcNow(this.now);
    if (ids === 'all') this.unrecorded.push({ table, eventId: null, at });
    else for (const id of ids) this.unrecorded.push({ table, eventId: id, at });
    this.scheduleRecord();
  }

  /** Writes the touches made in this turn of the event loop in one statement, soon (not once per touch). */
  private scheduleRecord(): void {
    if (this.recordScheduled) return;
    this.recordScheduled = true;
    setImmediate(() => {
      this.recordScheduled = false;
      void this.record();
    });
  }

  /** Records every touch not yet recorded; resolves once all recording so far is done. */
  private record(): Promise<void> {
    const batch = this.unrecorded;
    this.unrecorded = [];
    if (batch.length > 0) {
      this.recording = this.recording
        .then(() => this.pending.recordPending(batch))
        .catch((err: unknown) => {
          // Still published from memory; only a crash before that would miss them.
          this.opts.log('warn', `publish: could not record ${batch.length} touched partition(s): ${errorText(err)}`);
        });
    }
    return this.recording;
  }

  private tick(): void {
    if (this.running || this.stopped) return;
    if (this.touchedNow.size === 0 && !this.snapshotDue) return;
    this.run().catch(() => undefined);
  }

  /** One publish of what is touched now; the caller made sure none is running. */
  private run(): Promise<void> {
    const p = this.publish().finally(() => {
      this.running = null;
      this.s.running = false;
    });
    this.running = p;
    this.s.running = true;
    return p;
  }

  async flush(): Promise<void> {
    while (this.running) await this.running.catch(() => undefined);
    if (this.stopped) return;
    if (this.touchedNow.size === 0 && !this.snapshotDue) return;
    await this.run();
  }

  private async publish(): Promise<void> {
    // Write-ahead: what this publish is about is recorded before it starts, so a kill during it redoes it.
    await this.record();
    const batch = this.touchedNow;
    this.touchedNow = new Map();
    // A table the warehouse does not have (a name given in error, a stream not loaded yet) would fail every
    // publish from now on: it is dropped, once, with a warning.
    const existing = new Set(await this.reader.listTables());
    for (const table of batch.keys()) {
      if (existing.has(table)) continue;
      batch.delete(table);
      this.opts.log('warn', `publish: no table ${table} in the warehouse; its touches are dropped`);
    }
    // Everything committed before this moment is in what this publish reads.
    const startedAt = utcNow(this.now);
    const wallStart = performance.now();
    const cpuStart = process.cpuUsage();
    this.s.lastStartedAt = startedAt;
    let parquetBytes = 0;
    try {
      if (this.opts.parquetOut !== undefined && batch.size > 0) {
        const parquetStart = performance.now();
        parquetBytes = await this.exportParquet(batch);
        this.s.lastParquet = { tables: batch.size, bytes: parquetBytes, ms: performance.now() - parquetStart };
      }
      let snapshotBytes = 0;
      if (this.opts.snapshot !== undefined) {
        const snap = await this.reader.publishSnapshot(this.opts.snapshot, {
          ...(this.opts.onSnapshotTable ? { onTable: this.opts.onSnapshotTable } : {}),
          // The first snapshot of a process copies everything (whatever happened while no publisher ran); later
          // ones start from the previous snapshot and copy the touched tables only.
          ...(this.snapshotWhole ? {} : { changedTables: [...batch.keys()] }),
        });
        this.snapshotWhole = false;
        for (const warning of snap.views.warnings) this.opts.log('warn', `snapshot: ${warning}`);
        snapshotBytes = snap.bytes;
        this.snapshotDue = false;
        this.s.lastSnapshot = { tables: snap.copied.length, bytes: snap.bytes, ms: snap.ms };
      }
      // Done: what was recorded before the start is delivered (later touches stay recorded).
      await this.record();
      await this.pending.clearPendingBefore(startedAt);
      const cpu = process.cpuUsage(cpuStart);
      const wallMs = performance.now() - wallStart;
      const cpuMs = (cpu.user + cpu.system) / 1000;
      this.s.publishes++;
      this.s.lastFinishedAt = utcNow(this.now);
      this.s.lastDurationMs = wallMs;
      this.s.lastCpuMs = cpuMs;
      this.s.lastBytes = parquetBytes + snapshotBytes;
      this.s.totalDurationMs += wallMs;
      this.s.totalCpuMs += cpuMs;
      this.s.totalBytes += parquetBytes + snapshotBytes;
      this.opts.log(
        'debug',
        `publish: ${countPartitions(batch)} partition(s) of ${batch.size} table(s) in ${Math.round(wallMs)} ms (${Math.round(
          cpuMs,
        )} ms CPU, ${parquetBytes + snapshotBytes} bytes)`,
      );
    } catch (err) {
      // Published again at the next tick (and recorded for the next start): nothing touched is forgotten.
      for (const [table, ids] of batch) addTouch(this.touchedNow, table, ids);
      this.s.failures++;
      this.s.lastError = errorText(err);
      this.s.lastErrorAt = utcNow(this.now);
      this.opts.log('warn', `publish failed (retried at the next cadence): ${errorText(err)}`);
      throw err;
    }
  }

  /** The touched partitions to the folder or the lake; returns the bytes written. */
  private async exportParquet(batch: Touched): Promise<number> {
    const out = this.opts.parquetOut as string;
    const { tables, partitions } = selection(batch);
    if (this.lakePrefix !== null) {
      const lake = this.opts.lake as PublisherLake;
      const result = await exportToLake(this.reader, {
        ...lake,
        prefix: this.lakePrefix,
        tables,
        partitions,
        log: this.opts.log,
        now: this.now,
      });
      for (const warning of result.warnings) this.opts.log('warn', warning);
      return result.uploaded.bytes;
    }
    await this.opts.folder?.assertHeld();
    const result = await this.reader.exportParquet({ out, tables, partitions, newTablesWhole: true });
    this.opts.folder?.exported();
    for (const warning of result.warnings) this.opts.log('warn', warning);
    return result.bytesWritten;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unfollow?.();
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => undefined);
    // Touches of this last turn are recorded: the next start publishes them.
    await this.record();
    await this.reader.close();
    await this.pending.close();
  }

  stats(): PublishStats {
    return { ...this.s, pendingPartitions: countPartitions(this.touchedNow) };
  }
}

/**
 * Starts publishing: opens two side connections of the warehouse, takes up what the last run left pending (and
 * publishes it at once), then publishes every `everyMs` when something was touched.
 */
export async function startPublisher(opts: PublisherOptions): Promise<Publisher> {
  if (opts.parquetOut === undefined && opts.snapshot === undefined) {
    throw new Error('startPublisher: give parquetOut, snapshot or both');
  }
  if (!Number.isFinite(opts.everyMs) || opts.everyMs <= 0) {
    throw new Error(`startPublisher: everyMs must be a positive number, got ${opts.everyMs}`);
  }
  if (opts.warehouse.readOnly) throw new Error('startPublisher: the warehouse is open read-only');
  let lakePrefix: string | null = null;
  if (opts.parquetOut !== undefined) {
    const target = parseTarget(opts.parquetOut);
    if (!target.ok) throw new Error(`parquetOut: ${target.problem}`);
    if (target.target.kind === 's3') {
      if (!opts.lake) throw new Error(`parquetOut ${opts.parquetOut}: an s3:// target needs the lake options`);
      lakePrefix = target.target.prefix;
    }
  }
  const reader = await opts.warehouse.openSide();
  let pending: WarehouseSide | null = null;
  try {
    pending = await opts.warehouse.openSide();
    const left = await pending.pendingPartitions();
    let all: string[] = [];
    if (opts.publishAllAtStart) all = await reader.listTables();
    else if (opts.parquetOut !== undefined && lakePrefix === null) {
      // A table with no folder in the output yet is published whole at start (later, a first touch writes it whole).
      all = (await reader.listTables()).filter((t) => !existsSync(join(opts.parquetOut as string, t)));
    }
    const publisher = new CadencedPublisher(opts, reader, pending, lakePrefix);
    publisher.start(left, all);
    return publisher;
  } catch (err) {
    await reader.close();
    await pending?.close();
    throw err;
  }
}
