/**
 * Streams recorded as not served by the service (`Warehouse.unavailable`): a 404 on the path, or a 403 on every
 * scope. A run skips them until the service serves them again. Every method runs in the warehouse's one queue.
 */
import type { Db } from '../db/connection.js';
import * as state from './state.js';

export class UnavailableStreams {
  constructor(private readonly db: Db) {}

  list(): Promise<state.UnavailableStream[]> {
    return this.db.exclusive(() => state.listUnavailable(this.db));
  }

  mark(input: { stream: string; path: string; status: number; detail: string | null; runId: string }) {
    return this.db.exclusive(() => state.markUnavailable(this.db, input));
  }

  /** Whether the stream was recorded (and now no longer is). */
  clear(stream: string): Promise<boolean> {
    return this.db.exclusive(() => state.clearUnavailable(this.db, stream));
  }
}
