import { EventEmitter } from 'node:events';
import { LIST_CALL_CREDITS, OTHER_CALL_CREDITS } from '../../connectors/service.js';
import { systemNow } from '../../schemas/clock.js';
import { BudgetExhaustedError } from './errors.js';
import { type BulkLane, checkLane, closedLaneError, isClosed, leftToOthers } from './lane.js';

/** What a call is charged as: a list call, or any other (the token call too); their costs are service facts. */
export type CreditKind = 'list' | 'other' | 'token';
/** What a call costs (connectors/service.ts). */
export function costOf(kind: CreditKind): number {
  return kind === 'list' ? LIST_CALL_CREDITS : OTHER_CALL_CREDITS;
}

/** A `X-Rate-Limit-Reset` beyond this is absurd and ignored (the configured window is used instead). */
const MAX_RESET_SECONDS = 86_400;
/** A 429 that says "reset in 0 s" still gets this pause, so a confused server cannot make us spin. */
const MIN_429_PAUSE_MS = 50;

interface LedgerOptions {
  limit: number;
  windowMs: number;
  reserveCredits?: number;
  runBudget?: number | null;
  now?: () => number;
}

export interface RateLimitHeaders {
  limit?: number | undefined;
  remaining?: number | undefined;
  resetSeconds?: number | undefined;
}

/** Credits held for one call from before it is sent until its answer (or its refund). */
export interface Reservation {
  readonly id: number;
  readonly cost: number;
  readonly kind: CreditKind;
  /** The run (startRun) its credits are counted in: a refund after the next run started is not taken from that one. */
  readonly run: number;
  /** The ledger window it was charged to; an answer to an older window's call cannot lower this window's count. */
  windowId: number;
  /** Cost of this window's answers received before it was sent: those calls were surely processed before it. */
  answeredAtSend: number;
  open: boolean;
}

export interface LedgerSnapshot {
  limit: number;
  /** Credits this process may still spend in the window without waiting: after in-flight calls and the reserve. */
  remaining: number;
  /** Estimated window reset (server-rounded seconds tightened over answers); null before the first call. */
  resetAt: Date | null;
  /** Milliseconds until `resetAt` on the ledger's own clock (null with it): what a caller on another clock uses. */
  resetInMs: number | null;
  /** `reported` once an answer's X-Rate-Limit-Limit set `limit`; `configured` while it is the configured value. */
  limitSource: 'reported' | 'configured';
  spent: { list: number; other: number; token: number };
  waitedMs: number;
  rejected429: number;
  runBudgetLeft: number | null;
  /** Credits reserved by calls not answered yet. */
  inFlight: number;
  windowMs: number;
}

export interface WaitEvent {
  ms: number;
  until: Date;
  /** `share`: only bulk work waits, for the share of the window it leaves to other calls (see lane.ts). */
  reason: 'window' | '429' | 'share';
  /** With `share`: the bulk work that waits, and what it leaves of the window's limit. */
  lane?: { name: string; leave: number; limit: number };
}

/**
 * The credit window as the service last reported it: the `X-Rate-Limit-*` headers of the latest answer that carried
 * them (a 429's too), with when that answer arrived. Not the ledger's estimate: no call in flight, reserve or local
 * roll-over is counted in, so every reader (status, the page, `/metrics`) can say exactly what the service said.
 */
export interface LimitReading {
  /** X-Rate-Limit-Limit (the ledger's limit when the answer did not say). */
  limit: number;
  /** X-Rate-Limit-Remaining. */
  remaining: number;
  /** When the window resets: the answer's arrival plus X-Rate-Limit-Reset; null when the answer had no usable Reset. */
  resetAt: Date | null;
  /** When the answer arrived. */
  seenAt: Date;
}

/** Calls of this ledger waiting for credits now: since when, until the reset expected, and why. */
export interface LedgerWait {
  since: Date;
  /** The reset the ledger waits for (its estimate); null when unknown. */
  until: Date | null;
  reason: 'window' | '429';
  /** Calls queued. */
  calls: number;
}

interface AcquireOptions {
  method: string;
  path: string;
  signal?: AbortSignal | undefined;
  /** How much longer this call may wait for a window reset; Infinity when unbounded. */
  maxWaitMs?: number;
  /** Jump the queue (the token call: every queued call needs it). */
  priority?: boolean;
  /** Bulk work (lane.ts): waits while it would take the share it leaves to others; interactive calls pass it. */
  lane?: BulkLane | undefined;
}

