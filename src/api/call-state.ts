/**
 * One call as the layers (call-retry.ts, call-retoken.ts, call-credits.ts) see it: what is asked, and the state the
 * layers keep for it. Each field of the state is written by one layer.
 */
import type { Exchange } from './http.js';
import type { BulkLane } from './lane.js';
import type { CreditKind, WaitEvent } from './ledger.js';
import type { Token } from './token.js';
import type { CallTraits } from './verdict.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface CallSpec<T> {
  kind: CreditKind;
  method: Method;
  /** Relative to the base URL, query included: what errors and events show. */
  path: string;
  body?: string;
  contentType?: string;
  /** GETs and the token call: retried on faults. Others only when the request provably never left. */
  idempotent: boolean;
  parse: (ex: Exchange) => T;
  signal?: AbortSignal | undefined;
  /** Bulk work's lane (lane.ts); none: an interactive call. */
  lane?: BulkLane | undefined;
}

export interface CallState<T = unknown> {
  readonly spec: CallSpec<T>;
  /** Retry layer: the attempt under way, from 1. */
  attempt: number;
  /** Re-token layer: a fresh token was already tried after a 401. */
  reauthorized: boolean;
  /** Credits layer: 429 answers so far. */
  rateLimited: number;
  /** Credits layer: ms waited for the window or a 429, counted against maxWaitMs. */
  waitedMs: number;
  /** Credits layer: the token the next exchange carries (null for the token call: Basic credentials). */
  token: Token | null;
}

export function callState<T>(spec: CallSpec<T>): CallState<T> {
  return { spec, attempt: 1, reauthorized: false, rateLimited: 0, waitedMs: 0, token: null };
}

export function traitsOf(spec: CallSpec<unknown>): CallTraits {
  return { idempotent: spec.idempotent, bearer: spec.kind !== 'token' };
}

/** A layer's inner part: sends the call (again) and brings back an answer, or throws. */
export type Step = (state: CallState) => Promise<Exchange>;

export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** What the layers tell the client's events and counters. */
export interface CallReporter {
  /** Another attempt comes after `delayMs`. */
  retry(state: CallState, delayMs: number, reason: string): void;
  /** An answer came back (every attempt that got one, a 429 included). */
  answered(state: CallState, ex: Exchange): void;
  /** A pause outside the ledger's queue (a transient 429). */
  wait(event: WaitEvent): void;
}
