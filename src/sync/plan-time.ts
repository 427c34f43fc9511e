/**
 * What credits mean in time at the rate limit. The service reports its limit and the current window on every answer
 * (X-Rate-Limit-Limit, -Remaining, -Reset): those figures win over the configured ones once an answer carried them.
 * The window's length is not reported: it is the configured one (the spec's 10 minutes by default).
 */
import type { LedgerSnapshot } from '../api/index.js';

export interface RateLimitView {
  /** Credits per window. */
  limit: number;
  /** `reported`: from X-Rate-Limit-Limit; `configured`: no answer gave it (a plan that made no call). */
  limitSource: 'reported' | 'configured';
  /** Credits left in the current window (the service's Remaining, less this process's calls since). */
  remaining: number;
  /** Seconds until the current window resets (from X-Rate-Limit-Reset); null before any answer. */
  resetInSeconds: number | null;
  /** The window's length (configured: the headers do not say it). */
  windowSeconds: number;
}

export function rateLimitView(ledger: LedgerSnapshot): RateLimitView {
  return {
    limit: ledger.limit,
    limitSource: ledger.limitSource,
    remaining: Math.max(0, ledger.remaining),
    resetInSeconds: ledger.resetInMs === null ? null : Math.ceil(ledger.resetInMs / 1000),
    windowSeconds: ledger.windowMs / 1000,
  };
}

/** Seconds a list call takes end to end, for the estimate only. */
const TYPICAL_CALL_SECONDS = 0.25;

export interface TimeAtLimit {
  /** Rate-limit windows the spending touches, the current one included. */
  windows: number;
  seconds: number;
}

/**
 * How long spending `credits` in `calls` takes at the limit: the credits left now go first, then each reset gives a
 * window's worth (the first reset when the service said, the others a window apart); add the time the calls of the
 * last window take at the given concurrency.
 */
export function timeAtLimit(credits: number, calls: number, rate: RateLimitView, concurrency: number): TimeAtLimit {
  const perWindow = Math.max(1, rate.limit);
  const beyond = Math.max(0, credits - rate.remaining);
  const resets = Math.ceil(beyond / perWindow);
  const waited = resets === 0 ? 0 : (rate.resetInSeconds ?? rate.windowSeconds) + (resets - 1) * rate.windowSeconds;
  const lastCredits = resets === 0 ? credits : beyond - (resets - 1) * perWindow;
  const lastCalls = credits > 0 ? (calls * lastCredits) / credits : 0;
  return {
    windows: resets + 1,
    seconds: Math.round(waited + (lastCalls * TYPICAL_CALL_SECONDS) / Math.max(1, concurrency)),
  };
}