interface Waiter {
  cost: number;
  kind: CreditKind;
  opts: AcquireOptions;
  deadline: number;
  resolve: (r: Reservation) => void;
  reject: (e: unknown) => void;
  cleanup: () => void;
}

type LedgerEvents = { wait: [WaitEvent]; update: []; reading: [LimitReading] };

/**
 * The credit ledger of one credential. Credits are reserved before a call is sent, so concurrent calls never
 * overshoot; each answer's `X-Rate-Limit-*` headers then correct the count, because another process may share the
 * credential and the server's window is the truth.
 *
 * `remaining` here is the server's remaining minus our unanswered calls. An answer's Remaining R says how many were
 * left after that call; our calls still unanswered may or may not be in it, so the truth lies in [R - U, R] where U
 * bounds the cost of our calls possibly processed after it. The count is clamped into that interval: exact when the
 * process is alone, lowered when someone else spends, raised when the server charged less or its window rolled.
 *
 * Calls that do not fit wait in one queue, first come first served (the token call first), except bulk work
 * (lane.ts): it waits behind everyone and keeps its share of the window free, and interactive calls pass it.
 */
export class CreditLedger extends EventEmitter<LedgerEvents> {
  limit: number;
  readonly windowMs: number;
  readonly reserveCredits: number;
  readonly runBudget: number | null;
  private readonly now: () => number;

  private remaining: number;
  private resetAt: number | null = null;
  /**
   * Where resetAt came from. `guess`: first grant + window. `answer`: first answer's receive time + window (an upper
   * bound whether the server's windows are periodic or start at the first call; used when Reset is missing).
   * `header`: min over this window's answers of receive time + Reset. A header replaces a guess, then tightens.
   */
  private resetSource: 'guess' | 'answer' | 'header' = 'guess';
  private windowId = 0;
  private reservedInWindow = 0;
  private answeredInWindow = 0;
  private readonly inflight = new Set<Reservation>();
  private readonly spentBy = { list: 0, other: 0, token: 0 };
  private waited = 0;
  private waitingSince: number | null = null;
  private announcedUntil: number | null = null;
  private announcedReason: WaitEvent['reason'] | null = null;
  private blockReason: 'window' | '429' = 'window';
  private rejected = 0;
  private limitReported = false;
  private waiters: Waiter[] = [];
  private timer: NodeJS.Timeout | null = null;
  private nextId = 1;
  private run = 0;
  private lastReading: LimitReading | null = null;
  /** Credits spent through this ledger since it was made: unlike `spent`, never restarted by startRun. */
  private spentEver = 0;

  constructor(options: LedgerOptions) {
    super();
    if (!(options.limit > 0) || !(options.windowMs > 0))
      throw new RangeError('rateLimit: limit and windowMs must be > 0');
    this.limit = options.limit;
    this.windowMs = options.windowMs;
    this.reserveCredits = Math.max(0, options.reserveCredits ?? 0);
    this.runBudget = options.runBudget ?? null;
    this.now = options.now ?? systemNow;
    this.remaining = this.limit;
  }

  get spentTotal(): number {
    return this.spentBy.list + this.spentBy.other + this.spentBy.token;
  }

  get rejected429(): number {
    return this.rejected;
  }

  /** Credits spent through this ledger since it was made (startRun does not restart it): a recorder's running count. */
  get spentSinceCreated(): number {
    return this.spentEver;
  }

  /** The window as the service last reported it (null before any answer carried the headers); see LimitReading. */
  reading(): LimitReading | null {
    return this.lastReading;
  }

  /** Whether calls wait for credits now, since when and until when; null when none does. */
  waiting(): LedgerWait | null {
    if (this.waiters.length === 0 || this.waitingSince === null) return null;
    return {
      since: new Date(this.waitingSince),
      until: this.resetAt === null ? null : new Date(this.resetAt),
      reason: this.blockReason,
      calls: this.waiters.length,
    };
  }

