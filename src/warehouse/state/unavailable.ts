/**
 * Streams recorded as not served by the service (`Warehouse.unavailable`): a 404 on the path, or a 403 on every
 * scope. A run skips them until the service serves them again. Every method runs in the warehouse's one queue.
 *
 * _evsync.unavailable  stream VARCHAR PK, path VARCHAR (the path that was refused), status INTEGER (404 or 403),
 *                      detail VARCHAR, first_seen_at TIMESTAMP (UTC), last_seen_at TIMESTAMP (UTC), run_id VARCHAR
 */
import type { Db } from '../db/connection.js';
import { utcNow } from '../db/sql.js';
import { num, str, tableExists } from './bookkeeping.js';

export const UNAVAILABLE_DDL = [
  `CREATE TABLE IF NOT EXISTS _evsync.unavailable (
     stream VARCHAR PRIMARY KEY, path VARCHAR NOT NULL, status INTEGER NOT NULL, detail VARCHAR,
     first_seen_at TIMESTAMP NOT NULL, last_seen_at TIMESTAMP NOT NULL, run_id VARCHAR)`,
];

export interface UnavailableStream {
  stream: string;
  path: string;
  status: number;
  detail: string | null;
  /** UTC, `YYYY-MM-DD HH:MM:SS`. */
  firstSeenAt: string;
  lastSeenAt: string;
}

async function listUnavailable(db: Db): Promise<UnavailableStream[]> {
  if (!(await tableExists(db, '_evsync', 'unavailable'))) return [];
  const r = await db.query(
    `SELECT stream, path, status, detail, strftime(first_seen_at, '%Y-%m-%d %H:%M:%S') AS first_seen_at,
            strftime(last_seen_at, '%Y-%m-%d %H:%M:%S') AS last_seen_at
       FROM _evsync.unavailable ORDER BY stream`,
  );
  return r.rows.map((row) => ({
    stream: String(row.stream),
    path: String(row.path),
    status: num(row.status) ?? 0,
    detail: str(row.detail),
    firstSeenAt: String(row.first_seen_at),
    lastSeenAt: String(row.last_seen_at),
  }));
}

async function markUnavailable(
  db: Db,
  input: { stream: string; path: string; status: number; detail: string | null; runId: string },
): Promise<void> {
  const now = utcNow(db.now);
  // The first sighting is kept while the same path keeps being refused; a new path starts a new record.
  await db.run(
    `INSERT INTO _evsync.unavailable (stream, path, status, detail, first_seen_at, last_seen_at, run_id)
       VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (stream) DO UPDATE SET
       first_seen_at = CASE WHEN _evsync.unavailable.path = excluded.path THEN _evsync.unavailable.first_seen_at
                            ELSE excluded.first_seen_at END,
       path = excluded.path, status = excluded.status, detail = excluded.detail,
       last_seen_at = excluded.last_seen_at, run_id = excluded.run_id`,
    [input.stream, input.path, input.status, input.detail, now, now, input.runId],
  );
}

/** The stream answered: it is available again. */
async function clearUnavailable(db: Db, stream: string): Promise<boolean> {
  if (!(await tableExists(db, '_evsync', 'unavailable'))) return false;
  return (await db.run(`DELETE FROM _evsync.unavailable WHERE stream = ?`, [stream])) > 0;
}

export class UnavailableStreams {
  constructor(private readonly db: Db) {}

  list(): Promise<UnavailableStream[]> {
    return this.db.exclusive(() => listUnavailable(this.db));
  }

  mark(input: { stream: string; path: string; status: number; detail: string | null; runId: string }) {
    return this.db.exclusive(() => markUnavailable(this.db, input));
  }

  /** Whether the stream was recorded (and now no longer is). */
  clear(stream: string): Promise<boolean> {
    return this.db.exclusive(() => clearUnavailable(this.db, stream));
  }
}
