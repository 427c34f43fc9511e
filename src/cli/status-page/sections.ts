/**
 * The status document's sections over time (the last 24 hours): credits per rate-limit window against the limit
 * the service reported, with the current window's remaining credits and reset; deliveries per 10 minutes with the oldest
 * pending one's age. Read from `_evsync` by `Warehouse.statusHistory`; no API call.
 */

import { utcText } from '../../../connectors/service.js';
import type { LimitReading } from '../../api/index.js';
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

/**
 * The credit window as the service last reported it (an answer's `X-Rate-Limit-*`): to a running process that
 * answers (its client's latest answer), else to any run or daemon here (the newest reading they recorded).
 */
export interface WindowReading {
  limit: number | null;
  remaining: number | null;
  /** When the window resets (UTC text), null when the answer did not say. */
  resetAt: string | null;
  /** When the service said it (UTC text). */
  seenAt: string;
  /** Who heard it: a run id, `daemon` (a daemon between runs), or the process answering (`evsync serve (PID 7)`). */
  heardBy: string;
  /** Read from the answering process's client now, rather than from what was recorded. */
  live: boolean;
}

export interface CreditsSection {
  /** The limit the service reported most recently (credits per window). */
  limit: number | null;
  windowSeconds: number | null;
  /**
   * The window as the service last reported it: credits left, its reset, when it was said (`recordedAt`, UTC) and
   * to whom; `resetPassed` once its reset time is behind us (a full window since, until the next answer says).
   */
  current: {
    remaining: number | null;
    limit: number | null;
    resetAt: string | null;
    recordedAt: string;
    heardBy: string;
    live: boolean;
    resetPassed: boolean;
  } | null;
  /** Windows of the last 24 hours the readings saw, oldest first. */
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

/** The newest recorded reading as a WindowReading. */
export function recordedReading(ledger: LedgerRecord | null): WindowReading | null {
  if (!ledger) return null;
  return {
    limit: ledger.limit,
    remaining: ledger.remaining,
    resetAt: ledger.resetAt ? ledger.resetAt.slice(0, 19) : null,
    seenAt: ledger.recordedAt.slice(0, 19),
    heardBy: ledger.runId,
    live: false,
  };
}

/** A live client's reading as a WindowReading (null before its first answer). */
export function liveReading(reading: LimitReading | null, heardBy: string): WindowReading | null {
  if (!reading) return null;
  return {
    limit: reading.limit,
    remaining: reading.remaining,
    resetAt: reading.resetAt ? utcText(reading.resetAt.getTime(), 'seconds') : null,
    seenAt: utcText(reading.seenAt.getTime(), 'seconds'),
    heardBy,
    live: true,
  };
}

export function creditsSection(history: StatusHistory, reading: WindowReading | null, nowMs: number): CreditsSection {
  const last = history.windows.at(-1);
  const resetMs = utcMs(reading?.resetAt ?? null);
  return {
    limit: reading?.limit ?? last?.limit ?? null,
    windowSeconds: last?.windowMs ? Math.round(last.windowMs / 1000) : null,
    current: reading
      ? {
          remaining: reading.remaining,
          limit: reading.limit,
          resetAt: reading.resetAt,
          recordedAt: reading.seenAt,
          heardBy: reading.heardBy,
          live: reading.live,
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