  /**
   * Starts a new run on this ledger (a daemon reusing one client across runs): spending, waits and 429 counts, and
   * with them the run budget, start again from 0; the window (credits left, reset time) is kept: it is the
   * service's, not the run's. Calls in flight meanwhile (a daemon's webhook re-reads share the client) stay counted
   * in the run they were reserved in.
   */
  startRun(): void {
    this.run += 1;
    this.spentBy.list = 0;
    this.spentBy.other = 0;
    this.spentBy.token = 0;
    this.waited = 0;
    this.rejected = 0;
  }

  snapshot(): LedgerSnapshot {
    this.roll();
    const now = this.now();
    let inFlight = 0;
    for (const r of this.inflight) inFlight += r.cost;
    return {
      limit: this.limit,
      remaining: Math.max(0, this.remaining - this.reserveCredits),
      resetAt: this.resetAt === null ? null : new Date(this.resetAt),
      resetInMs: this.resetAt === null ? null : Math.max(0, this.resetAt - now),
      limitSource: this.limitReported ? 'reported' : 'configured',
      spent: { ...this.spentBy },
      waitedMs: this.waited + (this.waitingSince === null ? 0 : now - this.waitingSince),
      rejected429: this.rejected,
      runBudgetLeft: this.runBudget === null ? null : Math.max(0, this.runBudget - this.spentTotal),
      inFlight,
      windowMs: this.windowMs,
    };
  }

  /**
   * Reserves the credits for one call, waiting for the window to reset when they do not fit. Rejects with
   * BudgetExhaustedError when the run budget would be exceeded or the reset is further away than `maxWaitMs`.
   */
  acquire(kind: CreditKind, opts: AcquireOptions): Promise<Reservation> {
    const cost = costOf(kind);
    if (opts.signal?.aborted) return Promise.reject(opts.signal.reason);
    if (opts.lane) checkLane(opts.lane);
    this.roll();
    const refusal = this.refusal(cost, opts);
    if (refusal) return Promise.reject(refusal);
    if ((opts.priority || !this.queuedAhead(opts.lane)) && this.fits(cost, opts.lane))
      return Promise.resolve(this.grant(kind));

    const now = this.now();
    const until = this.resetAt ?? now + this.windowMs;
    const maxWait = opts.maxWaitMs ?? Number.POSITIVE_INFINITY;
    if (until - now > maxWait) return Promise.reject(this.maxWaitError(cost, opts, until));

    return new Promise<Reservation>((resolve, reject) => {
      const deadline = now + maxWait;
      let deadlineTimer: NodeJS.Timeout | null = null;
      const onAbort = () => {
        this.dropWaiter(waiter);
        reject(opts.signal?.reason);
      };
      // A closed lane refuses what it has waiting at once (its work stops), not at the next answer or reset.
      const onClose = () => {
        this.dropWaiter(waiter);
        reject(this.refusal(cost, opts));
      };
      const waiter: Waiter = {
        cost,
        kind,
        opts,
        deadline,
        resolve,
        reject,
        cleanup: () => {
          opts.signal?.removeEventListener('abort', onAbort);
          opts.lane?.closes?.removeEventListener('abort', onClose);
          if (deadlineTimer) clearTimeout(deadlineTimer);
        },
      };
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      opts.lane?.closes?.addEventListener('abort', onClose, { once: true });
      if (Number.isFinite(deadline)) {
        // Backstop: the reset estimate may move past the deadline without any answer arriving to notice it.
        deadlineTimer = setTimeout(
          () => {
            if (!this.waiters.includes(waiter)) return;
            this.dropWaiter(waiter);
            reject(this.maxWaitError(cost, opts, this.resetAt ?? this.now() + this.windowMs));
          },
          Math.max(0, deadline - now),
        );
      }
      if (opts.priority) this.waiters.unshift(waiter);
      else this.waiters.push(waiter);
      this.pump();
    });
  }

  /** Records the moment a reserved call is actually dispatched (it may have waited for a token meanwhile). */
  markSent(r: Reservation): void {
    r.answeredAtSend = r.windowId === this.windowId ? this.answeredInWindow : 0;
  }

  /** Gives the credits back: the call never reached the server (aborted, refused connection, no token). */
  release(r: Reservation): void {
    if (!r.open) return;
    r.open = false;
    this.inflight.delete(r);
    if (r.run === this.run) this.spentBy[r.kind] -= r.cost;
    this.spentEver -= r.cost;
    this.remaining += r.cost;
    this.reservedInWindow -= r.cost;
    this.pump();
  }

