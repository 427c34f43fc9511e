/**
 * Where each walk stands (`Warehouse.cursors`): the cursor per stream and scope (watermark and open walk), and the
 * ids a snapshot or sweep walk has seen until it settles. Every method runs in the warehouse's one queue.
 */

import type { Db, ResultRow } from '../db/connection.js';
import type { CursorState, CursorWalk } from '../types.js';
import { num, str, tableExists } from './bookkeeping.js';
import { dropSeen } from './deletes.js';

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

async function saveCursor(db: Db, c: CursorState): Promise<void> {
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

async function getCursor(db: Db, stream: string, scope: string): Promise<CursorState | null> {
  const r = await db.query(`SELECT ${CURSOR_COLUMNS} FROM _evsync.cursors WHERE stream = ? AND scope = ?`, [
    stream,
    scope,
  ]);
  const row = r.rows[0];
  return row ? cursorFromRow(row) : null;
}

async function listCursors(db: Db): Promise<CursorState[]> {
  const r = await db.query(`SELECT ${CURSOR_COLUMNS} FROM _evsync.cursors ORDER BY stream, scope`);
  return r.rows.map(cursorFromRow);
}

export class Cursors {
  constructor(private readonly db: Db) {}

  save(cursor: CursorState): Promise<void> {
    return this.db.exclusive(() => saveCursor(this.db, cursor));
  }

  get(stream: string, scope: string): Promise<CursorState | null> {
    return this.db.exclusive(() => getCursor(this.db, stream, scope));
  }

  /** Every cursor; none in a file no sync has written to (a read-only open creates no bookkeeping). */
  list(): Promise<CursorState[]> {
    return this.db.exclusive(async () =>
      (await tableExists(this.db, '_evsync', 'cursors')) ? listCursors(this.db) : [],
    );
  }

  /** Drops seen ids of an abandoned walk (or of every walk of the scope). */
  dropSeen(stream: string, scope: string, walkId?: string): Promise<number> {
    return this.db.exclusive(() => dropSeen(this.db, stream, scope, walkId));
  }
}
