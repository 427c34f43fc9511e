import type { Initiator, SimulatorWebhooks, WebhookDeliveryOptions } from './webhooks/types.js';

/**
 * The simulator's public types. Other parts of evsync (tests, benchmarks, the demo) code against these exactly.
 */

export type SimulatorSize = 'tiny' | 'small' | 'medium' | 'large' | 'xlarge' | 'history' | 'bigevent';

export interface FaultSpec {
  /** Fraction of data requests answered 500/502/503 (JSON error body). */
  errorRate?: number;
  /** Added to every response. */
  latencyMs?: number;
  /** Fraction where headers and part of the body are sent, then the socket is destroyed. */
  resetRate?: number;
  /** Fraction answered 200 with a truncated, invalid JSON body. */
  malformedRate?: number;
  /** Fraction delayed by `slowMs` before headers (to trip client timeouts). */
  slowRate?: number;
  slowMs?: number;
  /** Fraction answered 429 even with credits left. */
  storm429Rate?: number;
  /** Leave out X-Rate-Limit-Reset (the client must cope). */
  omitResetHeader?: boolean;
  /**
   * Write every non-ASCII character of a JSON answer as a `\uXXXX` escape, as Python's `json.dumps` does by default
   * (JSON allows either; the spec says nothing): not a fault, a way a real service may write its answers.
   */
  asciiJson?: boolean;
  /** Fraction of webhook deliveries silently never sent. */
  webhookDropRate?: number;
  /** Fraction of webhook deliveries sent twice. */
  webhookDuplicateRate?: number;
  /** Fraction of webhook deliveries held back and sent after the next delivery to the same webhook. */
  webhookReorderRate?: number;
  /** Fraction of webhook deliveries held `webhookDelayMs` (default 2000) before their first try. */
  webhookDelayRate?: number;
  webhookDelayMs?: number;
}

export interface SimulatorOptions {
  /** Same seed, same data. Default 1. */
  seed?: number;
  /** Default 'small'. */
  size?: SimulatorSize;
  /**
   * The UTC day (`YYYY-MM-DD`, today or earlier) the seeded data is placed before. Default today: the same seed gives
   * the same data within one UTC day; a fixed day gives it on any day (tests of files written earlier).
   */
  anchorDay?: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /**
   * Default 2000 credits per 600 s; windows run in real time, or on the simulated clock with `clock: 'simulated'`
   * (`advanceClock(windowSeconds)` then ends the window).
   */
  rateLimit?: { credits: number; windowSeconds: number; clock?: 'real' | 'simulated' };
  /** Default 1800. */
  tokenTtlSeconds?: number;
  /** Background mutations while serving. Default 0. */
  mutationsPerSecond?: number;
  faults?: FaultSpec;
  /** Expose /_control/* HTTP endpoints (loopback only). */
  control?: boolean;
  /** IANA zone record timestamps are written in. Default 'UTC' (the token's expires_at is always UTC). */
  recordTimezone?: string;
  /**
   * Hosts webhook deliveries may go to besides loopback addresses (`*`: any). Default none: deliveries to other
   * hosts are recorded as `blocked` and not sent.
   */
  webhookHosts?: string[];
  /** Retry schedule, timeout, concurrency and bounds of webhook deliveries. */
  webhookDelivery?: WebhookDeliveryOptions;
}

export interface SimulatorAccount {
  clientId: string;
  clientSecret: string;
  /** The pre-encoded Basic credential string the service hands out. */
  encoded: string;
  name: string;
}

export interface CallCounters {
  /** Credits charged in all (not reset by window rollover; reset by resetCounters()). */
  credits: number;
  /** Charged list calls (10 credits each). */
  listCalls: number;
  /** Charged non-list calls other than token calls (1 credit each). */
  otherCalls: number;
  /** Charged token calls (1 credit each). */
  tokenCalls: number;
  /** Calls answered 429 (never charged), including injected 429 storms. */
  rejected429: number;
  /** Charged calls per route, e.g. `GET /registrants`, `GET /registrants/{id}`, `POST /oauth2/token`. */
  byPath: Record<string, number>;
}

export interface MutationSummary {
  inserted: Record<string, number>;
  updated: Record<string, number>;
  deleted: Record<string, number>;
}

export interface Simulator {
  /** http://127.0.0.1:PORT/v1 */
  readonly baseUrl: string;
  /** At least 2. */
  readonly accounts: SimulatorAccount[];
  counters(account?: number): CallCounters;
  resetCounters(): void;
  /** `initiatedBy` fixes who the changes are by, as webhooks see it (default: see webhooks/service.ts). */
  mutate(n: number, opts?: { account?: number; streams?: string[]; initiatedBy?: Initiator }): MutationSummary;
  /**
   * Every current record of an account with all its fields exactly as a list would serialize them when asked for
   * every field (custom fields included, no expansions), sorted by id (the audit log: chronological per event).
   * deletedIds: ids deleted by mutations or operations; always [] for registration_audit.
   */
  truth(stream: string, account?: number): { records: Record<string, unknown>[]; deletedIds: number[] };
  streams(): string[];
  setFaults(faults: FaultSpec): void;
  /** The simulated clock is real time plus an offset: Date header, token expiry and mutation timestamps use it. */
  advanceClock(seconds: number): void;
  now(): Date;
  /** Ground truth of changes, webhook deliveries and failure notifications; `idle()` waits for the queue. */
  readonly webhooks: SimulatorWebhooks;
  close(): Promise<void>;
}
