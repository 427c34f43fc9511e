/**
 * The runs' record (`Warehouse.runs`): each run's start and end, its progress while it runs, the credits its ledger
 * recorded, and the questions status and resume ask of past runs. Every method runs in the warehouse's one queue.
 */

import type { Db } from '../db/connection.js';
import type { CreditRow, RunSummary } from '../types.js';
import * as runs from './runs-sql.js';

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
    return this.db.exclusive(() => runs.startRun(this.db, kind, args));
  }

  /** Records the run's end; merges what it left staged (its load session's finish should have, to count it). */
  finish(runId: string, summary: RunSummary): Promise<void> {
    return this.db.exclusive(async () => {
      await this.ending(runId);
      await runs.finishRun(this.db, runId, summary);
    });
  }

  /** A run's (or the daemon's) reading of the credit window; `counted: false` for the ones taken while answers come. */
  recordCredits(runId: string, row: CreditRow, options: { counted?: boolean } = {}): Promise<void> {
    return this.db.exclusive(() => runs.recordCredits(this.db, runId, row, options.counted !== false));
  }

  recordProgress(runId: string, progress: { credits: Record<string, number>; streams: Record<string, unknown> }) {
    return this.db.exclusive(() => runs.recordRunProgress(this.db, runId, progress));
  }

  setResumable(runId: string, resumable: boolean): Promise<void> {
    return this.db.exclusive(() => runs.setRunResumable(this.db, runId, resumable));
  }

  /** Runs a killed process left 'running' become 'interrupted', with the credits its ledger last recorded. */
  markInterrupted(runId: string): Promise<void> {
    return this.db.exclusive(async () =>
      runs.markInterrupted(this.db, runId, await runs.lastCreditSnapshot(this.db, runId)),
    );
  }

  /** Runs recorded as 'running' (this process's, or ones a killed process left). */
  running(): Promise<runs.RunRecord[]> {
    return this.db.exclusive(() => runs.runningRuns(this.db));
  }

  /** The newest runs first (all kinds unless `kind`). */
  recent(opts: { limit: number; kind?: string }): Promise<runs.RunRecord[]> {
    return this.db.exclusive(() => runs.recentRuns(this.db, opts));
  }

  /** The credit window as the service last reported it to any run or daemon here (the newest credit row). */
  lastLedger(): Promise<runs.LedgerRecord | null> {
    return this.db.exclusive(() => runs.lastLedger(this.db));
  }
}