  /** An answer arrived (any status but 429): correct the count from its headers. */
  settle(r: Reservation, h: RateLimitHeaders, receivedAt: number): void {
    this.applyAnswer(r, h, receivedAt);
    this.pump();
  }

  /** An answer whose rate headers say nothing about this credential (a 401: no credential identified). */
  settleUncharged(r: Reservation): void {
    this.release(r);
  }

  /**
   * A 429. The rejected call is not counted as spent (the server refuses before charging).
   * - Remaining says the credits are gone (or is missing): nothing more is sent until the reset the answer announces
   *   (without a usable Reset: `fallbackMs`); `blocked` is true and the next acquire waits for it.
   * - Remaining says credits are left: a transient refusal (overload), not the budget. Waiting for the window would
   *   waste it; the caller pauses `transientMs` instead (`blocked` false).
   */
  rateLimited(
    r: Reservation,
    h: RateLimitHeaders,
    receivedAt: number,
    backoff: { fallbackMs: number; transientMs: number },
  ): { until: Date; blocked: boolean } {
    this.applyAnswer(r, h, receivedAt);
    if (r.run === this.run) this.spentBy[r.kind] -= r.cost;
    this.spentEver -= r.cost;
    this.rejected += 1;
    const R = h.remaining;
    if (R !== undefined && Number.isFinite(R) && R - this.reserveCredits >= r.cost) {
      this.pump();
      return { until: new Date(this.now() + backoff.transientMs), blocked: false };
    }
    this.remaining = Math.min(this.remaining, 0);
    const s = validReset(h.resetSeconds);
    this.resetAt = s === null ? this.now() + backoff.fallbackMs : receivedAt + Math.max(s * 1000, MIN_429_PAUSE_MS);
    this.resetSource = s === null ? 'answer' : 'header';
    this.blockReason = '429';
    this.announcedUntil = null;
    this.pump();
    return { until: new Date(this.resetAt), blocked: true };
  }

  /** Time a caller spent pausing outside the queue (a transient 429), for the waited total. */
  noteWait(ms: number): void {
    this.waited += Math.max(0, ms);
  }

