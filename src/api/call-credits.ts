/**
 * The innermost layer of a call, around the exchange itself: every attempt reserves its credits before it is sent
 * and settles them from the answer, and a 429 is waited out here (the window's reset, or a short pause when the
 * headers say credits are left) and sent again. Beyond the bound of 429s the answer goes out (a RateLimitedError).
 */
import type { Now } from '../../schemas/clock.js';
import { sleep } from './backoff.js';
import type { CallReporter, CallSpec, CallState, RetryPolicy, Step } from './call-state.js';
import { traitsOf } from './call-state.js';
import { BudgetExhaustedError, ResponseTooLargeError } from './errors.js';
import { BodyTooLarge, type Exchange, failedBeforeSending, isTransportFault } from './http.js';
import { type CreditLedger, costOf, type RateLimitHeaders, type Reservation } from './ledger.js';
import { rateLimitHeaders } from './responses.js';
import type { Token } from './token.js';
import { decide } from './verdict.js';

/** Where the credits layer takes the token each attempt carries. */
export interface Bearer {
  /** The token for the next attempt, refreshed when due (fetched before its credits are reserved); null for the
   *  token call, which carries the Basic credentials. */
  current(spec: CallSpec<unknown>): Promise<Token | null>;
  /** After a wait for the window: `token` still, unless it went stale meanwhile. */
  afterWait(spec: CallSpec<unknown>, token: Token | null): Promise<Token | null>;
}

interface CreditsDeps {
  ledger: CreditLedger;
  /** How long one call may wait in total (all its attempts) for the window or a 429. */
  maxWaitMs: number;
  /** 429 pauses without a usable Reset grow from `baseDelayMs`; more than max(10, 2 × attempts) 429s end the call. */
  policy: RetryPolicy;
  bearer: Bearer;
  report: CallReporter;
  /** The client's clock (the ledger's too). */
  now: Now;
}

async function reserve(deps: CreditsDeps, state: CallState): Promise<{ reservation: Reservation; waitedMs: number }> {
  const { spec } = state;
  const started = deps.now();
  const reservation = await deps.ledger.acquire(spec.kind, {
    method: spec.method,
    path: spec.path,
    signal: spec.signal,
    maxWaitMs: deps.maxWaitMs - state.waitedMs,
    priority: spec.kind === 'token',
    lane: spec.lane,
  });
  const waitedMs = deps.now() - started;
  state.waitedMs += waitedMs;
  return { reservation, waitedMs };
}

/** Resolves the credits of an attempt that brought no answer, and says what to throw. */
function unanswered(
  { ledger, now }: CreditsDeps,
  reservation: Reservation,
  spec: CallSpec<unknown>,
  err: unknown,
): unknown {
  if (spec.signal?.aborted) {
    ledger.release(reservation);
    return spec.signal.reason;
  }
  if (err instanceof BodyTooLarge) {
    // It reached the service (and was charged); asking again would bring the same answer.
    ledger.settle(reservation, {}, now());
    const mb = Math.round(err.limit / 1_048_576);
    return new ResponseTooLargeError(
      `${spec.method} ${spec.path}: the answer is larger than ${mb} MB, refused (maxResponseBytes)`,
      { method: spec.method, path: spec.path, status: err.status },
    );
  }
  // A refused connection cost nothing; anything later may have reached the server and been charged.
  if (isTransportFault(err) && !failedBeforeSending(err)) ledger.settle(reservation, {}, now());
  else ledger.release(reservation);
  return err;
}

/** A transient 429 (credits left per the headers): pause briefly, within what is left of maxWaitMs. */
async function pause429(deps: CreditsDeps, state: CallState, until: Date): Promise<void> {
  const { spec } = state;
  const ms = Math.max(0, until.getTime() - deps.now());
  if (ms > deps.maxWaitMs - state.waitedMs) {
    throw new BudgetExhaustedError(`429 pause of ${ms} ms exceeds the allowed wait`, {
      method: spec.method,
      path: spec.path,
      reason: 'max-wait',
      resetAt: until,
      needed: costOf(spec.kind),
      remaining: deps.ledger.snapshot().remaining,
    });
  }
  deps.report.wait({ ms, until, reason: '429' });
  await sleep(ms, spec.signal);
  deps.ledger.noteWait(ms);
  state.waitedMs += ms;
}

/** A 429: the credits are refunded and the wait set; false when the call has had more 429s than it may. */
async function waitOut429(
  deps: CreditsDeps,
  state: CallState,
  reservation: Reservation,
  ex: Exchange,
  limits: RateLimitHeaders,
): Promise<boolean> {
  state.rateLimited += 1;
  const { ledger, policy } = deps;
  const growth = 2 ** (state.rateLimited - 1);
  const { until, blocked } = ledger.rateLimited(reservation, limits, ex.receivedAt, {
    fallbackMs: Math.min(ledger.windowMs, Math.max(1000, policy.baseDelayMs) * growth),
    transientMs: Math.min(ledger.windowMs, Math.max(50, policy.baseDelayMs) * growth),
  });
  if (state.rateLimited > Math.max(10, policy.attempts * 2)) return false;
  // Blocked: the next acquire waits for the reset (counted against maxWaitMs there).
  if (!blocked) await pause429(deps, state, until);
  return true;
}

export function withCredits(deps: CreditsDeps, send: Step): Step {
  return async (state) => {
    const { spec } = state;
    while (true) {
      state.token = await deps.bearer.current(spec);
      const { reservation, waitedMs } = await reserve(deps, state);
      let ex: Exchange;
      try {
        // A long wait for the window may have outlived the token.
        if (waitedMs > 0) state.token = await deps.bearer.afterWait(spec, state.token);
        deps.ledger.markSent(reservation);
        ex = await send(state);
      } catch (err) {
        throw unanswered(deps, reservation, spec, err);
      }
      deps.report.answered(state, ex);
      const limits = rateLimitHeaders(ex);
      const verdict = decide({ kind: 'status', status: ex.status }, traitsOf(spec));
      if (verdict.action === 'wait') {
        if (await waitOut429(deps, state, reservation, ex, limits)) continue;
        return ex;
      }
      // A refused token identified no credential: the answer's rate headers are not ours, and nothing was charged.
      if (verdict.action === 'retoken') deps.ledger.settleUncharged(reservation);
      else deps.ledger.settle(reservation, limits, ex.receivedAt);
      return ex;
    }
  };
}
