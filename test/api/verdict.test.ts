/** The one decision on an answer, as the client's layers and the engine's failure reading both use it. */
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  decide,
  isTransient,
  MalformedResponseError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  TimeoutError,
} from '../../src/api/index.js';

const GET = { idempotent: true, bearer: true };
const POST = { idempotent: false, bearer: true };
const TOKEN_CALL = { idempotent: true, bearer: false };

describe('decide', () => {
  it('maps each answer to accept, retry, re-token, wait or fail', () => {
    const status = (s: number, call = GET) => decide({ kind: 'status', status: s }, call).action;
    expect([200, 204, 429, 401, 403, 404, 422, 503, 501].map((s) => status(s))).toEqual([
      'accept',
      'accept',
      'wait',
      'retoken',
      'fail',
      'fail',
      'fail',
      'retry',
      'fail',
    ]);
    // A write is never sent twice on a 5xx; a 429 was refused before processing, so it waits like a GET.
    expect([status(503, POST), status(429, POST)]).toEqual(['fail', 'wait']);
    // The token call's 401 means wrong credentials: there is no token to renew.
    expect(status(401, TOKEN_CALL)).toBe('fail');
  });

  it('retries a write only when the request provably never left', () => {
    expect(decide({ kind: 'no-answer', fault: 'network', sent: false }, POST)).toMatchObject({ action: 'retry' });
    expect(decide({ kind: 'no-answer', fault: 'timeout', sent: true }, POST)).toMatchObject({ action: 'fail' });
    expect(decide({ kind: 'no-answer', fault: 'timeout', sent: true }, GET)).toEqual({
      action: 'retry',
      reason: 'timeout',
      transient: true,
    });
    expect(decide({ kind: 'malformed' }, POST)).toEqual({ action: 'fail', transient: false });
  });
});

describe('isTransient (how the engine reads what the client gave up on)', () => {
  const init = { method: 'GET', path: '/registrants' };
  it('no answer or a 5xx is the service not serving; a refusal, a 429 or a garbled body is not', () => {
    expect(isTransient(new NetworkError('reset', init))).toBe(true);
    expect(isTransient(new TimeoutError('slow', { ...init, phase: 'headers' }))).toBe(true);
    expect(isTransient(new ApiError('503', { ...init, status: 503 }))).toBe(true);
    expect(isTransient(new ApiError('501', { ...init, status: 501 }))).toBe(true);
    expect(isTransient(new NotFoundError('404', { ...init, status: 404 }))).toBe(false);
    expect(isTransient(new RateLimitedError('429', { ...init, status: 429 }))).toBe(false);
    expect(isTransient(new MalformedResponseError('bad', { ...init, status: 200, detail: 'x' }))).toBe(false);
    expect(isTransient(new Error('a bug'))).toBe(false);
  });
});
