/**
 * The outermost layer of a call: a transient fault (no answer, a 5xx, a malformed 2xx) is tried again after a
 * backoff, up to `attempts`, when `decide` says it may be; every answer it does not retry ends as the typed error.
 */
import { backoffDelay, sleep } from './backoff.js';
import type { CallReporter, CallSpec, CallState, RetryPolicy, Step } from './call-state.js';
import { traitsOf } from './call-state.js';
import { type Exchange, ExchangeTimeout, failedBeforeSending, isTransportFault } from './http.js';
import { MalformedBody } from './responses.js';
import { decide, type Verdict } from './verdict.js';

/** The typed errors a call ends in. */
export interface CallErrors {
  /** An answer given up on (a 4xx, a 5xx after the retries, a 401 after a fresh token, 429s beyond the bound). */
  answer(spec: CallSpec<unknown>, ex: Exchange): Error;
  /** No answer, after the retries. */
  transport(spec: CallSpec<unknown>, err: unknown): Error;
  /** A 2xx whose body is not what was asked, after the retries. */
  malformed(spec: CallSpec<unknown>, detail: string): Error;
}

interface RetryDeps {
  policy: RetryPolicy;
  errors: CallErrors;
  report: CallReporter;
}

type Judged<T> = { done: true; value: T } | { done: false; verdict: Verdict; failure: () => Error };

function judge<T>(deps: RetryDeps, state: CallState<T>, outcome: { ex: Exchange } | { err: unknown }): Judged<T> {
  const { spec } = state;
  const traits = traitsOf(spec);
  if ('err' in outcome) {
    const { err } = outcome;
    // A stop request, a budget, a usage error: nothing another attempt could change.
    if (spec.signal?.aborted || !isTransportFault(err)) throw err;
    const fault = err instanceof ExchangeTimeout ? 'timeout' : 'network';
    const verdict = decide({ kind: 'no-answer', fault, sent: !failedBeforeSending(err) }, traits);
    return { done: false, verdict, failure: () => deps.errors.transport(spec, err) };
  }
  const { ex } = outcome;
  const verdict = decide({ kind: 'status', status: ex.status }, traits);
  if (verdict.action !== 'accept') return { done: false, verdict, failure: () => deps.errors.answer(spec, ex) };
  try {
    return { done: true, value: spec.parse(ex) };
  } catch (err) {
    if (!(err instanceof MalformedBody)) throw err;
    const retry = decide({ kind: 'malformed' }, traits);
    return { done: false, verdict: retry, failure: () => deps.errors.malformed(spec, err.detail) };
  }
}

export function withRetries(deps: RetryDeps, next: Step): <T>(state: CallState<T>) => Promise<T> {
  return async <T>(state: CallState<T>): Promise<T> => {
    while (true) {
      const outcome = await next(state).then(
        (ex) => ({ ex }),
        (err: unknown) => ({ err }),
      );
      const judged = judge(deps, state, outcome);
      if (judged.done) return judged.value;
      if (judged.verdict.action !== 'retry' || state.attempt >= deps.policy.attempts) throw judged.failure();
      const delayMs = backoffDelay(state.attempt, deps.policy.baseDelayMs, deps.policy.maxDelayMs);
      deps.report.retry(state, delayMs, judged.verdict.reason);
      await sleep(delayMs, state.spec.signal);
      state.attempt += 1;
    }
  };
}
