/**
 * The status document's sections over time (the last 24 hours): credits per rate-limit window against the limit
 * the service reported, with the current window's remaining credits and reset; deliveries per 10 minutes with the oldest
 * pending one's age. Read from `_evsync` by `Warehouse.statusHistory`; no API call.
 */
import { utcMs } from '../../sync/capture/time.js';
import {
  type CreditWindow,
  DELIVERY_BUCKET_MINUTES,
  type DeliveryBucket,
  type LedgerRecord,
  type StatusHistory,
} from '../../warehouse/index.js';

/** How far back the page looks. */
export const HISTORY_HOURS = 24;

export interface CreditsSection {
  /** The limit the service reported most recently (credits per window). */
  limit: number | null;
  windowSeconds: number | null;
  /** The window as the last ledger record left it; `resetPassed` once its reset time is behind us. */
  current: {
    remaining: number | null;
    resetAt: string | null;
    recordedAt: string;
    resetPassed: boolean;
  } | null;
  /** Windows of the last 24 hours the ledger saw, oldest first. */
  windows: CreditWindow[];
}

export interface DeliveriesSection {
  totals: { received: number; settled: number; refused: number };
  pending: number;
  oldestPendingAt: string | null;
  oldestPendingAgeSeconds: number | null;
  /** Minutes per bucket. */
  bucketMinutes: number;
  /** Every bucket of the last 24 hours, oldest first. */
  buckets: DeliveryBucket[];
}

export function creditsSection(history: StatusHistory, ledger: LedgerRecord | null, nowMs: number): CreditsSection {
  const last = history.windows.at(-1);
  const resetMs = utcMs(ledger?.resetAt ?? null);
  return {
    limit: ledger?.limit ?? last?.limit ?? null,
    windowSeconds: last?.windowMs ? Math.round(last.windowMs / 1000) : null,
    current: ledger
      ? {
          remaining: ledger.remaining,
          resetAt: ledger.resetAt ? ledger.resetAt.slice(0, 19) : null,
          recordedAt: ledger.recordedAt.slice(0, 19),
          resetPassed: resetMs !== null && resetMs <= nowMs,
        }
      : null,
    windows: history.windows,
  };
}

export function deliveriesSection(history: StatusHistory, nowMs: number): DeliveriesSection {
  const totals = { received: 0, settled: 0, refused: 0 };
  for (const b of history.deliveries) {
    totals.received += b.received;
    totals.settled += b.settled;
    totals.refused += b.refused;
  }
  const oldest = utcMs(history.oldestPendingAt);
  return {
    totals,
    pending: history.pending,
    oldestPendingAt: history.oldestPendingAt,
    oldestPendingAgeSeconds: oldest === null ? null : Math.max(0, Math.round((nowMs - oldest) / 1000)),
    bucketMinutes: DELIVERY_BUCKET_MINUTES,
    buckets: history.deliveries,
  };
}
