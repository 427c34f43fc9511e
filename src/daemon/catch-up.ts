/**
 * The catch-up a daemon owes, in one place: whether it is owed, since when (kept in `_evsync.meta` so that a daemon
 * killed before it completes owes it again, and `status` shows it), since when nothing listened, and whether a slice
 * of it ran in this process. The reconcile loop asks it what a run owes and tells it when a run of it completed; the
 * status document reads the mark through it. (It was once three flags: the loop's, the mark, the policy's.)
 */
import { systemNow } from '../../schemas/clock.js';
import { DAEMON_DEFAULTS } from '../../schemas/daemon-settings.js';
import type { Warehouse } from '../warehouse/index.js';

/** `_evsync.meta` key: when a catch-up started that has not completed yet (absent or empty when none is pending). */
export const CATCH_UP_MARK = 'daemon_catch_up_pending_since';

/** What the catch-up's slices are recorded as (`_evsync.runs.kind`): each resumes the last, whatever ran between. */
export const CATCH_UP_KIND = 'catch-up';

/**
 * The share of each window the catch-up leaves to everything else (the ticks' runs, webhook re-reads), of the limit
 * the service reports. A quarter: at the real limit (2,000 credits per 10 minutes) 500 credits, 50 list calls a
 * window: a tick of up to 50 scopes, or re-reads of some 3,000 changes (about 150 credits per 1,000). A bigger tick
 * (a `core` tick on `medium` polls 66 scopes) gets the quarter at once and the rest when the window resets. The
 * price is time, not credits: a catch-up that waits for windows gets three quarters of each, less what the ticks
 * take beyond the quarter (measured: the README's daemon section).
 */
export const CATCH_UP_LEAVES = DAEMON_DEFAULTS.catchUpLeaves;

/** Since when a catch-up has been owed in this warehouse (its mark), or null when none is. */
export async function catchUpPendingSince(warehouse: Warehouse): Promise<string | null> {
  return (await warehouse.marks.get(CATCH_UP_MARK)) || null;
}

export class CatchUp {
  private owed: boolean;
  /** Since when nothing listened (the previous daemon's last heartbeat), or null when no daemon ran here before. */
  private silence: number | null = null;
  /** A slice of the catch-up ran in this process: from now on each tick polls its own streams first. */
  private sliced = false;

  /** `wanted`: poll at start what may have been missed while nothing listened (`serve` without --no-catch-up). */
  constructor(
    private readonly warehouse: Warehouse,
    readonly wanted: boolean,
    private readonly now: () => number = systemNow,
  ) {
    this.owed = wanted;
  }

  /**
   * At start, given the previous daemon's last heartbeat (null when none ever ran here): a catch-up still pending
   * goes on (returned: since when), a wanted one is recorded as pending, and the silence is known from the earliest
   * of the two on (a catch-up owed since then covers it too).
   */
  async start(lastHeartbeat: Date | null): Promise<string | null> {
    const pending = await catchUpPendingSince(this.warehouse);
    if (pending) this.owed = true;
    else if (this.owed) await this.warehouse.marks.set(CATCH_UP_MARK, new Date(this.now()).toISOString());
    const times = [lastHeartbeat?.getTime(), pending ? Date.parse(pending) : undefined].filter(
      (t): t is number => t !== undefined && Number.isFinite(t),
    );
    this.silence = times.length ? Math.min(...times) : null;
    return pending;
  }

  /** Whether a catch-up is still owed. */
  get pending(): boolean {
    return this.owed;
  }

  /** Whether a daemon listened here before (its silence may have hidden deletes and lost deliveries). */
  get afterSilence(): boolean {
    return this.silence !== null;
  }

  /** Whether a slice of the catch-up already ran in this process. */
  get hasSliced(): boolean {
    return this.sliced;
  }

  /** A run ended; `slice`: it was one of the catch-up's. */
  ran(slice: boolean): void {
    this.sliced ||= slice;
  }

  /** A slice completed the catch-up: nothing is owed any more, here or at the next start. */
  async complete(): Promise<void> {
    this.owed = false;
    await this.warehouse.marks.set(CATCH_UP_MARK, '');
  }
}
