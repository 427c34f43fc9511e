/**
 * The delivery journal: every webhook delivery `evsync serve` accepted (or refused as malformed), stored before the
 * receiver answers, so that a 2xx always means "it is on disk". The applier reads pending entries in order and
 * settles each one; a process killed between the two finds them pending at the next start.
 *
 * _evsync.deliveries       seq BIGINT PK (1, 2, 3, ... in the order received), received_at TIMESTAMP (UTC),
 *                          status VARCHAR ('pending' until applied, then 'applied' | 'ignored'; 'rejected' for a body
 *                          that could not be read), format VARCHAR ('json' | 'post' | null), body VARCHAR (the raw body
 *                          as received), body_sha256 VARCHAR, object VARCHAR, action VARCHAR ('insert' | 'update' |
 *                          'delete'), stream VARCHAR (the catalogue stream of the object), record_id BIGINT,
 *                          event_id BIGINT, datetime VARCHAR (the delivery's `datetime` as sent), outcome VARCHAR
 *                          (what applying it did: 'payload', 'reread', 'deleted', 'tombstone', 'stale', 'duplicate',
 *                          'gone', 'unchanged'), reason VARCHAR (why rejected or ignored; never the body's content),
 *                          applied_at TIMESTAMP (UTC)
 * _evsync.capture_streams  stream VARCHAR PK, applied BIGINT, ignored BIGINT, last_delivery_at TIMESTAMP (UTC, the
 *                          newest delivery applied), last_change_at VARCHAR (its `datetime`), last_lag_ms BIGINT (from
 *                          its `datetime` to applied), reconciled_rows BIGINT (rows reconciliation wrote that webhooks
 *                          had not: missed, or not arrived yet), last_reconcile_at TIMESTAMP (UTC), last_reconcile_run
 *                          VARCHAR
 * _evsync.meta             also holds `webhook_secret_sha256`: a hash of the shared secret (never the secret)
 *
 * The secret header's value is never stored: only the body and content type are.
 */
import type { Db, ResultRow } from '../db/connection.js';
import { utcNow } from '../db/sql.js';

export const JOURNAL_DDL = [
  `CREATE TABLE IF NOT EXISTS _evsync.deliveries (
     seq BIGINT PRIMARY KEY, received_at TIMESTAMP NOT NULL, status VARCHAR NOT NULL, format VARCHAR, body VARCHAR,
     body_sha256 VARCHAR, object VARCHAR, action VARCHAR, stream VARCHAR, record_id BIGINT, event_id BIGINT,
     datetime VARCHAR, outcome VARCHAR, reason VARCHAR, applied_at TIMESTAMP)`,
  `CREATE TABLE IF NOT EXISTS _evsync.capture_streams (
     stream VARCHAR PRIMARY KEY, applied BIGINT NOT NULL DEFAULT 0, ignored BIGINT NOT NULL DEFAULT 0,
     last_delivery_at TIMESTAMP, last_change_at VARCHAR, last_lag_ms BIGINT, reconciled_rows BIGINT NOT NULL DEFAULT 0,
     last_reconcile_at TIMESTAMP, last_reconcile_run VARCHAR)`,
];

export type DeliveryStatus = 'pending' | 'applied' | 'ignored' | 'rejected';

/** A delivery as the receiver read it, before it has a sequence number. */
export interface NewDelivery {
  status: 'pending' | 'rejected';
  format: 'json' | 'post' | null;
  body: string;
  bodySha256: string;
  object: string | null;
  action: string | null;
  stream: string | null;
  recordId: number | null;
  eventId: number | null;
  datetime: string | null;
  reason: string | null;
}

export interface JournaledDelivery extends NewDelivery {
  seq: number;
  /** UTC, `YYYY-MM-DD HH:MM:SS.fff`. */
  receivedAt: string;
}

export interface Settlement {
  seq: number;
  status: 'applied' | 'ignored';
  outcome: string;
  reason: string | null;
}

