/**
 * The applier: turns journaled deliveries into warehouse changes, a batch at a time, in journal order, as soon as the
 * receiver journals them (and at start, whatever a killed process left pending). A batch that fails (the database,
 * the service) stays pending and is tried again after a backoff; meanwhile the daemon reports itself unhealthy and
 * reconciliation polls every stream.
 */

import type { StreamOverride } from '../../../connectors/index.js';
import { LIST_CALL_CREDITS } from '../../../connectors/service.js';
import type { Now } from '../../../schemas/clock.js';
import { type ApiClient, EvsyncApiError } from '../../api/index.js';
import { CAPTURE_RUN_ID, type Partition, type Warehouse } from '../../warehouse/index.js';
import type { EventFilters } from '../event-scope.js';
import { PageLoader } from '../page-loader.js';
import { applyBatch, type BatchContext } from './apply-batch.js';
import { CreditWait, type WaitState } from './credit-wait.js';
import type { CaptureMetrics } from './metrics.js';
import { EventScope } from './scope.js';
import { CaptureStreams } from './streams.js';

export interface ApplierOptions {
  warehouse: Warehouse;
  /** Re-reads go through it (the daemon shares it with reconciliation: one credit ledger). */
  client: ApiClient;
  /** Streams the sync covers; deliveries of others are journaled and ignored. */
  streams: readonly string[];
  /** The sync's event filters (the engine's one scope rule). */
  filters?: EventFilters;
  overrides?: Readonly<Record<string, StreamOverride>>;
  customFields?: boolean;
  /** Zone of record timestamps. Default UTC. */
  recordTimezone?: string;
  /** `_run_id` of rows written. Default `capture`. */
  runId?: string;
  /** Deliveries per batch. Default 500. */
  batchSize?: number;
  metrics?: CaptureMetrics;
  log?: (level: 'debug' | 'info' | 'warn', message: string) => void;
  /** Told of each partition (its table, its event or null for the whole table) once a write to it is committed (the daemon's publisher). */
  onTouched?: (partition: Partition) => void;
}

const MAX_BACKOFF_MS = 60_000;

/**
 * What a failed batch may say in a log line or on /healthz: the client's own errors (already redacted, they name
 * paths and statuses), else only the kind of error (a database error's message may quote a value from a record).
 */
function safeError(err: unknown): string {
  if (err instanceof EvsyncApiError) return `${err.name}: ${err.message}`;
  if (!(err instanceof Error)) return 'unknown error';
  const kind = /^([A-Z][A-Za-z]*(?: [A-Z][A-Za-z]*)* Error)\b/.exec(err.message)?.[1];
  return kind ? `${err.name} (${kind})` : err.name;
}
export class Applier {
  private readonly ctx: BatchContext;
  private readonly batchSize: number;
  private wake: (() => void) | null = null;
  private stopWake: (() => void) | null = null;
  private dirty = true;
  private stopped = false;
  private loop: Promise<void> | null = null;
  private idleWaiters: (() => void)[] = [];
  private busy = false;
  private failures = 0;
  /** Set when a batch failed; cleared by the next batch that succeeds. */
  lastError: string | null = null;
  /** Failed batches since the last reconciliation (the policy polls everything while this is above 0). */
  failuresSinceReconcile = 0;
  /** List calls made for re-reads since start. */
  calls = 0;
  applied = 0;
  private readonly stop$ = new AbortController();
  /** Deliveries whose re-read waits for the credit window (created with the applier). */
  private readonly credits: CreditWait;

  constructor(private readonly o: ApplierOptions) {
    this.batchSize = o.batchSize ?? 500;
    // The history tells a webhook's versions by this run id (warehouse history/versions.ts).
    const runId = o.runId ?? CAPTURE_RUN_ID;
    this.ctx = {
      warehouse: o.warehouse,
      client: o.client,
      loader: new PageLoader(o.warehouse, runId),
      streams: new CaptureStreams(o.warehouse, o.overrides, o.customFields !== false),
      scope: new EventScope(o.filters ?? {}),
      selected: new Set(o.streams),
      recordTimezone: o.recordTimezone ?? 'UTC',
      runId,
      signal: this.stop$.signal,
      ...(o.onTouched ? { onTouched: o.onTouched } : {}),
    };
    this.credits = new CreditWait(o.client.ledger, o.client.now, () => this.notify(), o.log);
  }

