/**
 * Change capture's side of the warehouse (`Warehouse.capture`): the delivery journal (journal.ts), the stored row
 * versions and delete marks (capture-rows.ts), and read-only SQL for the process that holds the file
 * (`evsync serve` answering `evsync query`). Every method runs in the warehouse's one exclusive queue.
 */
import { markDeleted, type StoredVersion, storedVersions } from './capture-rows.js';
import { Db, type JsonQueryResult, type Sandbox } from './connection.js';
import * as journal from './journal.js';

export type { StoredVersion } from './capture-rows.js';
export type {
  CaptureStreamState,
  DeliveryStatus,
  JournaledDelivery,
  NewDelivery,
  Settlement,
  StreamSettlement,
} from './journal.js';

export class CaptureStore {
  constructor(private readonly db: Db) {}

  /** Journals deliveries durably (one transaction, committed when this resolves), numbered in arrival order. */
  append(entries: readonly journal.NewDelivery[]): Promise<journal.JournaledDelivery[]> {
    return this.db.exclusive(() => journal.appendDeliveries(this.db, entries));
  }

  /** Whether the journal can be read and written to now (the receiver's health). */
  ping(): Promise<void> {
    return this.db.exclusive(async () => {
      await this.db.query(`SELECT seq FROM _evsync.deliveries LIMIT 0`);
    });
  }

  pending(limit: number): Promise<journal.JournaledDelivery[]> {
    return this.db.exclusive(() => journal.pendingDeliveries(this.db, limit));
  }

  appliedSince(since: string): Promise<journal.JournaledDelivery[]> {
    return this.db.exclusive(() => journal.appliedSince(this.db, since));
  }

  appliedHashes(hashes: readonly string[]): Promise<Set<string>> {
    return this.db.exclusive(() => journal.appliedHashes(this.db, hashes));
  }

  settle(settlements: readonly journal.Settlement[], streams: readonly journal.StreamSettlement[]): Promise<void> {
    return this.db.exclusive(() => journal.settleDeliveries(this.db, settlements, streams));
  }

  recordReconcile(runId: string, found: Readonly<Record<string, number>>): Promise<void> {
    return this.db.exclusive(() => journal.recordReconcile(this.db, runId, found));
  }

  streams(): Promise<journal.CaptureStreamState[]> {
    return this.db.exclusive(() => journal.captureStreams(this.db));
  }

  counts(): Promise<Record<journal.DeliveryStatus, number>> {
    return this.db.exclusive(() => journal.deliveryCounts(this.db));
  }

  prune(before: string): Promise<number> {
    return this.db.exclusive(() => journal.pruneDeliveries(this.db, before));
  }

  secretHash(): Promise<string | null> {
    return this.db.exclusive(() => journal.secretHash(this.db));
  }

  setSecretHash(hash: string): Promise<void> {
    return this.db.exclusive(() => journal.setSecretHash(this.db, hash));
  }

  storedVersions(table: string, ids: readonly number[]): Promise<StoredVersion[]> {
    return this.db.exclusive(() => storedVersions(this.db, table, ids));
  }

  markDeleted(table: string, rows: readonly { id: number; at: string }[], runId: string): Promise<number> {
    return this.db.exclusive(() => markDeleted(this.db, table, rows, runId));
  }

  /**
   * SQL a person typed, answered by the process holding the file: the same sandbox and statement check as
   * `evsync query` (a read-only instance of its own with file access disabled, see `Db.openDetached`). The queue is
   * held meanwhile, after a CHECKPOINT, so nothing writes the file under it: journaling waits for the query.
   */
  readQuery(sql: string, form: 'json' | 'text', sandbox: Sandbox): Promise<JsonQueryResult> {
    if (this.db.path === ':memory:') return Promise.reject(new Error('an in-memory warehouse has no file to query'));
    return this.db.exclusive(async () => {
      await this.db.run('CHECKPOINT').catch((err: unknown) => {
        // A publish reading on a side connection (src/sync/publisher.ts) pins the catalog once a column or a view
        // changed meanwhile, and DuckDB refuses the checkpoint until it ends. Waiting (FORCE CHECKPOINT) would hold
        // the queue, and journaling, for the whole publish: the detached reader replays the WAL itself instead
        // (measured: it sees every commit, new columns included).
        if (!/Cannot CHECKPOINT: there are other write transactions active/i.test(String(err))) throw err;
      });
      const reader = await Db.openDetached(this.db.path, sandbox);
      try {
        return await reader.readQuery(sql, form);
      } finally {
        await reader.close();
      }
    });
  }
}
