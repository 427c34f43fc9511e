/**
 * The daemon's publisher: keeps what readers open fresh while `serve` holds the warehouse. Changes mark the
 * partitions they touched (`touched`); on a cadence the publisher re-exports only those partitions to Parquet (a
 * folder, or the lake on s3://, through the writer of src/outputs that `export` and `sync --parquet-out` write
 * through, under the same manifest, ownership, lease and atomicity rules), then publishes the snapshot
 * (src/warehouse/copies/snapshot.ts), fingerprinting again only the touched tables' parts and writing those that
 * changed (the first snapshot of a process fingerprints every table). A touch whose rows did not change writes
 * nothing.
 *
 * - Coalesced: touches between two publishes make one publish; nothing touched, nothing published.
 * - One publish at a time: a tick that finds one running leaves its touches to the next.
 * - Beside the caller: it works on side connections of the warehouse (src/warehouse/copies/side.ts), so the applier keeps
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
import { type Now, systemNow } from '../../schemas/clock.js';
import type { HeldFolder } from '../outputs/folder-output.js';
import type { LakeAccess } from '../outputs/lake-output.js';
import { writerFor } from '../outputs/output.js';
import { type Partition, TouchedPartitions } from '../outputs/partition.js';
import { bytesWritten, type OutputWriter } from '../outputs/writer.js';
import { utcNow, type Warehouse, type WarehouseSide } from '../warehouse/index.js';

export type PublishLog = (level: 'info' | 'warn' | 'debug', message: string) => void;

/** How to reach the lake when `parquetOut` is `s3://...` (src/outputs/lake-output.ts). */
export type PublisherLake = LakeAccess;

export interface PublisherOptions {
  /** The open (writable) warehouse the daemon writes through; the publisher opens side connections of it. */
  warehouse: Warehouse;
  /** Where the Parquet goes, held by its owner (the daemon's output, src/outputs); or name it by `parquetOut`. */
  writer?: OutputWriter;
  /** A local folder, or `s3://bucket/prefix` (then `lake` is required). */
  parquetOut?: string;
  lake?: PublisherLake;
  /** With a local `parquetOut`: the folder as its owner holds it (its lease and owner record). */
  folder?: HeldFolder;
  /** The snapshot file (replaced atomically at each publish). */
  snapshot?: string;
  /** How long parts a newer snapshot replaced stay for readers of the older one (snapshot.ts's default). */
  snapshotGraceMs?: number;
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
  /**
   * The last snapshot: tables with a part written, parts written and kept, bytes written (0: nothing had changed),
   * and the bytes its readers read (catalogue and parts).
   */
  lastSnapshot: { tables: number; parts: number; keptParts: number; bytes: number; size: number; ms: number } | null;
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

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

class CadencedPublisher implements Publisher {
  private touchedNow = new TouchedPartitions();
  /** Touches not yet written to `_evsync.publish_pending`. */
  private unrecorded: (Partition & { at: string })[] = [];
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
    /** Where the Parquet goes (null: only the snapshot is published). */
    private readonly writer: OutputWriter | null,
  ) {
    this.now = opts.now ?? systemNow;
    this.snapshotDue = opts.snapshot !== undefined && !existsSync(opts.snapshot);
  }

  start(initial: readonly Partition[], all: readonly string[]): void {
    for (const p of initial) this.touchedNow.add(p);
    for (const table of all) this.touchedNow.touch(table, 'all');
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
    this.touchedNow.touch(table, ids);
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
    this.touchedNow = new TouchedPartitions();
    // A table the warehouse does not have (a name given in error, a stream not loaded yet) would fail every
    // publish from now on: it is dropped, once, with a warning.
    const existing = new Set(await this.reader.listTables());
    for (const table of batch.tables()) {
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
      if (this.writer !== null && batch.size > 0) {
        const parquetStart = performance.now();
        parquetBytes = await this.exportParquet(this.writer, batch);
        this.s.lastParquet = { tables: batch.size, bytes: parquetBytes, ms: performance.now() - parquetStart };
      }
      let snapshotBytes = 0;
      if (this.opts.snapshot !== undefined) {
        const snap = await this.reader.publishSnapshot(this.opts.snapshot, {
          ...(this.opts.onSnapshotTable ? { onTable: this.opts.onSnapshotTable } : {}),
          ...(this.opts.snapshotGraceMs === undefined ? {} : { graceMs: this.opts.snapshotGraceMs }),
          // The first snapshot of a process fingerprints every table (whatever happened while no publisher ran);
          // later ones only the touched tables.
          ...(this.snapshotWhole ? {} : { changedTables: batch.tables() }),
        });
        this.snapshotWhole = false;
        for (const warning of snap.views.warnings) this.opts.log('warn', `snapshot: ${warning}`);
        snapshotBytes = snap.bytes;
        this.snapshotDue = false;
        this.s.lastSnapshot = {
          tables: snap.copied.length,
          parts: snap.parts.written,
          keptParts: snap.parts.kept,
          bytes: snap.bytes,
          size: snap.size,
          ms: snap.ms,
        };
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
        `publish: ${batch.count()} partition(s) of ${batch.size} table(s) in ${Math.round(wallMs)} ms (${Math.round(
          cpuMs,
        )} ms CPU, ${parquetBytes + snapshotBytes} bytes)`,
      );
    } catch (err) {
      // Published again at the next tick (and recorded for the next start): nothing touched is forgotten.
      this.touchedNow.addAll(batch);
      this.s.failures++;
      this.s.lastError = errorText(err);
      this.s.lastErrorAt = utcNow(this.now);
      this.opts.log('warn', `publish failed (retried at the next cadence): ${errorText(err)}`);
      throw err;
    }
  }

  /** The touched partitions to the folder or the lake; returns the bytes written. */
  private async exportParquet(writer: OutputWriter, batch: TouchedPartitions): Promise<number> {
    const written = await writer.write(this.reader, { touched: batch });
    for (const warning of written.report.warnings) this.opts.log('warn', warning);
    return bytesWritten(written);
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
    return { ...this.s, pendingPartitions: this.touchedNow.count() };
  }
}

/**
 * Starts publishing: opens two side connections of the warehouse, takes up what the last run left pending (and
 * publishes it at once), then publishes every `everyMs` when something was touched.
 */
export async function startPublisher(opts: PublisherOptions): Promise<Publisher> {
  if (opts.writer === undefined && opts.parquetOut === undefined && opts.snapshot === undefined) {
    throw new Error('startPublisher: give parquetOut, snapshot or both');
  }
  if (!Number.isFinite(opts.everyMs) || opts.everyMs <= 0) {
    throw new Error(`startPublisher: everyMs must be a positive number, got ${opts.everyMs}`);
  }
  if (opts.warehouse.readOnly) throw new Error('startPublisher: the warehouse is open read-only');
  const writer =
    opts.writer ??
    (opts.parquetOut === undefined
      ? null
      : writerFor(opts.parquetOut, opts, { now: opts.now ?? systemNow, log: opts.log }));
  const reader = await opts.warehouse.openSide();
  let pending: WarehouseSide | null = null;
  try {
    pending = await opts.warehouse.openSide();
    const left = await pending.pendingPartitions();
    let all: string[] = [];
    if (opts.publishAllAtStart) all = await reader.listTables();
    // A table the output has nothing of yet is published whole at start (later, a first touch writes it whole).
    else if (writer !== null) all = writer.missingTables(await reader.listTables());
    const publisher = new CadencedPublisher(opts, reader, pending, writer);
    publisher.start(left, all);
    return publisher;
  } catch (err) {
    await reader.close();
    await pending?.close();
    throw err;
  }
}