function num(v: unknown): number | null {
  if (v === null || v === undefined || v === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

function str(v: unknown): string | null {
  return v === null || v === undefined ? null : String(v);
}

const COLUMNS = `seq, strftime(received_at, '%Y-%m-%d %H:%M:%S.%g') AS received_at, status, format, body, body_sha256,
  object, action, stream, record_id, event_id, datetime, reason`;

function fromRow(r: ResultRow): JournaledDelivery {
  const format = str(r.format);
  return {
    seq: Number(r.seq),
    receivedAt: String(r.received_at),
    status: String(r.status) === 'rejected' ? 'rejected' : 'pending',
    format: format === 'json' || format === 'post' ? format : null,
    body: String(r.body ?? ''),
    bodySha256: String(r.body_sha256 ?? ''),
    object: str(r.object),
    action: str(r.action),
    stream: str(r.stream),
    recordId: num(r.record_id),
    eventId: num(r.event_id),
    datetime: str(r.datetime),
    reason: str(r.reason),
  };
}

const INSERT_SQL = `INSERT INTO _evsync.deliveries
  (seq, received_at, status, format, body, body_sha256, object, action, stream, record_id, event_id, datetime, reason)
  VALUES (?, CAST(? AS TIMESTAMP), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** The largest sequence number journaled (0 for none). */
async function lastSeq(db: Db): Promise<number> {
  const r = await db.query(`SELECT coalesce(max(seq), 0) AS n FROM _evsync.deliveries`);
  return Number(r.rows[0]?.n ?? 0);
}

/**
 * Journals deliveries in one transaction (the receiver's group commit), numbered after the largest journaled; they
 * are on disk once this resolves.
 */
export async function appendDeliveries(db: Db, entries: readonly NewDelivery[]): Promise<JournaledDelivery[]> {
  const at = utcNow(db.now);
  return db.transaction(async () => {
    const firstSeq = (await lastSeq(db)) + 1;
    const out: JournaledDelivery[] = entries.map((e, i) => ({ ...e, seq: firstSeq + i, receivedAt: at }));
    for (const e of out) {
      await db.runPrepared(INSERT_SQL, [
        e.seq,
        at,
        e.status,
        e.format,
        e.body,
        e.bodySha256,
        e.object,
        e.action,
        e.stream,
        e.recordId,
        e.eventId,
        e.datetime,
        e.reason,
      ]);
    }
    return out;
  });
}

/** Pending deliveries, oldest first. */
export async function pendingDeliveries(db: Db, limit: number): Promise<JournaledDelivery[]> {
  const r = await db.query(`SELECT ${COLUMNS} FROM _evsync.deliveries WHERE status = 'pending' ORDER BY seq LIMIT ?`, [
    limit,
  ]);
  return r.rows.map(fromRow);
}

/** Deliveries applied at or after `since` (UTC text), oldest first: what a reconciliation run may have overwritten. */
export async function appliedSince(db: Db, since: string): Promise<JournaledDelivery[]> {
  const r = await db.query(
    `SELECT ${COLUMNS} FROM _evsync.deliveries WHERE status = 'applied' AND applied_at >= CAST(? AS TIMESTAMP)
      ORDER BY seq`,
    [since],
  );
  return r.rows.map(fromRow);
}

/** Of these body hashes, those of deliveries already applied (an identical body applied again changes nothing). */
export async function appliedHashes(db: Db, hashes: readonly string[]): Promise<Set<string>> {
  if (hashes.length === 0) return new Set();
  const r = await db.query(
    // Copies arrive within the service's retry schedule (minutes): a day back is plenty, and keeps the scan to the
    // newest row groups however long the journal is kept.
    `SELECT DISTINCT body_sha256 AS h FROM _evsync.deliveries
      WHERE status = 'applied' AND received_at >= CAST(? AS TIMESTAMP) - INTERVAL 1 DAY
        AND body_sha256 = ANY(CAST(? AS VARCHAR[]))`,
    [utcNow(db.now), JSON.stringify(hashes)],
  );
  return new Set(r.rows.map((row) => String(row.h)));
}

export interface StreamSettlement {
  stream: string;
  applied: number;
  ignored: number;
  /** The newest delivery applied in this batch: when it arrived (UTC), its `datetime`, and its lag in ms. */
  last: { receivedAt: string; datetime: string | null; lagMs: number | null } | null;
}

/** Settles deliveries and the per-stream counters in one transaction. */
export async function settleDeliveries(
  db: Db,
  settlements: readonly Settlement[],
  streams: readonly StreamSettlement[],
): Promise<void> {
  if (settlements.length === 0) return;
  const now = utcNow(db.now);
  await db.transaction(async () => {
    const rows = settlements.map((settlement) => [
      settlement.seq,
      settlement.status,
      settlement.outcome,
      settlement.reason,
    ]);
    await db.run(
      `UPDATE _evsync.deliveries d SET status = x.status, outcome = x.outcome, reason = x.reason,
              applied_at = CAST($1 AS TIMESTAMP)
         FROM (SELECT CAST(v->>0 AS BIGINT) AS seq, v->>1 AS status, v->>2 AS outcome, v->>3 AS reason
                 FROM (SELECT unnest(CAST(CAST($2 AS JSON) AS JSON[])) AS v)) x
        WHERE d.seq = x.seq`,
      [now, JSON.stringify(rows)],
    );
    for (const counters of streams) {
      await db.run(
        `INSERT INTO _evsync.capture_streams (stream, applied, ignored, last_delivery_at, last_change_at, last_lag_ms)
           VALUES (?, ?, ?, CAST(? AS TIMESTAMP), ?, ?)
         ON CONFLICT (stream) DO UPDATE SET applied = _evsync.capture_streams.applied + excluded.applied,
           ignored = _evsync.capture_streams.ignored + excluded.ignored,
           last_delivery_at = coalesce(excluded.last_delivery_at, _evsync.capture_streams.last_delivery_at),
           last_change_at = coalesce(excluded.last_change_at, _evsync.capture_streams.last_change_at),
           last_lag_ms = coalesce(excluded.last_lag_ms, _evsync.capture_streams.last_lag_ms)`,
        [
          counters.stream,
          counters.applied,
          counters.ignored,
          counters.last?.receivedAt ?? null,
          counters.last?.datetime ?? null,
          counters.last?.lagMs ?? null,
        ],
      );
    }
  });
}

/** After a reconciliation run: rows it wrote per webhook stream (what webhooks had not brought). */
export async function recordReconcile(db: Db, runId: string, found: Readonly<Record<string, number>>): Promise<void> {
  const now = utcNow(db.now);
  await db.transaction(async () => {
    for (const [stream, rows] of Object.entries(found)) {
      await db.run(
        `INSERT INTO _evsync.capture_streams (stream, reconciled_rows, last_reconcile_at, last_reconcile_run)
           VALUES (?, ?, CAST(? AS TIMESTAMP), ?)
         ON CONFLICT (stream) DO UPDATE SET
           reconciled_rows = _evsync.capture_streams.reconciled_rows + excluded.reconciled_rows,
           last_reconcile_at = excluded.last_reconcile_at, last_reconcile_run = excluded.last_reconcile_run`,
        [stream, rows, now, runId],
      );
    }
  });
}

export interface CaptureStreamState {
  stream: string;
  applied: number;
  ignored: number;
  /** UTC. */
  lastDeliveryAt: string | null;
  lastChangeAt: string | null;
  lastLagMs: number | null;
  reconciledRows: number;
  /** UTC. */
  lastReconcileAt: string | null;
  lastReconcileRun: string | null;
}

export async function captureStreams(db: Db): Promise<CaptureStreamState[]> {
  const exists = await db.query(
    `SELECT count(*) AS n FROM duckdb_tables()
      WHERE database_name = current_database() AND schema_name = '_evsync' AND table_name = 'capture_streams'`,
  );
  if (Number(exists.rows[0]?.n ?? 0) === 0) return [];
  const r = await db.query(
    `SELECT stream, applied, ignored, strftime(last_delivery_at, '%Y-%m-%d %H:%M:%S') AS last_delivery_at,
            last_change_at, last_lag_ms, reconciled_rows,
            strftime(last_reconcile_at, '%Y-%m-%d %H:%M:%S') AS last_reconcile_at, last_reconcile_run
       FROM _evsync.capture_streams ORDER BY stream`,
  );
  return r.rows.map((row) => ({
    stream: String(row.stream),
    applied: num(row.applied) ?? 0,
    ignored: num(row.ignored) ?? 0,
    lastDeliveryAt: str(row.last_delivery_at),
    lastChangeAt: str(row.last_change_at),
    lastLagMs: num(row.last_lag_ms),
    reconciledRows: num(row.reconciled_rows) ?? 0,
    lastReconcileAt: str(row.last_reconcile_at),
    lastReconcileRun: str(row.last_reconcile_run),
  }));
}

/** Deliveries per status (for metrics and health). */
export async function deliveryCounts(db: Db): Promise<Record<DeliveryStatus, number>> {
  const r = await db.query(`SELECT status, count(*) AS n FROM _evsync.deliveries GROUP BY status`);
  const out: Record<DeliveryStatus, number> = { pending: 0, applied: 0, ignored: 0, rejected: 0 };
  for (const row of r.rows) {
    const s = String(row.status);
    if (s in out) out[s as DeliveryStatus] = Number(row.n);
  }
  return out;
}

/** Removes settled deliveries received before `before` (UTC): their bodies hold personal data, kept no longer. */
export async function pruneDeliveries(db: Db, before: string): Promise<number> {
  return db.run(`DELETE FROM _evsync.deliveries WHERE status <> 'pending' AND received_at < CAST(? AS TIMESTAMP)`, [
    before,
  ]);
}

export async function secretHash(db: Db): Promise<string | null> {
  const r = await db.query(`SELECT value FROM _evsync.meta WHERE key = 'webhook_secret_sha256'`);
  return str(r.rows[0]?.value);
}

export async function setSecretHash(db: Db, hash: string): Promise<void> {
  await db.run(`INSERT OR REPLACE INTO _evsync.meta VALUES ('webhook_secret_sha256', ?)`, [hash]);
}
