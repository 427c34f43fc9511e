/**
 * A second connection to an open warehouse, for work that must not wait behind the warehouse's own queue and must
 * not hold it up: the daemon's publisher (src/daemon/publisher.ts) exports Parquet and writes the snapshot here while
 * the applier keeps writing through the warehouse. Both connections share the process's one DuckDB instance on the
 * file, so the side reads committed data at a consistent point in time (DuckDB's MVCC) without blocking writers.
 *
 * It never merges staged pages (they belong to the runs of the warehouse that staged them): it reads what is in the
 * tables. Call `touched` on the publisher only once the change is committed to its table.
 */
import type { Now } from '../../../schemas/clock.js';
import { Db } from '../db/connection.js';
import { listStreamTables } from '../load/ddl.js';
import { addPending, type Partition, readPending, removePendingBefore } from '../state/publish-pending.js';
import type { ExportOptions, ExportResult } from '../types.js';
import { exportParquet } from './export.js';
import { type PartFingerprints, partFingerprints } from './export-unchanged.js';
import { publishSnapshot, type SnapshotOptions, type SnapshotResult } from './snapshot.js';

/**
 * A copy for readers runs on one thread, as a load does (Warehouse.exportParquet says why). DuckDB's thread count is
 * the instance's, shared with the writer: the writer sets its own again at its next switch between loading and the
 * rest (one thread while it loads, as here), so this only ever lowers it, and for a while. The memory limit is left
 * as the daemon set it: under the load's 100 MB, publishes beside the applier's writes on `large` failed with "Out
 * of Memory ... failed to pin block" (bench/publish-large.ts, reader freshness). Uncounted: a setting, not data.
 */
async function oneThread(db: Db): Promise<void> {
  await db.runUncounted('SET threads = 1');
}

export class WarehouseSide {
  private constructor(private readonly db: Db) {}

  /** A new connection on the instance this process holds on `path` (opened by Warehouse.open before). */
  static async open(path: string, readOnly: boolean, now: Now): Promise<WarehouseSide> {
    return new WarehouseSide(await Db.open(path, readOnly, { now }));
  }

  get path(): string {
    return this.db.path;
  }

  listTables(): Promise<string[]> {
    return this.db.exclusive(() => listStreamTables(this.db));
  }

  exportParquet(opts: ExportOptions): Promise<ExportResult> {
    return this.db.exclusive(async () => {
      await oneThread(this.db);
      return exportParquet(this.db, opts);
    });
  }

  /** The sources of `table`'s partitions now (export-unchanged.ts), read on this connection. */
  partFingerprints(table: string, includeDeleted: boolean): Promise<PartFingerprints | null> {
    return this.db.exclusive(() => partFingerprints(this.db, table, includeDeleted));
  }

  publishSnapshot(target: string, opts: SnapshotOptions = {}): Promise<SnapshotResult> {
    return this.db.exclusive(async () => {
      await oneThread(this.db);
      return publishSnapshot(this.db, target, opts);
    });
  }

  /** Partitions owed to readers (see publish-pending.ts). */
  pendingPartitions(): Promise<Partition[]> {
    return this.db.exclusive(() => readPending(this.db));
  }

  /** Records touched partitions, each with the time it was touched (UTC `YYYY-MM-DD HH:MM:SS.mmm`). */
  recordPending(parts: readonly (Partition & { at: string })[]): Promise<void> {
    return this.db.exclusive(() => addPending(this.db, parts));
  }

  /** After a publish that started at `startedAt` (UTC `YYYY-MM-DD HH:MM:SS.mmm`) completed. */
  clearPendingBefore(startedAt: string): Promise<void> {
    return this.db.exclusive(() => removePendingBefore(this.db, startedAt));
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
