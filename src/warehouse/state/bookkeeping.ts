/**
 * The `_evsync` schema: what the warehouse knows about its own syncs. The tables below are declared here; state.ts,
 * journal.ts and publish-pending.ts declare theirs, and layout/ creates them all and migrates older layouts.
 *
 * _evsync.meta            key VARCHAR PK, value VARCHAR                      -- schema_version: the layout version
 * _evsync.runs            run_id VARCHAR PK, kind VARCHAR ('sync' | 'backfill' | ...), args JSON (the options the
 *                         run was started with), status VARCHAR ('running' until finished, then 'done' | 'partial' |
 *                         'failed'), started_at TIMESTAMP (UTC), finished_at TIMESTAMP, credits JSON (credits spent
 *                         by kind), requests BIGINT, waits_ms BIGINT, rejected_429 BIGINT, streams JSON (per stream:
 *                         inserted, updated, deleted, rejected, pages, errors), error VARCHAR, pid INTEGER,
 *                         resumable BOOLEAN (see state.ts)
 * _evsync.cursors         stream VARCHAR, scope VARCHAR (PK stream+scope; scope 'account', 'event:12', or what the
 *                         engine chooses, e.g. 'event:12/sweep'), watermark VARCHAR ('YYYY-MM-DD HH:MM:SS', the
 *                         committed high-water mark), walk_mode VARCHAR, walk_id VARCHAR, walk_from VARCHAR,
 *                         walk_to VARCHAR (the signpost), walk_last_key BIGINT (keyset position), walk_pages BIGINT,
 *                         walk_rows BIGINT (the open walk, all null when none), last_pages BIGINT, last_sweep_at
 *                         VARCHAR, updated_at VARCHAR. Times are kept as the engine wrote them (server clock).
 * _evsync.credits         run_id VARCHAR (the run, or `daemon` for what a daemon spent between runs), recorded_at
 *                         TIMESTAMP (UTC: when the service said it, the answer's arrival), credit_limit BIGINT,
 *                         remaining BIGINT, reset_at TIMESTAMP (X-Rate-Limit-Limit, -Remaining and the arrival plus
 *                         -Reset), spent BIGINT (credits spent since the previous row of the same process; rows before
 *                         readings were recorded as they came hold the run's total, one row per run), snapshot JSON
 *                         (the run's credits by kind so far, the client's window length)
 * _evsync.rejected        run_id VARCHAR, stream VARCHAR, scope VARCHAR, raw JSON (the record as received), reason
 *                         VARCHAR, rejected_at TIMESTAMP (UTC)
 * _evsync.schema_changes  changed_at TIMESTAMP (UTC), run_id VARCHAR (null for changes made by ensureTable), table_name
 *                         VARCHAR, column_name VARCHAR, change VARCHAR ('add_column' | 'widen' | 'skip_column': a field
 *                         kept out because its name clashes with a column's but for case), origin VARCHAR
 *                         ('definition': a column of the catalogue; 'evolution': a field the records carried),
 *                         from_type VARCHAR (null for add_column), to_type VARCHAR (evsync column types:
 *                         'bigint', 'text', 'decimal(12,2)', ...), reason VARCHAR
 * _evsync.seen            stream VARCHAR, scope VARCHAR, walk_id VARCHAR, id BIGINT: ids a snapshot or sweep walk
 *                         saw, until markMissing settles the walk
 * _evsync.custom_fields   table_name VARCHAR, column_name VARCHAR (PK both), label VARCHAR, updated_at TIMESTAMP:
 *                         labels of the `c_<id>` columns of the column-per-field shape; no longer written (the
 *                         custom-field views read the definitions tables), kept for warehouses that have it
 * _evsync.staged          seq BIGINT (from _evsync.staged_seq: merge order), stream VARCHAR, scope VARCHAR, file
 *                         VARCHAR (name in `<database>.stage/`), row_count BIGINT, page JSON (the file's columns with
 *                         their types, and the key), keys VARCHAR (the rows' keys as a JSON list, for a single
 *                         integer key), run_id VARCHAR, walk_id VARCHAR (the walk that read the page), staged_at
 *                         TIMESTAMP (UTC): pages committed with their cursor but not yet merged into their table
 *                         (see staged.ts)
 */
import type { Db, ResultRow } from '../db/connection.js';
import { duckJson, timestampText, utcNow } from '../db/sql.js';
import type { CreditRow, CursorState, CursorWalk, RunSummary } from '../types.js';

