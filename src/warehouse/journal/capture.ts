/**
 * Change capture's side of the warehouse (`Warehouse.capture`): the delivery journal (journal.ts), the stored row
 * versions and delete marks (capture-rows.ts). Every method runs in the warehouse's one exclusive queue.
 */

import type { Archive } from '../archive/archive.js';
import type { OpLog } from '../archive/op-log.js';
import type { Db } from '../db/connection.js';
import { utcNow } from '../db/sql.js';
import { markDeleted, type StoredVersion, storedVersions } from './capture-rows.js';
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
  constructor(
    private readonly db: Db,
    private readonly ops: OpLog,
    private readonly archive: Archive | null,
    private readonly account: () => string | null,
  ) {}

  /**
   * Journals deliveries durably (one transaction, committed when this resolves), numbered in arrival order. The
   * accepted ones are archived first (their bodies are stored scrubbed, as the journal keeps them).
   */
  append(entries: readonly journal.NewDelivery[]): Promise<journal.JournaledDelivery[]> {
    return this.db.exclusive(() => {
      if (this.archive) {
        const at = utcNow(this.db.now);
        for (const e of entries) {
          if (e.status !== 'pending') continue;
          const request = {
            object: e.object,
            action: e.action,
            recordId: e.recordId,
            eventId: e.eventId,
            sha256: e.bodySha256,
          };
          const meta = {
            kind: 'delivery' as const,
            stream: e.stream ?? e.object ?? 'unknown',
            account: this.account(),
            runId: null,
          };
          this.archive.append({ ...meta, at, serverDate: e.datetime, request, rows: 1 }, e.body);
        }
      }
      return journal.appendDeliveries(this.db, entries);
    });
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
    return this.db.exclusive(() => markDeleted(this.db, this.ops, table, rows, runId));
  }
}