  /** Stops timers and fails queued calls; for client shutdown. */
  close(reason: unknown): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) {
      w.cleanup();
      w.reject(reason);
    }
    this.endWaiting();
  }

  private applyAnswer(reservation: Reservation, headers: RateLimitHeaders, receivedAt: number): void {
    if (!reservation.open) return;
    reservation.open = false;
    this.inflight.delete(reservation);
    const read = this.noteReading(headers, receivedAt);
    const current = reservation.windowId === this.windowId;
    if (current) this.answeredInWindow += reservation.cost;
    if (headers.limit !== undefined && Number.isInteger(headers.limit) && headers.limit > 0) {
      this.limit = headers.limit;
      this.limitReported = true;
    }
    const resetSeconds = validReset(headers.resetSeconds);
    const candidate = resetSeconds === null ? null : receivedAt + resetSeconds * 1000;

    const serverRemaining = headers.remaining;
    if (serverRemaining !== undefined && Number.isFinite(serverRemaining) && serverRemaining >= 0) {
      // Calls of ours that the server may have processed after this one (not counted in serverRemaining yet).
      const base = current ? reservation.answeredAtSend : 0;
      const uMax = Math.max(0, this.reservedInWindow - base - reservation.cost);
      if (serverRemaining - uMax > this.remaining) {
        // More credits than our bookkeeping allows: the window rolled on the server's side, or it charged less.
        const serverRolled =
          candidate !== null &&
          this.resetAt !== null &&
          this.resetSource === 'header' &&
          candidate > this.resetAt + this.windowMs / 2;
        if (serverRolled) {
          this.startWindow(candidate, true);
          this.remaining = serverRemaining - this.inflightCost();
        } else {
          this.remaining = serverRemaining - uMax;
        }
      } else if (current && serverRemaining < this.remaining) {
        // Fewer than we think: another process is spending on this credential.
        this.remaining = serverRemaining;
      }
    }
    // An older window's answer may carry that window's reset: only this window's answers tighten the estimate.
    if (reservation.windowId === this.windowId) {
      if (candidate !== null) {
        if (this.resetAt === null || this.resetSource !== 'header' || candidate < this.resetAt)
          this.resetAt = candidate;
        this.resetSource = 'header';
      } else if (this.resetSource === 'guess') {
        this.resetAt = receivedAt + this.windowMs;
        this.resetSource = 'answer';
      }
    }
    this.emit('update');
    if (read) this.emit('reading', read);
  }

  /**
   * Keeps what the latest answer said (answers of concurrent calls may arrive out of order: the last to arrive wins);
   * returns it when it is new, for the `reading` event (emitted once the answer is applied).
   */
  private noteReading(headers: RateLimitHeaders, receivedAt: number): LimitReading | null {
    const remaining = headers.remaining;
    if (remaining === undefined || !Number.isFinite(remaining) || remaining < 0) return null;
    if (this.lastReading && receivedAt < this.lastReading.seenAt.getTime()) return null;
    const limit =
      headers.limit !== undefined && Number.isInteger(headers.limit) && headers.limit > 0 ? headers.limit : null;
    const reset = validReset(headers.resetSeconds);
    this.lastReading = {
      limit: limit ?? this.limit,
      remaining,
      resetAt: reset === null ? null : new Date(receivedAt + reset * 1000),
      seenAt: new Date(receivedAt),
    };
    return this.lastReading;
  }

  private inflightCost(): number {
    let sum = 0;
    for (const r of this.inflight) sum += r.cost;
    return sum;
  }

  /** Opens a new window. Calls still in flight are charged to it: the server may process them after its reset. */
  private startWindow(resetAt: number | null, fromHeader: boolean): void {
    this.windowId += 1;
    this.resetAt = resetAt;
    this.resetSource = fromHeader && resetAt !== null ? 'header' : 'guess';
    const carried = this.inflightCost();
    this.remaining = this.limit - carried;
    this.reservedInWindow = carried;
    this.answeredInWindow = 0;
    this.blockReason = 'window';
    this.announcedUntil = null;
  }

  /** Time-based rollover: the estimate is never early when the server rounds Reset up, so past it, credits are back. */
  private roll(): void {
    if (this.resetAt === null || this.now() < this.resetAt) return;
    // The next reset is unknown until an answer says: set on the first grant (an upper bound) or by a header.
    this.startWindow(null, false);
    this.emit('update');
  }

  /** Whether a call of `lane` would fit now: a bulk call leaves its share of the window to the others. */
  private fits(cost: number, lane?: BulkLane): boolean {
    return this.remaining - this.reserveCredits - leftToOthers(lane, this.limit) >= cost;
  }

  /** Whether a new call must queue behind waiters: a bulk call behind every one, an interactive one behind its own. */
  private queuedAhead(lane: BulkLane | undefined): boolean {
    return lane ? this.waiters.length > 0 : this.waiters.some((w) => !w.opts.lane);
  }

  private refusal(cost: number, opts: AcquireOptions): BudgetExhaustedError | null {
    if (opts.lane && isClosed(opts.lane)) {
      const remaining = Math.max(0, this.remaining - this.reserveCredits);
      return closedLaneError(opts.lane, { method: opts.method, path: opts.path, cost, remaining });
    }
    if (this.runBudget !== null && this.spentTotal + cost > this.runBudget) {
      const left = Math.max(0, this.runBudget - this.spentTotal);
      return new BudgetExhaustedError(
        `run budget of ${this.runBudget} credits reached (${left} left, the call needs ${cost})`,
        {
          method: opts.method,
          path: opts.path,
          reason: 'run-budget',
          resetAt: this.resetAt === null ? null : new Date(this.resetAt),
          needed: cost,
          remaining: left,
        },
      );
    }
    const held = this.reserveCredits + leftToOthers(opts.lane, this.limit);
    if (cost > this.limit - held) {
      return new BudgetExhaustedError(
        `a call costing ${cost} credits never fits a window of ${this.limit} minus the ${held} credits it leaves`,
        {
          method: opts.method,
          path: opts.path,
          reason: 'max-wait',
          resetAt: null,
          needed: cost,
          remaining: Math.max(0, this.remaining - this.reserveCredits),
        },
      );
    }
    return null;
  }

  private maxWaitError(cost: number, opts: AcquireOptions, until: number): BudgetExhaustedError {
    const seconds = Math.ceil((until - this.now()) / 1000);
    return new BudgetExhaustedError(
      `rate-limit window resets in ${seconds}s, beyond the allowed wait; ${cost} credits needed, ${Math.max(0, Math.floor(this.remaining - this.reserveCredits))} usable`,
      {
        method: opts.method,
        path: opts.path,
        reason: 'max-wait',
        resetAt: new Date(until),
        needed: cost,
        remaining: Math.max(0, this.remaining - this.reserveCredits),
      },
    );
  }

  private grant(kind: CreditKind): Reservation {
    const cost = costOf(kind);
    const now = this.now();
    this.remaining -= cost;
    this.reservedInWindow += cost;
    this.spentBy[kind] += cost;
    this.spentEver += cost;
    if (this.resetAt === null) {
      // The window began at or before now, so it resets by now + windowMs at the latest.
      this.resetAt = now + this.windowMs;
      this.resetSource = 'guess';
    }
    const r: Reservation = {
      id: this.nextId++,
      cost,
      kind,
      run: this.run,
      windowId: this.windowId,
      answeredAtSend: this.answeredInWindow,
      open: true,
    };
    this.inflight.add(r);
    this.emit('update');
    return r;
  }

  private dropWaiter(w: Waiter): void {
    const i = this.waiters.indexOf(w);
    if (i >= 0) this.waiters.splice(i, 1);
    w.cleanup();
    if (this.waiters.length === 0) this.endWaiting();
    this.pump();
  }

  /**
   * Serves queued calls in order while they fit (FIFO, so small calls cannot starve a list call). A bulk call that
   * does not fit (the share it leaves) holds up the bulk calls behind it, not the interactive ones: they need less.
   */
  private pump(): void {
    this.roll();
    let bulkHeld = false;
    for (const waiter of [...this.waiters]) {
      const refusal = this.refusal(waiter.cost, waiter.opts);
      const bulk = waiter.opts.lane !== undefined;
      if (!refusal && bulk && bulkHeld) continue;
      if (!refusal && !this.fits(waiter.cost, waiter.opts.lane)) {
        if (!bulk) break;
        bulkHeld = true;
        continue;
      }
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.cleanup();
      if (refusal) waiter.reject(refusal);
      else waiter.resolve(this.grant(waiter.kind));
    }
    if (this.resetAt !== null) {
      const resetAt = this.resetAt;
      for (const waiter of [...this.waiters]) {
        if (resetAt > waiter.deadline) {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          waiter.cleanup();
          waiter.reject(this.maxWaitError(waiter.cost, waiter.opts, resetAt));
        }
      }
    }
    if (this.waiters.length === 0) {
      this.endWaiting();
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      return;
    }
    this.beginWaiting();
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    const now = this.now();
    if (this.resetAt === null) this.resetAt = now + this.windowMs;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.pump();
      },
      Math.max(0, this.resetAt - now) + 1,
    );
  }

  /** Announces a wait once per reset and reason (bulk work waiting for its share is said apart: others go on). */
  private beginWaiting(): void {
    const now = this.now();
    if (this.waitingSince === null) this.waitingSince = now;
    const head = this.waiters[0];
    const lane = this.waiters.every((w) => w.opts.lane) && head && this.fits(head.cost) ? head.opts.lane : undefined;
    const reason = this.blockReason === 'window' && lane ? 'share' : this.blockReason;
    if (this.resetAt !== null && (this.announcedUntil !== this.resetAt || this.announcedReason !== reason)) {
      this.announcedUntil = this.resetAt;
      this.announcedReason = reason;
      this.emit('wait', {
        ms: Math.max(0, this.resetAt - now),
        until: new Date(this.resetAt),
        reason,
        ...(lane ? { lane: { name: lane.name, leave: leftToOthers(lane, this.limit), limit: this.limit } } : {}),
      });
    }
  }

  private endWaiting(): void {
    if (this.waitingSince !== null) this.waited += this.now() - this.waitingSince;
    this.waitingSince = null;
    this.announcedUntil = null;
    this.announcedReason = null;
  }
}

function validReset(seconds: number | undefined): number | null {
  if (seconds === undefined || !Number.isFinite(seconds) || seconds < 0 || seconds > MAX_RESET_SECONDS) return null;
  return seconds;
}
