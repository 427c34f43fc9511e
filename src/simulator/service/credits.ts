import type { CallCounters } from '../types.js';

export type CallKind = 'list' | 'other' | 'token';

export const COST: Record<CallKind, number> = { list: 10, other: 1, token: 1 };

interface AccountState {
  /** Real-time ms when the current window started; null when no window runs. */
  windowStart: number | null;
  used: number;
  counters: CallCounters;
}

export interface RateHeaders {
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets, rounded up; 0 when no window runs. */
  reset: number;
}

const emptyCounters = (): CallCounters => ({
  credits: 0,
  listCalls: 0,
  otherCalls: 0,
  tokenCalls: 0,
  rejected429: 0,
  byPath: {},
});

/**
 * Credits per credential in fixed windows of real time (or of the simulated clock, when asked: a test then ends a
 * window with `advanceClock` instead of waiting for it). A window starts with the first charged call after the
 * previous one ended.
 *
 * What is charged: every call made with valid credentials (a valid Basic for the token call, a valid unexpired
 * bearer otherwise) that is not refused with 429: list calls (the audit log included) 10 credits, anything else 1,
 * whatever the outcome (400, 403, 404, 422 and injected 5xx/reset/malformed faults are charged, as the service
 * counted the request). Not charged: 401s (bad Basic, missing, unknown or expired token: no credential to charge)
 * and 429s (a call that does not fit, or an injected 429 storm).
 */
export class Credits {
  private readonly states: AccountState[];

  constructor(
    private readonly credits: number,
    private readonly windowSeconds: number,
    accounts: number,
    private readonly now: () => number = Date.now,
  ) {
    this.states = Array.from({ length: accounts }, () => ({ windowStart: null, used: 0, counters: emptyCounters() }));
  }

  private state(account: number, now: number): AccountState {
    const s = this.states[account]!;
    if (s.windowStart !== null && now >= s.windowStart + this.windowSeconds * 1000) {
      s.windowStart = null;
      s.used = 0;
    }
    return s;
  }

  /** Charges a call if it fits; false means answer 429. */
  tryCharge(account: number, kind: CallKind, route: string, now = this.now()): boolean {
    const s = this.state(account, now);
    const cost = COST[kind];
    if (s.used + cost > this.credits) {
      s.counters.rejected429++;
      return false;
    }
    if (s.windowStart === null) s.windowStart = now;
    s.used += cost;
    const c = s.counters;
    c.credits += cost;
    if (kind === 'list') c.listCalls++;
    else if (kind === 'token') c.tokenCalls++;
    else c.otherCalls++;
    c.byPath[route] = (c.byPath[route] ?? 0) + 1;
    return true;
  }

  /** Counts an injected 429 (a storm) that was not charged. */
  noteRejected(account: number): void {
    this.states[account]!.counters.rejected429++;
  }

  headers(account: number | null, now = this.now()): RateHeaders {
    if (account === null) return { limit: this.credits, remaining: this.credits, reset: 0 };
    const s = this.state(account, now);
    if (s.windowStart === null) return { limit: this.credits, remaining: this.credits, reset: 0 };
    const ms = s.windowStart + this.windowSeconds * 1000 - now;
    return { limit: this.credits, remaining: this.credits - s.used, reset: Math.max(1, Math.ceil(ms / 1000)) };
  }

  counters(account: number): CallCounters {
    const c = this.states[account]?.counters;
    if (!c) throw new RangeError(`no account ${account}`);
    return { ...c, byPath: { ...c.byPath } };
  }

  resetCounters(): void {
    for (const s of this.states) s.counters = emptyCounters();
  }
}
