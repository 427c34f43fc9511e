/**
 * Marks in `_evsync.meta` (`Warehouse.marks`): small named values such as the demo's mark, the daemon's heartbeat
 * and its catch-up start. Every method runs in the warehouse's one queue.
 */
import type { Db } from '../db/connection.js';
import * as state from './state.js';

export class Marks {
  constructor(private readonly db: Db) {}

  /** The mark's value, null when absent. */
  get(key: string): Promise<string | null> {
    return this.db.exclusive(() => state.getMark(this.db, key));
  }

  set(key: string, value: string): Promise<void> {
    return this.db.exclusive(() => state.setMark(this.db, key, value));
  }

  /** A mark no reader needs at once (the daemon's heartbeat): not counted as a change (see `Db.runUncounted`). */
  setQuietly(key: string, value: string): Promise<void> {
    return this.db.exclusive(() => state.setMark(this.db, key, value, false));
  }
}
