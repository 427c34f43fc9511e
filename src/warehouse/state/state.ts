/**
 * What the engine asks the warehouse about its own state, each question one typed function, so that `src/sync` and
 * `src/cli` hold no SQL: runs to resume, events in scope, parent ids, custom-field definitions, streams the service
 * does not serve, and the account the warehouse belongs to.
 *
 * _evsync.unavailable  stream VARCHAR PK, path VARCHAR (the path that was refused), status INTEGER (404 or 403),
 *                      detail VARCHAR, first_seen_at TIMESTAMP (UTC), last_seen_at TIMESTAMP (UTC), run_id VARCHAR
 * _evsync.meta         also holds `account_base_url` and `account_client_id` (never a secret): the account whose data
 *                      the warehouse holds
 * _evsync.runs         `resumable BOOLEAN` (declared in bookkeeping.ts): a failed run whose failures were all the
 *                      service going away (its signpost and completed scopes carry over to the next run, like a
 *                      partial run's)
 */
import type { Db, ResultRow } from '../db/connection.js';
import { ident, utcNow } from '../db/sql.js';
import { readTableColumns } from '../load/ddl.js';
import type { ScopeRef } from '../types.js';

export const STATE_DDL = [
  `CREATE TABLE IF NOT EXISTS _evsync.unavailable (
     stream VARCHAR PRIMARY KEY, path VARCHAR NOT NULL, status INTEGER NOT NULL, detail VARCHAR,
     first_seen_at TIMESTAMP NOT NULL, last_seen_at TIMESTAMP NOT NULL, run_id VARCHAR)`,
];

function str(v: unknown): string | null {
  return v === null || v === undefined ? null : String(v);
}

