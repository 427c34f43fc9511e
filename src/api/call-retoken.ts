/**
 * The middle layer of a call: a 401 on a bearer call means the token was refused (revoked, or expired early), so
 * the call goes once more with a fresh one. A second 401 goes out as the answer (an UnauthorizedError).
 */
import type { CallReporter, Step } from './call-state.js';
import { traitsOf } from './call-state.js';
import type { Token } from './token.js';
import { decide } from './verdict.js';

interface RetokenDeps {
  /** Drops the refused token, so the next attempt fetches (once, shared) a fresh one. */
  invalidate(token: Token): void;
  report: CallReporter;
}

export function withFreshToken(deps: RetokenDeps, next: Step): Step {
  return async (state) => {
    while (true) {
      const ex = await next(state);
      const refused = decide({ kind: 'status', status: ex.status }, traitsOf(state.spec)).action === 'retoken';
      if (!refused || state.reauthorized || !state.token) return ex;
      state.reauthorized = true;
      deps.invalidate(state.token);
      deps.report.retry(state, 0, 'unauthorized');
    }
  };
}
