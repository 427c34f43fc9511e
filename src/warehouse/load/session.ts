/**
 * A run's load session (`Warehouse.openLoad`): the explicit switch between the two ways a page loads. A page loaded
 * through an open session is staged (a file beside the database plus its row in `_evsync.staged`, committed with its
 * cursor) and merged into its table in batches, and the session collects what those merges did with its run's rows;
 * a page loaded outside any session (`Warehouse.loadPage` with a run id no session is open for: webhook deliveries,
 * one-off loads) is merged at once. Opening a run (`runs.start`) records it and nothing more.
 */
import type { LoadPageInput, LoadResult } from '../types.js';
import type { MergeCounts } from './merge-staged.js';

/** What a session asks of the warehouse that opened it (each call runs in the warehouse's one queue). */
interface LoadSessionHost {
  /** Loads the page: staged while the session is open, a stream's staged rows merged once they reach the batch. */
  load(input: LoadPageInput): Promise<LoadResult>;
  /** Closes the session of `runId`: merges every staged page and hands over its run's counts. */
  finish(runId: string): Promise<Record<string, MergeCounts>>;
}

export class LoadSession {
  constructor(
    readonly runId: string,
    private readonly host: LoadSessionHost,
  ) {}

  /** Loads one page of the session's run (see load.ts): staged with its cursor, its counts given by `finish`. */
  loadPage(input: LoadPageInput): Promise<LoadResult> {
    if (input.runId !== this.runId) {
      return Promise.reject(new Error(`a page of run ${input.runId} loaded through the session of run ${this.runId}`));
    }
    return this.host.load(input);
  }

  /**
   * The end of the run's loading: merges every staged page, then returns per stream what the run's rows did
   * (inserted, updated, unchanged) in the merges since the session opened. Pages of the run load at once afterwards.
   */
  finish(): Promise<Record<string, MergeCounts>> {
    return this.host.finish(this.runId);
  }
}
