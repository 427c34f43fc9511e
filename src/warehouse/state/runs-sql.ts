/**
 * The SQL of the runs' record (run-log.ts): `_evsync.runs` (declared in bookkeeping.ts) written as a run starts,
 * goes and ends, read back by status and resume; and the credit ledger (`_evsync.credits`) the runs and the daemon
 * write their readings of the credit window to.
 *
 * _evsync.runs  `resumable BOOLEAN`: a failed run whose failures were all the service going away (its signpost and
 *               completed scopes carry over to the next run, like a partial run's)
 */
import type { Db, ResultRow } from '../db/connection.js';
import { timestampText, utcNow } from '../db/sql.js';
import { REBUILD_RUN_PREFIX } from '../history/versions.js';
import type { CreditRow, RunSummary } from '../types.js';
import { json, newRunId, num, str, tableExists } from './bookkeeping.js';

export async function startRun(db: Db, kind: string, args: Record<string, unknown>): Promise<string> {
  // A rebuild's id says so: the rows it writes carry it, and readers' copies (which have no runs table) tell by it
  // who wrote a version (history/history-views.ts).
  const runId = `${kind === 'rebuild' ? REBUILD_RUN_PREFIX : ''}${newRunId(new Date(db.now()))}`;
  await db.run(
    `INSERT INTO _evsync.runs (run_id, kind, args, status, started_at, pid) VALUES (?, ?, ?, 'running', ?, ?)`,
    [runId, kind, json(args), utcNow(db.now), process.pid],
  );
  return runId;
}

export async function finishRun(db: Db, runId: string, s: RunSummary): Promise<void> {
  const changed = await db.run(
    `UPDATE _evsync.runs SET status = ?, finished_at = ?, credits = ?, requests = ?, waits_ms = ?, rejected_429 = ?,
       streams = ?, error = ? WHERE run_id = ?`,
    [
      s.status,
      timestampText(s.finishedAt) ?? utcNow(db.now),
      json(s.credits),
      Math.round(s.requests),
      Math.round(s.waitsMs),
      Math.round(s.rejected429),
      json(s.streams),
      s.error ?? null,
      runId,
    ],
  );
  if (changed === 0) throw new Error(`finishRun: no run ${runId} in _evsync.runs`);
}

/** A credit row (see CreditRow); the reading's time is the row's time, so the newest row is the newest reading. */
export async function recordCredits(db: Db, runId: string, row: CreditRow, counted = true): Promise<void> {
  const params = [
    runId,
    timestampText(row.seenAt.toISOString()),
    row.limit,
    row.remaining,
    row.resetAt ? timestampText(row.resetAt.toISOString()) : null,
    Math.round(row.spent),
    json(row.detail),
  ];
  const sql = `INSERT INTO _evsync.credits VALUES (?, ?, ?, ?, ?, ?, ?)`;
  // Readings while a run goes are bookkeeping no reader of the query copy waits for (not a change to copy again for).
  if (counted) await db.run(sql, params);
  else await db.runUncounted(sql, params);
}

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
