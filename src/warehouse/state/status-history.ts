/**
 * What the status page draws over time, read from `_evsync` (no new table): credits per rate-limit window from the
 * credit ledger (`_evsync.credits`), deliveries per 10 minutes from the journal (`_evsync.deliveries`), and the webhook
 * lag's percentiles per stream. Every time given and returned is UTC text (`YYYY-MM-DD HH:MM:SS`).
 */
import type { Db } from '../db/connection.js';
import { num, tableExists } from './bookkeeping.js';

/** One rate-limit window the ledger saw: identified by its reset time (the service's `X-Rate-Limit-Reset`). */
export interface CreditWindow {
  /** When the window ends (UTC). */
  resetAt: string;
  /** The window's length the client measured (ms), when the snapshot said. */
  windowMs: number | null;
  /** The limit the service reported. */
  limit: number | null;
  /** Credits used in the window as the service counted them: limit minus the lowest remaining seen. */
  used: number | null;
  /** Credits evsync spent in the window (runs and daemons: the sum of its rows), its own share of `used`. */
  spentByRuns: number;
  /** The last snapshot recorded in the window. */
  lastRecordedAt: string;
  remainingAtLast: number | null;
}

/** Deliveries in one bucket (DELIVERY_BUCKET_MINUTES): received, settled (applied or ignored), refused, pending at its end. */
export interface DeliveryBucket {
  /** Start of the bucket (UTC). */
  at: string;
  received: number;
  settled: number;
  refused: number;
  pendingAtEnd: number;
}

/** Webhook lag per stream over the deliveries applied since the given time, in ms (record wall time read as UTC). */
export interface WallLag {
  stream: string;
  count: number;
  p50WallMs: number;
  p95WallMs: number;
}

export interface StatusHistory {
  windows: CreditWindow[];
  deliveries: DeliveryBucket[];
  /** Deliveries journaled and not yet applied, and the oldest one's arrival (UTC, null when none). */
  pending: number;
  oldestPendingAt: string | null;
  lags: WallLag[];
}

const TS = `'%Y-%m-%d %H:%M:%S'`;

async function creditWindows(db: Db, since: string): Promise<CreditWindow[]> {
  if (!(await tableExists(db, '_evsync', 'credits'))) return [];
  // The client derives a snapshot's reset time from the service's seconds-to-reset, so one window's snapshots differ
  // by a second or so: a snapshot starts a new window only when its reset is further from the previous one than
  // that jitter (30 s, or half a window when windows are shorter).
  const r = await db.query(
    `WITH s AS (
       SELECT *, CAST(snapshot->>'windowMs' AS BIGINT) AS window_ms,
              CASE WHEN epoch_ms(reset_at) - epoch_ms(lag(reset_at) OVER (ORDER BY reset_at, recorded_at))
                        <= least(30000, coalesce(CAST(snapshot->>'windowMs' AS BIGINT), 600000) / 2)
                   THEN 0 ELSE 1 END AS starts
         FROM _evsync.credits WHERE reset_at IS NOT NULL AND recorded_at >= CAST(? AS TIMESTAMP)),
     g AS (SELECT *, sum(starts) OVER (ORDER BY reset_at, recorded_at ROWS UNBOUNDED PRECEDING) AS grp FROM s)
     SELECT strftime(max(reset_at), ${TS}) AS reset_at, max(window_ms) AS window_ms,
            max(credit_limit) AS credit_limit, max(credit_limit) - min(remaining) AS used,
            coalesce(sum(spent), 0) AS spent, strftime(max(recorded_at), ${TS}) AS last_recorded_at,
            arg_max(remaining, recorded_at) AS remaining_at_last
       FROM g GROUP BY grp ORDER BY grp`,
    [since],
  );
  return r.rows.map((row) => ({
    resetAt: String(row.reset_at),
    windowMs: num(row.window_ms),
    limit: num(row.credit_limit),
    used: num(row.used),
    spentByRuns: num(row.spent) ?? 0,
    lastRecordedAt: String(row.last_recorded_at),
    remainingAtLast: num(row.remaining_at_last),
  }));
}

/** The width of a delivery bucket: the service's rate-limit window, fine enough for a daemon started minutes ago. */
export const DELIVERY_BUCKET_MINUTES = 10;