export const BOOKKEEPING_DDL = [
  `CREATE SCHEMA IF NOT EXISTS _evsync`,
  `CREATE SCHEMA IF NOT EXISTS analytics`,
  `CREATE TABLE IF NOT EXISTS _evsync.meta (key VARCHAR PRIMARY KEY, value VARCHAR)`,
  `CREATE TABLE IF NOT EXISTS _evsync.runs (
     run_id VARCHAR PRIMARY KEY, kind VARCHAR NOT NULL, args JSON, status VARCHAR NOT NULL,
     started_at TIMESTAMP NOT NULL, finished_at TIMESTAMP, credits JSON, requests BIGINT, waits_ms BIGINT,
     rejected_429 BIGINT, streams JSON, error VARCHAR, pid INTEGER, resumable BOOLEAN)`,
  `CREATE TABLE IF NOT EXISTS _evsync.cursors (
     stream VARCHAR NOT NULL, scope VARCHAR NOT NULL, watermark VARCHAR,
     walk_mode VARCHAR, walk_id VARCHAR, walk_from VARCHAR, walk_to VARCHAR, walk_last_key BIGINT,
     walk_pages BIGINT, walk_rows BIGINT, last_pages BIGINT, last_sweep_at VARCHAR, updated_at VARCHAR,
     PRIMARY KEY (stream, scope))`,
  `CREATE TABLE IF NOT EXISTS _evsync.credits (
     run_id VARCHAR, recorded_at TIMESTAMP NOT NULL, credit_limit BIGINT, remaining BIGINT, reset_at TIMESTAMP,
     spent BIGINT, snapshot JSON)`,
  `CREATE TABLE IF NOT EXISTS _evsync.rejected (
     run_id VARCHAR, stream VARCHAR NOT NULL, scope VARCHAR, raw JSON, reason VARCHAR, rejected_at TIMESTAMP NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS _evsync.schema_changes (
     changed_at TIMESTAMP NOT NULL, run_id VARCHAR, table_name VARCHAR NOT NULL, column_name VARCHAR NOT NULL,
     change VARCHAR NOT NULL, origin VARCHAR NOT NULL, from_type VARCHAR, to_type VARCHAR NOT NULL, reason VARCHAR)`,
  `CREATE TABLE IF NOT EXISTS _evsync.seen (stream VARCHAR NOT NULL, scope VARCHAR NOT NULL, walk_id VARCHAR NOT NULL,
     id BIGINT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS _evsync.custom_fields (
     table_name VARCHAR NOT NULL, column_name VARCHAR NOT NULL, label VARCHAR NOT NULL, updated_at TIMESTAMP,
     PRIMARY KEY (table_name, column_name))`,
  `CREATE SEQUENCE IF NOT EXISTS _evsync.staged_seq`,
  `CREATE TABLE IF NOT EXISTS _evsync.staged (
     seq BIGINT NOT NULL, stream VARCHAR NOT NULL, scope VARCHAR NOT NULL, file VARCHAR NOT NULL,
     row_count BIGINT NOT NULL, page JSON NOT NULL, keys VARCHAR, run_id VARCHAR, walk_id VARCHAR,
     staged_at TIMESTAMP NOT NULL)`,
];

// ---------------------------------------------------------------------------------------------------------------
// runs and credits

/** A sortable, unique run id: UTC start time plus a random suffix (two runs may start in the same second). */
export function newRunId(now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const suffix = Math.floor(Math.random() * 0x1000000)
    .toString(16)
    .padStart(6, '0');
  return `${stamp}-${suffix}`;
}

function json(value: unknown): string {
  try {
    return duckJson(value ?? null);
  } catch {
    // BigInt or a cycle: keep something readable rather than failing the bookkeeping write.
    return JSON.stringify(String(value));
  }
}

