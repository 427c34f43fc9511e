/**
 * Credit lanes. A call is interactive unless it says it is bulk work (a daemon's catch-up): a bulk call waits rather
 * than take the last share of a window, and an interactive call never waits behind a bulk one. One credential's
 * window is shared by everything the process does (the catch-up, the scheduled ticks, webhook re-reads), and served
 * first come first served a catch-up of many windows took every one of them: ticks were skipped and re-reads waited
 * for the catch-up's windows. With the bulk work in its lane, every window keeps a share for the rest, however long the
 * bulk work is.
 *
 * A bulk lane can also close (its `closes` signal): what it has waiting is refused, nothing of it is granted any
 * more, and its calls already sent are answered and kept. Work stopped that way stops after its pages in flight, with
 * nothing bought twice (aborting the calls instead would throw away pages the service has already charged for).
 */
import { BudgetExhaustedError } from './errors.js';

export interface BulkLane {
  /** What the work is, for log lines and refusals (`the catch-up`). */
  name: string;
  /**
   * Share of each window's limit, as the service reports it (`X-Rate-Limit-Limit`), that a bulk call leaves to other
   * calls: it is granted only while `remaining - reserve - ceil(limit × leaveShare)` still covers its cost.
   */
  leaveShare: number;
  /** Closes the lane when it aborts; its reason (a string) says why, in the refusal. */
  closes?: AbortSignal | undefined;
}

/** Refuses a share that would leave nothing to the bulk work, or nothing to the others. */
export function checkLane(lane: BulkLane): void {
  if (!(lane.leaveShare > 0 && lane.leaveShare < 1)) {
    throw new RangeError(`${lane.name}: leaveShare must be > 0 and < 1, got ${lane.leaveShare}`);
  }
}

/** Credits a call leaves to the others in a window of `limit`: none for an interactive call. */
export function leftToOthers(lane: BulkLane | undefined, limit: number): number {
  return lane ? Math.ceil(limit * lane.leaveShare) : 0;
}

export function isClosed(lane: BulkLane | undefined): boolean {
  return lane?.closes?.aborted === true;
}

/** The refusal of a call of a closed lane: a stop on the budget's terms (the engine saves state, the run is partial). */
export function closedLaneError(
  lane: BulkLane,
  call: { method: string; path: string; cost: number; remaining: number },
): BudgetExhaustedError {
  const reason = lane.closes?.reason;
  const why = typeof reason === 'string' ? reason : 'its lane closed';
  return new BudgetExhaustedError(`${lane.name} stopped: ${why}`, {
    method: call.method,
    path: call.path,
    reason: 'lane-closed',
    resetAt: null,
    needed: call.cost,
    remaining: call.remaining,
  });
}
