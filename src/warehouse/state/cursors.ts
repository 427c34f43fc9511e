/**
 * Where each walk stands (`Warehouse.cursors`): the cursor per stream and scope (watermark and open walk), and the
 * ids a snapshot or sweep walk has seen until it settles. Every method runs in the warehouse's one queue.
 */

import type { Db } from '../db/connection.js';
import type { CursorState } from '../types.js';
import * as bookkeeping from './bookkeeping.js';
import { dropSeen } from './deletes.js';
import { tableExists } from './state.js';

export class Cursors {
  constructor(private readonly db: Db) {}

  save(cursor: CursorState): Promise<void> {
    return this.db.exclusive(() => bookkeeping.saveCursor(this.db, cursor));
  }

  get(stream: string, scope: string): Promise<CursorState | null> {
    return this.db.exclusive(() => bookkeeping.getCursor(this.db, stream, scope));
  }

  /** Every cursor; none in a file no sync has written to (a read-only open creates no bookkeeping). */
  list(): Promise<CursorState[]> {
    return this.db.exclusive(async () =>
      (await tableExists(this.db, '_evsync', 'cursors')) ? bookkeeping.listCursors(this.db) : [],
    );
  }

  /** Drops seen ids of an abandoned walk (or of every walk of the scope). */
  dropSeen(stream: string, scope: string, walkId?: string): Promise<number> {
    return this.db.exclusive(() => dropSeen(this.db, stream, scope, walkId));
  }
}
