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
import { Db, LOAD_MEMORY_LIMIT, memoryLimitBytes } from '../db/connection.js';
import { listStreamTables } from '../load/ddl.js';
import { addPending, type Partition, readPending, removePendingBefore } from '../state/publish-pending.js';
import type { ExportOptions, ExportResult } from '../types.js';
import { exportParquet } from './export.js';
import { type PartFingerprints, partFingerprints } from './export-unchanged.js';
import { publishSnapshot, type SnapshotOptions, type SnapshotResult } from './snapshot.js';

/**
 * A copy for readers runs as a load does, on one thread and under the load's memory limit (Warehouse.exportParquet
 * says why). DuckDB's thread count and memory limit are the instance's, shared with the writer: the writer sets its
 * own again at its next switch between loading and the rest (the same settings while it loads), so this only ever
 * lowers them, and for a while. Uncounted: settings, not data.
 */
async function asALoad(db: Db): Promise<void> {
  await db.runUncounted('SET threads = 1');
  const r = await db.query(`SELECT current_setting('memory_limit') AS limit`);
  const now = memoryLimitBytes(String(r.rows[0]?.limit ?? ''));
  const load = memoryLimitBytes(LOAD_MEMORY_LIMIT) as number;
  if (now !== null && now > load) await db.runUncounted(`SET memory_limit = '${LOAD_MEMORY_LIMIT}'`);
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
      await asALoad(this.db);
      return exportParquet(this.db, opts);
    });
  }

  /** The sources of `table`'s partitions now (export-unchanged.ts), read on this connection. */
  partFingerprints(table: string, includeDeleted: boolean): Promise<PartFingerprints | null> {
    return this.db.exclusive(() => partFingerprints(this.db, table, includeDeleted));
  }

  publishSnapshot(target: string, opts: SnapshotOptions = {}): Promise<SnapshotResult> {
    return this.db.exclusive(async () => {
      await asALoad(this.db);
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