function num(v: unknown): number | null {
  if (v === null || v === undefined || v === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/** Whether `schema.table` exists in the open database (a read-only open of a new file has no bookkeeping). */
export async function tableExists(db: Db, schema: string, table: string): Promise<boolean> {
  const r = await db.query(
    `SELECT count(*) AS n FROM duckdb_tables()
    WHERE database_name = current_database() AND schema_name = ? AND table_name = ?`,
    [schema, table],
  );
  return Number(r.rows[0]?.n ?? 0) > 0;
}

// ---------------------------------------------------------------------------------------------------------------
// streams the service does not serve

export interface UnavailableStream {
  stream: string;
  path: string;
  status: number;
  detail: string | null;
  /** UTC, `YYYY-MM-DD HH:MM:SS`. */
  firstSeenAt: string;
  lastSeenAt: string;
}

export async function listUnavailable(db: Db): Promise<UnavailableStream[]> {
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

export async function markUnavailable(
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
export async function clearUnavailable(db: Db, stream: string): Promise<boolean> {
  if (!(await tableExists(db, '_evsync', 'unavailable'))) return false;
  return (await db.run(`DELETE FROM _evsync.unavailable WHERE stream = ?`, [stream])) > 0;
}

// ---------------------------------------------------------------------------------------------------------------
// runs

export interface RunRecord {
  runId: string;
  kind: string;
  status: string;
  startedAt: string;
  finishedAt: string | null;
  args: Record<string, unknown>;
  credits: Record<string, number> | null;
  streams: Record<string, unknown> | null;
  error: string | null;
  resumable: boolean;
  requests: number | null;
  waitsMs: number | null;
  rejected429: number | null;
  pid: number | null;
}

function parseJsonObject(v: unknown): Record<string, unknown> | null {
  if (v === null || v === undefined) return null;
  try {
    const parsed: unknown = JSON.parse(String(v));
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function runFromRow(row: ResultRow): RunRecord {
  const credits = parseJsonObject(row.credits);
  return {
    runId: String(row.run_id),
    kind: String(row.kind),
    status: String(row.status),
    startedAt: String(row.started_at),
    finishedAt: str(row.finished_at),
    args: parseJsonObject(row.args) ?? {},
    credits: credits
      ? Object.fromEntries(Object.entries(credits).map(([k, v]) => [k, num(v) ?? 0] as [string, number]))
      : null,
    streams: parseJsonObject(row.streams),
    error: str(row.error),
    resumable: row.resumable === true || row.resumable === 'true',
    requests: num(row.requests),
    waitsMs: num(row.waits_ms),
    rejected429: num(row.rejected_429),
    pid: num(row.pid),
  };
}

const RUN_COLUMNS = `run_id, kind, status, strftime(started_at, '%Y-%m-%d %H:%M:%S') AS started_at,
  strftime(finished_at, '%Y-%m-%d %H:%M:%S') AS finished_at, CAST(args AS VARCHAR) AS args,
  CAST(credits AS VARCHAR) AS credits, CAST(streams AS VARCHAR) AS streams, error, resumable, requests, waits_ms,
  rejected_429, pid`;

/** The newest runs first; `kind` narrows to one kind. */
export async function recentRuns(db: Db, opts: { limit: number; kind?: string }): Promise<RunRecord[]> {
  if (!(await tableExists(db, '_evsync', 'runs'))) return [];
  const where = opts.kind ? 'WHERE kind = ?' : '';
  const params: unknown[] = opts.kind ? [opts.kind, opts.limit] : [opts.limit];
  const r = await db.query(
    // By the column (microseconds), not the select list's second-resolution text of the same name: runs started
    // within one second (a chain of short runs) came back in their run ids' random order, and a run resumed the
    // wrong one (test/reliability/crash-resume.test.ts, about one run in six on a fast machine).
    `SELECT ${RUN_COLUMNS} FROM _evsync.runs r ${where} ORDER BY r.started_at DESC, r.run_id DESC LIMIT ?`,
    params,
  );
  return r.rows.map(runFromRow);
}

/** A run left 'running' by a process that is gone: say so in its row (one process holds the file at a time). */
export async function markInterrupted(db: Db, runId: string, credits: Record<string, number> | null): Promise<void> {
  await db.run(
    `UPDATE _evsync.runs SET status = 'interrupted', finished_at = coalesce(finished_at, ?),
       credits = coalesce(credits, CAST(? AS JSON)) WHERE run_id = ? AND status = 'running'`,
    [utcNow(db.now), credits ? JSON.stringify(credits) : null, runId],
  );
}

/** A running run's figures so far: what a killed run's row keeps. */
export async function recordRunProgress(
  db: Db,
  runId: string,
  progress: { credits: Record<string, number>; streams: Record<string, unknown> },
): Promise<void> {
  await db.run(`UPDATE _evsync.runs SET credits = CAST(? AS JSON), streams = CAST(? AS JSON) WHERE run_id = ?`, [
    JSON.stringify(progress.credits),
    JSON.stringify(progress.streams),
    runId,
  ]);
}

export async function setRunResumable(db: Db, runId: string, resumable: boolean): Promise<void> {
  await db.run(`UPDATE _evsync.runs SET resumable = ? WHERE run_id = ?`, [resumable, runId]);
}

/** Runs still marked running (at most one, unless a process was killed: then they are history). */
export async function runningRuns(db: Db): Promise<RunRecord[]> {
  if (!(await tableExists(db, '_evsync', 'runs'))) return [];
  const r = await db.query(`SELECT ${RUN_COLUMNS} FROM _evsync.runs r WHERE status = 'running' ORDER BY r.started_at`);
  return r.rows.map(runFromRow);
}

/** Credits the ledger recorded for a run (its last snapshot), for runs whose own row never got them. */
export async function lastCreditSnapshot(db: Db, runId: string): Promise<Record<string, number> | null> {
  const r = await db.query(
    `SELECT CAST(snapshot->'spent' AS VARCHAR) AS spent FROM _evsync.credits WHERE run_id = ?
      ORDER BY recorded_at DESC LIMIT 1`,
    [runId],
  );
  const spent = parseJsonObject(r.rows[0]?.spent);
  if (!spent) return null;
  const out: Record<string, number> = {};
  let total = 0;
  for (const [k, v] of Object.entries(spent)) {
    const n = num(v) ?? 0;
    out[k] = n;
    total += n;
  }
  out.total = total;
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// scopes: events, parents, definitions

export interface EventRow {
  id: number;
  status: string | null;
  /** As stored, `YYYY-MM-DD` (or with a time). */
  startDate: string | null;
  endDate: string | null;
  createdAt: string | null;
}

/** Every current event the warehouse holds (the engine filters them by the user's flags), by id. */
export async function currentEvents(db: Db): Promise<EventRow[]> {
  if (!(await tableExists(db, 'main', 'events'))) return [];
  const r = await db.query(
    `SELECT id, CAST(status AS VARCHAR) AS status, CAST(start_date AS VARCHAR) AS start_date,
            CAST(end_date AS VARCHAR) AS end_date, CAST(created_at AS VARCHAR) AS created_at
       FROM main.events WHERE _deleted_at IS NULL ORDER BY id`,
  );
  return r.rows.flatMap((row) => {
    const id = num(row.id);
    if (id === null) return [];
    return [
      {
        id,
        status: str(row.status),
        startDate: str(row.start_date),
        endDate: str(row.end_date),
        createdAt: str(row.created_at)?.slice(0, 19) ?? null,
      },
    ];
  });
}

/** What an event's own record says of its size: the documented `target_attendance` and `capacity` (null: not given). */
export interface EventSize {
  id: number;
  targetAttendance: number | null;
  capacity: number | null;
}

/** The size figures of every current event, by id (a column the table lacks reads as null). */
export async function eventSizes(db: Db): Promise<EventSize[]> {
  const columns = await readTableColumns(db, 'events');
  if (!columns) return [];
  const pick = (c: string) => (columns.has(c) ? `TRY_CAST(${ident(c)} AS DOUBLE)` : 'NULL');
  const r = await db.query(
    `SELECT id, ${pick('target_attendance')} AS target_attendance, ${pick('capacity')} AS capacity
       FROM main.events WHERE _deleted_at IS NULL ORDER BY id`,
  );
  return r.rows.flatMap((row) => {
    const id = num(row.id);
    return id === null ? [] : [{ id, targetAttendance: num(row.target_attendance), capacity: num(row.capacity) }];
  });
}

/** Ids of the current rows of a table (the parents of a parent-scoped stream), ascending. */
export async function liveIds(db: Db, table: string): Promise<number[]> {
  if (!(await tableExists(db, 'main', table))) return [];
  const r = await db.query(`SELECT id FROM main.${ident(table)} WHERE _deleted_at IS NULL ORDER BY id`);
  return r.rows.map((row) => num(row.id)).filter((n): n is number => n !== null);
}

/** Whether the scope (the whole table for an account-wide scope) holds a row not marked deleted. */
export async function scopeHoldsRows(db: Db, table: string, scope: ScopeRef): Promise<boolean> {
  if (!(await tableExists(db, 'main', table))) return false;
  const where = scope.column === null ? '' : `AND ${ident(scope.column)} = CAST(? AS BIGINT)`;
  const params = scope.column === null ? [] : [scope.value];
  const r = await db.query(
    `SELECT 1 AS x FROM main.${ident(table)} WHERE _deleted_at IS NULL ${where} LIMIT 1`,
    params,
  );
  return r.rows.length > 0;
}

/** What a delete check compares with the service's count: the scope's live rows, and which of `ids` are live. */
export interface LiveCount {
  /** Rows of the scope not marked deleted. */
  live: number;
  /** The ids among those given that are live rows of the scope. */
  liveAmong: Set<number>;
}

export async function liveCount(db: Db, table: string, scope: ScopeRef, ids: readonly number[]): Promise<LiveCount> {
  if (!(await tableExists(db, 'main', table))) return { live: 0, liveAmong: new Set() };
  const where = scope.column === null ? '' : `AND ${ident(scope.column)} = CAST(? AS BIGINT)`;
  const params = scope.column === null ? [] : [scope.value];
  const base = `FROM main.${ident(table)} WHERE _deleted_at IS NULL ${where}`;
  const count = await db.query(`SELECT count(*) AS n ${base}`, params);
  const among =
    ids.length === 0
      ? { rows: [] }
      : await db.query(`SELECT id ${base} AND id IN (SELECT unnest(CAST(? AS BIGINT[])))`, [
          ...params,
          JSON.stringify(ids),
        ]);
  return {
    live: num(count.rows[0]?.n) ?? 0,
    liveAmong: new Set(among.rows.map((row) => num(row.id)).filter((n): n is number => n !== null)),
  };
}

/** The current rows of a definitions table (custom fields), as stored. */
export async function currentRows(db: Db, table: string): Promise<ResultRow[]> {
  if (!(await tableExists(db, 'main', table))) return [];
  const r = await db.query(`SELECT * FROM main.${ident(table)} WHERE _deleted_at IS NULL ORDER BY id`);
  return r.rows;
}

/**
 * Ids of the rows of `table` in one scope whose `column` (`updated_at`) is at or after `from`, ascending: the
 * parents whose children a refresh re-reads. Compared as text, the form the engine's watermarks take.
 */
export async function changedIds(
  db: Db,
  input: { table: string; column: string; from: string; scope: { column: string; value: number } | null },
): Promise<number[]> {
  if (!(await tableExists(db, 'main', input.table))) return [];
  const params: unknown[] = [input.from];
  let where = `CAST(${ident(input.column)} AS VARCHAR) >= ?`;
  if (input.scope) {
    where += ` AND ${ident(input.scope.column)} = ?`;
    params.push(input.scope.value);
  }
  const r = await db.query(`SELECT id FROM main.${ident(input.table)} WHERE ${where} ORDER BY id`, params);
  return r.rows.map((row) => num(row.id)).filter((n): n is number => n !== null);
}

// ---------------------------------------------------------------------------------------------------------------
// the account the warehouse belongs to

export interface AccountBinding {
  baseUrl: string;
  clientId: string;
}

export async function accountBinding(db: Db): Promise<AccountBinding | null> {
  if (!(await tableExists(db, '_evsync', 'meta'))) return null;
  const r = await db.query(
    `SELECT key, value FROM _evsync.meta WHERE key IN ('account_base_url', 'account_client_id')`,
  );
  const map = new Map(r.rows.map((row) => [String(row.key), str(row.value)]));
  const baseUrl = map.get('account_base_url');
  const clientId = map.get('account_client_id');
  return baseUrl && clientId ? { baseUrl, clientId } : null;
}

export async function bindAccount(db: Db, binding: AccountBinding): Promise<void> {
  await db.run(`INSERT OR REPLACE INTO _evsync.meta VALUES ('account_base_url', ?), ('account_client_id', ?)`, [
    binding.baseUrl,
    binding.clientId,
  ]);
}

// ---------------------------------------------------------------------------------------------------------------
// where a Parquet folder came from

/** Run ids and event ids an export folder names (its manifests' runs and event partitions). */
export interface ExportOrigins {
  runIds: string[];
  eventIds: number[];
}

/**
 * Of `origins`, those this warehouse never held: a run it did not record, an event it never stored (deleted ones
 * count as held). An export folder naming any was written from another warehouse.
 */
export async function unknownOrigins(db: Db, origins: ExportOrigins): Promise<ExportOrigins> {
  const ids = origins.eventIds.filter((id) => Number.isSafeInteger(id));
  let runIds = origins.runIds;
  if (runIds.length > 0 && (await tableExists(db, '_evsync', 'runs'))) {
    const r = await db.query(`SELECT run_id FROM _evsync.runs WHERE run_id = ANY(CAST(? AS VARCHAR[]))`, [
      JSON.stringify(runIds),
    ]);
    const known = new Set(r.rows.map((row) => String(row.run_id)));
    runIds = runIds.filter((id) => !known.has(id));
  }
  let eventIds = ids;
  if (ids.length > 0 && (await tableExists(db, 'main', 'events'))) {
    const r = await db.query(`SELECT id FROM main.events WHERE id = ANY(CAST(? AS BIGINT[]))`, [JSON.stringify(ids)]);
    const known = new Set(r.rows.map((row) => num(row.id)));
    eventIds = ids.filter((id) => !known.has(id));
  }
  return { runIds, eventIds };
}

// ---------------------------------------------------------------------------------------------------------------
// what `status` reports

export async function rejectedCounts(db: Db): Promise<Record<string, number>> {
  if (!(await tableExists(db, '_evsync', 'rejected'))) return {};
  const r = await db.query(`SELECT stream, count(*) AS n FROM _evsync.rejected GROUP BY stream ORDER BY stream`);
  return Object.fromEntries(r.rows.map((row) => [String(row.stream), Number(row.n)]));
}

/** The newest row of `_evsync.credits` (see CreditRow): the window as the service last reported it here. */
export interface LedgerRecord {
  /** The run that heard it (or `daemon`: a daemon between runs). */
  runId: string;
  /** When the service said it (UTC). */
  recordedAt: string;
  limit: number | null;
  remaining: number | null;
  resetAt: string | null;
  /** Credits spent since the row before it of the same process. */
  spent: number | null;
}

/** The newest credit row: the window as the service last reported it to any run or daemon here. */
export async function lastLedger(db: Db): Promise<LedgerRecord | null> {
  if (!(await tableExists(db, '_evsync', 'credits'))) return null;
  const r = await db.query(
    `SELECT run_id, CAST(recorded_at AS VARCHAR) AS recorded_at, credit_limit, remaining,
            CAST(reset_at AS VARCHAR) AS reset_at, spent
       FROM _evsync.credits ORDER BY recorded_at DESC LIMIT 1`,
  );
  const l = r.rows[0];
  return l
    ? {
        runId: String(l.run_id),
        recordedAt: String(l.recorded_at),
        limit: num(l.credit_limit),
        remaining: num(l.remaining),
        resetAt: str(l.reset_at),
        spent: num(l.spent),
      }
    : null;
}

// ---------------------------------------------------------------------------------------------------------------
// marks in _evsync.meta (e.g. the demo's: a database it built and may replace)

export async function getMark(db: Db, key: string): Promise<string | null> {
  if (!(await tableExists(db, '_evsync', 'meta'))) return null;
  const r = await db.query(`SELECT value FROM _evsync.meta WHERE key = ?`, [key]);
  return str(r.rows[0]?.value);
}

export async function setMark(db: Db, key: string, value: string, counted = true): Promise<void> {
  const sql = `INSERT OR REPLACE INTO _evsync.meta VALUES (?, ?)`;
  if (counted) await db.run(sql, [key, value]);
  else await db.runUncounted(sql, [key, value]);
}