export async function startRun(db: Db, kind: string, args: Record<string, unknown>): Promise<string> {
  const runId = newRunId(new Date(db.now()));
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

// ---------------------------------------------------------------------------------------------------------------
// cursors

const CURSOR_COLUMNS = `stream, scope, watermark, walk_mode, walk_id, walk_from, walk_to, walk_last_key, walk_pages,
  walk_rows, last_pages, last_sweep_at, updated_at`;

const SAVE_CURSOR_SQL = `INSERT OR REPLACE INTO _evsync.cursors
  (stream, scope, watermark, walk_mode, walk_id, walk_from, walk_to, walk_last_key, walk_pages, walk_rows,
   last_pages, last_sweep_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

function cursorParams(c: CursorState): unknown[] {
  const w = c.walk;
  return [
    c.stream,
    c.scope,
    c.watermark,
    w?.mode ?? null,
    w?.walkId ?? null,
    w?.from ?? null,
    w?.to ?? null,
    w?.lastKey ?? null,
    w ? w.pages : null,
    w ? w.rows : null,
    c.lastPages,
    c.lastSweepAt,
    c.updatedAt,
  ];
}

export async function saveCursor(db: Db, c: CursorState): Promise<void> {
  await db.run(SAVE_CURSOR_SQL, cursorParams(c));
}

const UPDATE_CURSOR_SQL = `UPDATE _evsync.cursors SET watermark = $3, walk_mode = $4, walk_id = $5, walk_from = $6,
  walk_to = $7, walk_last_key = $8, walk_pages = $9, walk_rows = $10, last_pages = $11, last_sweep_at = $12,
  updated_at = $13 WHERE stream = $1 AND scope = $2`;

/**
 * The per-page cursor write: an UPDATE of the existing row (prepared once), an INSERT only the first time.
 * INSERT OR REPLACE on the keyed table costs ~10x as much, which matters once per page.
 */
export async function saveCursorFast(db: Db, c: CursorState): Promise<void> {
  const values = cursorParams(c);
  if ((await db.runPrepared(UPDATE_CURSOR_SQL, values)) === 0) await db.runPrepared(SAVE_CURSOR_SQL, values);
}

function num(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

function str(v: unknown): string | null {
  return v === null || v === undefined ? null : String(v);
}

function cursorFromRow(r: ResultRow): CursorState {
  const walk: CursorWalk | null =
    r.walk_mode === null || r.walk_mode === undefined
      ? null
      : {
          mode: String(r.walk_mode) as CursorWalk['mode'],
          walkId: String(r.walk_id ?? ''),
          from: str(r.walk_from),
          to: str(r.walk_to),
          lastKey: num(r.walk_last_key),
          pages: num(r.walk_pages) ?? 0,
          rows: num(r.walk_rows) ?? 0,
        };
  return {
    stream: String(r.stream),
    scope: String(r.scope),
    watermark: str(r.watermark),
    walk,
    lastPages: num(r.last_pages),
    lastSweepAt: str(r.last_sweep_at),
    updatedAt: String(r.updated_at ?? ''),
  };
}

export async function getCursor(db: Db, stream: string, scope: string): Promise<CursorState | null> {
  const r = await db.query(`SELECT ${CURSOR_COLUMNS} FROM _evsync.cursors WHERE stream = ? AND scope = ?`, [
    stream,
    scope,
  ]);
  const row = r.rows[0];
  return row ? cursorFromRow(row) : null;
}

export async function listCursors(db: Db): Promise<CursorState[]> {
  const r = await db.query(`SELECT ${CURSOR_COLUMNS} FROM _evsync.cursors ORDER BY stream, scope`);
  return r.rows.map(cursorFromRow);
}

// ---------------------------------------------------------------------------------------------------------------
// rejected records

function rawJson(raw: unknown): string {
  if (raw === undefined) return 'null';
  return json(raw);
}

export async function recordRejected(
  db: Db,
  runId: string,
  stream: string,
  scope: string,
  rejected: readonly { raw: unknown; reason: string }[],
): Promise<void> {
  if (rejected.length === 0) return;
  const at = utcNow(db.now);
  // One statement for the whole list (usually a handful): a JSON array of [raw, reason] pairs unnested in SQL.
  const payload = duckJson(rejected.map((r) => [rawJson(r.raw), String(r.reason)]));
  // A record rejected again on a later run (the same raw JSON for the same reason in the same scope) is kept once.
  await db.run(
    `INSERT INTO _evsync.rejected (run_id, stream, scope, raw, reason, rejected_at)
     SELECT DISTINCT ?, ?, ?, CAST(p->>0 AS JSON), p->>1, CAST(? AS TIMESTAMP)
       FROM (SELECT unnest(CAST(CAST(? AS JSON) AS JSON[])) AS p) AS page
      WHERE NOT EXISTS (SELECT 1 FROM _evsync.rejected r WHERE r.stream = ? AND r.scope IS NOT DISTINCT FROM ?
                          AND r.reason = (page.p->>1) AND CAST(r.raw AS VARCHAR) = CAST(CAST(page.p->>0 AS JSON) AS VARCHAR))`,
    [runId, stream, scope, at, payload, stream, scope],
  );
}