async function deliveryBuckets(db: Db, since: string, until: string): Promise<DeliveryBucket[]> {
  if (!(await tableExists(db, '_evsync', 'deliveries'))) return [];
  // Counted per bucket in one pass each; the pending count at a bucket's end is what was received and not yet settled
  // by then: everything before the first bucket (one count), then the running sum of received minus settled.
  const step = `INTERVAL ${DELIVERY_BUCKET_MINUTES} MINUTE`;
  const buckets = await db.query(
    `WITH b AS (SELECT generate_series AS slot
                  FROM generate_series(time_bucket(${step}, CAST($1 AS TIMESTAMP)), CAST($2 AS TIMESTAMP), ${step})),
          head AS (SELECT min(slot) AS slot FROM b),
          r AS (SELECT time_bucket(${step}, received_at) AS slot,
                       count(*) FILTER (WHERE status <> 'rejected') AS received,
                       count(*) FILTER (WHERE status = 'rejected') AS refused
                  FROM _evsync.deliveries WHERE received_at >= (SELECT slot FROM head) GROUP BY 1),
          s AS (SELECT time_bucket(${step}, applied_at) AS slot, count(*) AS settled
                  FROM _evsync.deliveries WHERE applied_at >= (SELECT slot FROM head) GROUP BY 1),
          prior AS (SELECT count(*) FILTER (WHERE status <> 'rejected' AND received_at < (SELECT slot FROM head))
                            - count(*) FILTER (WHERE applied_at < (SELECT slot FROM head)) AS pending
                       FROM _evsync.deliveries)
     SELECT strftime(b.slot, ${TS}) AS at, coalesce(r.received, 0) AS received, coalesce(r.refused, 0) AS refused,
            coalesce(s.settled, 0) AS settled,
            (SELECT pending FROM prior)
              + sum(coalesce(r.received, 0) - coalesce(s.settled, 0)) OVER (ORDER BY b.slot) AS pending_at_end
       FROM b LEFT JOIN r ON r.slot = b.slot LEFT JOIN s ON s.slot = b.slot
      ORDER BY b.slot`,
    [since, until],
  );
  return buckets.rows.map((row) => ({
    at: String(row.at),
    received: num(row.received) ?? 0,
    settled: num(row.settled) ?? 0,
    refused: num(row.refused) ?? 0,
    pendingAtEnd: num(row.pending_at_end) ?? 0,
  }));
}

async function pendingNow(db: Db): Promise<{ pending: number; oldestPendingAt: string | null }> {
  if (!(await tableExists(db, '_evsync', 'deliveries'))) return { pending: 0, oldestPendingAt: null };
  const r = await db.query(
    `SELECT count(*) AS n, strftime(min(received_at), ${TS}) AS at FROM _evsync.deliveries WHERE status = 'pending'`,
  );
  const at = r.rows[0]?.at;
  return { pending: num(r.rows[0]?.n) ?? 0, oldestPendingAt: at === null || at === undefined ? null : String(at) };
}

async function wallLags(db: Db, since: string): Promise<WallLag[]> {
  if (!(await tableExists(db, '_evsync', 'deliveries'))) return [];
  // The delivery's `datetime` is record-zone wall time: read as UTC here, the caller shifts by the zone's offset
  // (a percentile moves with a constant shift).
  const r = await db.query(
    `SELECT stream, count(*) AS n,
            quantile_cont(lag_ms, 0.5) AS p50, quantile_cont(lag_ms, 0.95) AS p95
       FROM (SELECT stream, epoch_ms(applied_at) - epoch_ms(TRY_CAST(substr(datetime, 1, 19) AS TIMESTAMP)) AS lag_ms
               FROM _evsync.deliveries
              WHERE status = 'applied' AND outcome IN ('payload', 'reread', 'deleted', 'tombstone')
                AND applied_at >= CAST(? AS TIMESTAMP) AND stream IS NOT NULL)
      WHERE lag_ms IS NOT NULL
      GROUP BY stream ORDER BY stream`,
    [since],
  );
  return r.rows.map((row) => ({
    stream: String(row.stream),
    count: num(row.n) ?? 0,
    p50WallMs: num(row.p50) ?? 0,
    p95WallMs: num(row.p95) ?? 0,
  }));
}

/** The page's history from `since` to `until` (UTC text, `until` usually now). */
export async function statusHistory(db: Db, since: string, until: string): Promise<StatusHistory> {
  return {
    windows: await creditWindows(db, since),
    deliveries: await deliveryBuckets(db, since, until),
    ...(await pendingNow(db)),
    lags: await wallLags(db, since),
  };
}
