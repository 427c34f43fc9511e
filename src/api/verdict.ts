/**
 * What an answer means, decided in one place: the client's layers act on it (retry, re-token, wait, fail) and the
 * engine reads a failure through it (sync/failures.ts: was it the service not serving, worth another run?).
 */
import { ApiError, MalformedResponseError, NetworkError, TimeoutError } from './errors.js';

/** What one attempt came to. */
export type Answer =
  | { kind: 'status'; status: number }
  /** No answer. `sent`: the request may have reached the service (false: the connection was refused). */
  | { kind: 'no-answer'; fault: 'network' | 'timeout'; sent: boolean }
  /** A 2xx whose body is not what was asked for (a proxy or a cut body may cause it). */
  | { kind: 'malformed' };

export interface CallTraits {
  /** GETs and the token call: safe to send again. A write may have taken effect. */
  idempotent: boolean;
  /** Carries a bearer token (every call but the token call). */
  bearer: boolean;
}

/**
 * `transient`: the service was not serving (no answer, a 5xx); the same call later may succeed. `retry`: another
 * attempt after a backoff; `retoken`: again with a fresh token; `wait`: again once the credit window allows.
 */
export type Verdict =
  | { action: 'accept' }
  | { action: 'wait' }
  | { action: 'retoken' }
  | { action: 'retry'; reason: string; transient: boolean }
  | { action: 'fail'; transient: boolean };

/** 5xx statuses worth another try for a GET or the token call. */
const RETRY_STATUSES = new Set([500, 502, 503, 504]);

export function decide(answer: Answer, call: CallTraits): Verdict {
  switch (answer.kind) {
    case 'no-answer':
      // A refused connection never left this machine: safe to repeat even a write.
      return call.idempotent || !answer.sent
        ? { action: 'retry', reason: answer.fault, transient: true }
        : { action: 'fail', transient: true };
    case 'malformed':
      return call.idempotent
        ? { action: 'retry', reason: 'malformed', transient: false }
        : { action: 'fail', transient: false };
    case 'status': {
      const { status } = answer;
      if (status >= 200 && status < 300) return { action: 'accept' };
      // Refused before processing (and before charging): safe for a write too.
      if (status === 429) return { action: 'wait' };
      if (status === 401 && call.bearer) return { action: 'retoken' };
      const transient = status >= 500;
      if (call.idempotent && RETRY_STATUSES.has(status))
        return { action: 'retry', reason: `status ${status}`, transient };
      return { action: 'fail', transient };
    }
  }
}

/** The answer an error the client threw stands for; null for what is no answer (budget, usage, a stop). */
export function answerOf(err: unknown): Answer | null {
  if (err instanceof TimeoutError) return { kind: 'no-answer', fault: 'timeout', sent: true };
  if (err instanceof NetworkError) return { kind: 'no-answer', fault: 'network', sent: true };
  if (err instanceof MalformedResponseError) return { kind: 'malformed' };
  if (err instanceof ApiError && err.status !== undefined) return { kind: 'status', status: err.status };
  return null;
}

/** Whether the client gave up on `err` because the service was not serving (as opposed to refusing the call). */
export function isTransient(err: unknown): boolean {
  const answer = answerOf(err);
  if (!answer) return false;
  const verdict = decide(answer, { idempotent: true, bearer: false });
  return (verdict.action === 'retry' || verdict.action === 'fail') && verdict.transient;
}
