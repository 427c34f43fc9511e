/**
 * Deliveries waiting for credits: a re-read that does not fit the credit window (a reconciliation spent it) leaves
 * its deliveries pending. This says so (a log line when they start waiting and when they resume, the state
 * `/healthz`, `/metrics` and `status` show) and wakes the applier when credits are back: at once when an answer says
 * so (the ledger's `update`), else when the window resets.
 */

import { LIST_CALL_CREDITS } from '../../../connectors/service.js';
import type { Now } from '../../../schemas/clock.js';
import type { CreditLedger } from '../../api/index.js';
import { utcMs } from './time.js';

/** How soon waiting deliveries are looked at again when the window's reset is unknown. */
const UNKNOWN_RESET_RETRY_MS = 5_000;
/** Bounds of the wait for the window's reset (a reset estimate far off is checked again meanwhile). */
const MIN_RESET_WAIT_MS = 1_000;
const MAX_RESET_WAIT_MS = 60_000;

export interface WaitState {
  /** Whether deliveries wait for the credit window now. */
  waiting: boolean;
  /** Deliveries left pending because their re-read would not fit the window (0 when none waits). */
  pending: number;
  /** Seconds since the oldest of them was journaled; null when none waits. */
  oldestPendingSeconds: number | null;
  /** Since when deliveries wait; null when none does. */
  since: Date | null;
  /** Credits the client may spend in the window now (its ledger's estimate, after its reserve). */
  creditsRemaining: number;
  /** When the window resets (the ledger's estimate); null before any call. */
  resetAt: Date | null;
  /** Seconds until then (0 once past); null when unknown. */
  resetsInSeconds: number | null;
}

/** The state as one phrase: `waiting for credits (90 pending, oldest 240 s, window resets in 120 s)`, or `ok`. */
export function describeWait(w: WaitState): string {
  if (!w.waiting) return 'ok';
  const reset = w.resetsInSeconds === null ? 'window reset unknown' : `window resets in ${w.resetsInSeconds} s`;
  return `waiting for credits (${w.pending} pending, oldest ${w.oldestPendingSeconds ?? 0} s, ${reset})`;
}

export class CreditWait {
  private waiting: { since: number; pending: number; oldestMs: number | null } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly onLedger = (): void => {
    if (this.waiting && this.ledger.snapshot().remaining >= LIST_CALL_CREDITS) this.wake();
  };

  constructor(
    private readonly ledger: CreditLedger,
    private readonly now: Now,
    /** Makes the applier look at pending deliveries again. */
    private readonly wake: () => void,
    private readonly log?: (level: 'info', message: string) => void,
  ) {
    ledger.on('update', this.onLedger);
  }

  state(now = this.now()): WaitState {
    const ledger = this.ledger.snapshot();
    const w = this.waiting;
    const resetMs = ledger.resetAt?.getTime();
    return {
      waiting: w !== null,
      pending: w?.pending ?? 0,
      oldestPendingSeconds: w?.oldestMs == null ? null : Math.max(0, Math.round((now - w.oldestMs) / 1000)),
      since: w ? new Date(w.since) : null,
      creditsRemaining: ledger.remaining,
      resetAt: ledger.resetAt,
      resetsInSeconds: resetMs === undefined ? null : Math.max(0, Math.ceil((resetMs - now) / 1000)),
    };
  }

  /** What a batch left waiting: `deferred` deliveries, the oldest journaled at `oldest` (UTC text). */
  note(deferred: number, oldest: string | null): void {
    if (deferred === 0) {
      if (this.waiting) {
        const waited = Math.round((this.now() - this.waiting.since) / 1000);
        this.log?.('info', `deliveries resumed: credits are back after ${waited} s of waiting`);
      }
      this.waiting = null;
      return;
    }
    const first = this.waiting === null;
    this.waiting = { since: this.waiting?.since ?? this.now(), pending: deferred, oldestMs: utcMs(oldest) };
    const state = this.state();
    if (first) {
      const reset =
        state.resetAt === null
          ? 'the window reset is unknown'
          : `the window resets in ${state.resetsInSeconds} s (${state.resetAt.toISOString().slice(11, 19)} UTC)`;
      this.log?.(
        'info',
        `deliveries wait for credits: ${deferred} pending (their re-reads do not fit the window: ` +
          `${state.creditsRemaining} credits left); ${reset}`,
      );
    }
    if (this.timer) return;
    const resetMs = state.resetAt?.getTime();
    const wait =
      resetMs === undefined
        ? UNKNOWN_RESET_RETRY_MS
        : Math.min(MAX_RESET_WAIT_MS, Math.max(MIN_RESET_WAIT_MS, resetMs - this.now()));
    this.timer = setTimeout(() => {
      this.timer = null;
      this.wake();
    }, wait);
    this.timer.unref();
  }

  close(): void {
    this.ledger.off('update', this.onLedger);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
