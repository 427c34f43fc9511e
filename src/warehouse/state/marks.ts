/**
 * Marks in `_evsync.meta` (`Warehouse.marks`): small named values such as the demo's mark, the daemon's heartbeat
 * and its catch-up start. Every method runs in the warehouse's one queue.
 */
import type { Db } from '../db/connection.js';
import { str, tableExists } from './bookkeeping.js';

async function getMark(db: Db, key: string): Promise<string | null> {
  if (!(await tableExists(db, '_evsync', 'meta'))) return null;
  const r = await db.query(`SELECT value FROM _evsync.meta WHERE key = ?`, [key]);
  return str(r.rows[0]?.value);
}

async function setMark(db: Db, key: string, value: string, counted = true): Promise<void> {
  const sql = `INSERT OR REPLACE INTO _evsync.meta VALUES (?, ?)`;
  if (counted) await db.run(sql, [key, value]);
  else await db.runUncounted(sql, [key, value]);
}

export class Marks {
  constructor(private readonly db: Db) {}

  /** The mark's value, null when absent. */
  get(key: string): Promise<string | null> {
    return this.db.exclusive(() => getMark(this.db, key));
  }

  set(key: string, value: string): Promise<void> {
    return this.db.exclusive(() => setMark(this.db, key, value));
  }

  /** A mark no reader needs at once (the daemon's heartbeat): not counted as a change (see `Db.runUncounted`). */
  setQuietly(key: string, value: string): Promise<void> {
    return this.db.exclusive(() => setMark(this.db, key, value, false));
  }
}