  /** Whether deliveries wait for credits, how many, since when, and when the window resets. */
  waitState(now = this.o.client.now()): WaitState {
    return this.credits.state(now);
  }

  /** The clock the applier reads (its client's). */
  get now(): Now {
    return this.o.client.now;
  }

  /** Starts applying (what is pending now, then each delivery as it is journaled). */
  start(): void {
    this.loop ??= this.run();
  }

  /** A delivery was journaled. */
  notify(): void {
    this.dirty = true;
    this.wake?.();
  }

  /** Stored definitions and events may have changed (after a reconciliation run). */
  invalidate(): void {
    this.ctx.streams.invalidate();
    this.ctx.scope.invalidate();
  }

  get healthy(): boolean {
    return this.lastError === null;
  }

  /** Resolves once nothing journaled is left to apply (tests, shutdown, benchmarks). */
  idle(): Promise<void> {
    if (!this.busy && !this.dirty) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Applies again the deliveries applied since `since` (UTC): a reconciliation page read before such a delivery's
   * change and loaded after it would otherwise leave the older version in place. Runs between batches.
   */
  async replay(since: string): Promise<number> {
    const entries = await this.o.warehouse.capture.appliedSince(since);
    if (entries.length === 0) return 0;
    return this.exclusive(async () => {
      for (let i = 0; i < entries.length; i += this.batchSize) {
        const r = await applyBatch({ ...this.ctx, replay: true }, entries.slice(i, i + this.batchSize));
        this.account(r.calls);
      }
      return entries.length;
    });
  }

  private chain: Promise<unknown> = Promise.resolve();

  /** Batches and replays never overlap: each decides on what the one before wrote. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(work, work);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private account(calls: number): void {
    this.calls += calls;
    if (calls > 0) this.o.metrics?.credits.add({ by: 'capture' }, calls * LIST_CALL_CREDITS);
  }

  private async batch(): Promise<number> {
    return this.exclusive(async () => {
      const entries = await this.o.warehouse.capture.pending(this.batchSize);
      if (entries.length === 0) {
        this.credits.note(0, null);
        return 0;
      }
      const r = await applyBatch(this.ctx, entries);
      this.account(r.calls);
      await this.o.warehouse.capture.settle(r.settlements, r.streams);
      if (r.eventsChanged) this.ctx.scope.invalidate();
      const m = this.o.metrics;
      const streamOf = new Map(r.streams.map((s) => [s.stream, s]));
      for (const s of r.settlements) {
        const entry = entries.find((e) => e.seq === s.seq);
        m?.applied.add({ stream: entry?.stream ?? 'unknown', outcome: s.outcome });
      }
      for (const l of r.lags) m?.observeLag(l.stream, l.seconds);
      for (const s of streamOf.values()) m?.lastDelivery.set(s.stream, this.o.client.now());
      this.applied += r.settlements.length;
      // Deferred re-reads wait for credits, not for the next delivery.
      this.credits.note(r.deferred, r.oldestDeferred);
      this.o.log?.('debug', `applied ${r.settlements.length} deliveries (${r.calls} re-read calls)`);
      // A full batch means more may be waiting; a batch left entirely pending (deferred) must not spin.
      return r.settlements.length > 0 ? entries.length : 0;
    });
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (!this.dirty) {
        for (const waiter of this.idleWaiters.splice(0)) waiter();
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = null;
        continue;
      }
      this.dirty = false;
      this.busy = true;
      try {
        const applied = await this.batch();
        if (applied >= this.batchSize) this.dirty = true;
        this.failures = 0;
        this.lastError = null;
      } catch (err) {
        if (this.stopped) break;
        this.failures += 1;
        this.failuresSinceReconcile += 1;
        this.lastError = safeError(err);
        const wait = Math.min(MAX_BACKOFF_MS, 500 * 2 ** (this.failures - 1));
        this.o.log?.('warn', `applying deliveries failed (${this.lastError}); trying again in ${wait} ms`);
        this.dirty = true;
        // New deliveries do not cut the wait short (they would retry a failing batch at once); a stop does.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          this.stopWake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.stopWake = null;
      } finally {
        this.busy = false;
      }
    }
    for (const waiter of this.idleWaiters.splice(0)) waiter();
  }

  /** Finishes the batch in flight (a re-read in flight is cancelled; its batch stays pending) and stops. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stop$.abort(new Error('stopping'));
    this.wake?.();
    this.stopWake?.();
    this.credits.close();
    await this.loop;
    await this.chain;
  }
}
