/**
 * The runs' record (`Warehouse.runs`): each run's start and end, its progress while it runs, the credits its ledger
 * recorded, and the questions status and resume ask of past runs. Every method runs in the warehouse's one queue.
 */

import type { Db } from '../db/connection.js';
import type { CreditRow, RunSummary } from '../types.js';
import * as bookkeeping from './bookkeeping.js';
import * as state from './state.js';

/**
 * What the warehouse's load path does when a run ends, inside the queue before its end is recorded: closes the run's
 * load session if still open (Warehouse.openLoad) and merges what it left staged.
 */
type RunEnding = (runId: string) => Promise<void>;

export class RunLog {
  constructor(
    private readonly db: Db,
    private readonly ending: RunEnding,
  ) {}

  /**
   * Records a run as 'running'; returns its id (UTC start time + random suffix, sortable). How its pages load is
   * the load session's business (Warehouse.openLoad), not this record's.
   */
  start(kind: string, args: Record<string, unknown>): Promise<string> {
    return this.db.exclusive(() => bookkeeping.startRun(this.db, kind, args));
  }

  /** Records the run's end; merges what it left staged (its load session's finish should have, to count it). */
  finish(runId: string, summary: RunSummary): Promise<void> {
    return this.db.exclusive(async () => {
      await this.ending(runId);
      await bookkeeping.finishRun(this.db, runId, summary);
    });
  }

  /** A run's (or the daemon's) reading of the credit window; `counted: false` for the ones taken while answers come. */
  recordCredits(runId: string, row: CreditRow, options: { counted?: boolean } = {}): Promise<void> {
    return this.db.exclusive(() => bookkeeping.recordCredits(this.db, runId, row, options.counted !== false));
  }

  recordProgress(runId: string, progress: { credits: Record<string, number>; streams: Record<string, unknown> }) {
    return this.db.exclusive(() => state.recordRunProgress(this.db, runId, progress));
  }

  setResumable(runId: string, resumable: boolean): Promise<void> {
    return this.db.exclusive(() => state.setRunResumable(this.db, runId, resumable));
  }

  /** Runs a killed process left 'running' become 'interrupted', with the credits its ledger last recorded. */
  markInterrupted(runId: string): Promise<void> {
    return this.db.exclusive(async () =>
      state.markInterrupted(this.db, runId, await state.lastCreditSnapshot(this.db, runId)),
    );
  }

  /** Runs recorded as 'running' (this process's, or ones a killed process left). */
  running(): Promise<state.RunRecord[]> {
    return this.db.exclusive(() => state.runningRuns(this.db));
  }

  /** The newest runs first (all kinds unless `kind`). */
  recent(opts: { limit: number; kind?: string }): Promise<state.RunRecord[]> {
    return this.db.exclusive(() => state.recentRuns(this.db, opts));
  }

  /** The credit window as the service last reported it to any run or daemon here (the newest credit row). */
  lastLedger(): Promise<state.LedgerRecord | null> {
    return this.db.exclusive(() => state.lastLedger(this.db));
  }
}
