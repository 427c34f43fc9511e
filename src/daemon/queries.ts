/**
 * SQL typed through the daemon (`evsync query` while `serve` or `schedule` holds the warehouse), answered so that
 * nothing a query does can hurt the daemon:
 * - it runs in a worker process (query-pool.ts), never in the daemon: twenty endless queries once pinned the four
 *   threads Node lends DuckDB, and the journal, the receiver and shutdown waited behind them. A worker answers one
 *   query at a time at a lower CPU priority, and is ended if DuckDB's interrupt does not end a cancelled query at once;
 * - on a copy of the whole warehouse (query-copy.ts; made again only when something changed since the last one),
 *   never on the live file: a second DuckDB instance on the live file drops the daemon's writer lock when it closes
 *   (see `Db.openSnapshotReader`), and a query on the writer's own instance would run with file access on;
 * - bounded: a time limit that runs from the moment the query arrives (waiting for a worker or for the copy counts),
 *   a row and a byte bound on the result, a line of at most `queueLength` queries beyond those running (past it the
 *   client is told at once that the daemon is busy, and when a place is sure to free), and cancelled when its client
 *   goes away or the daemon stops.
 */

import { rmSync } from 'node:fs';
import { systemNow } from '../../schemas/clock.js';
import {
  type JsonQueryResult,
  QueryCancelledError,
  QueryRefusedError,
  removeQueryCopyLeftovers,
  statementRefusal,
  type Warehouse,
} from '../warehouse/index.js';
import { QueryPool } from './query-pool.js';
import {
  DEFAULT_QUERY_BOUNDS,
  DEFAULT_QUERY_QUEUE,
  DEFAULT_QUERY_WORKERS,
  QUERY_KILL_GRACE_MS,
  QUERY_MEMORY_LIMIT,
} from './query-settings.js';

export interface QueryBounds {
  /** Most rows a result may have. */
  maxRows: number;
  /** Most bytes a result may take as JSON. */
  maxBytes: number;
  /** Longest a query may run, in milliseconds, from its arrival. */
  timeoutMs: number;
}

export interface DaemonQuery {
  sql: string;
  form: 'json' | 'text';
  /** Folders the query may read files under (absolute). */
  allowRead: string[];
  /** The client's own, smaller bounds (the daemon's apply when larger or absent). */
  maxRows?: number;
  timeoutMs?: number;
}

export interface QueryServiceOptions {
  warehouse: Warehouse;
  /** Where the daemon keeps the copy queries read (owner-only, like the warehouse; removed when the service closes). */
  copyPath: string;
  bounds?: Partial<QueryBounds>;
  /** Worker processes at most (default DEFAULT_QUERY_WORKERS). */
  workers?: number;
  /** Queries that may wait beyond those running (default DEFAULT_QUERY_QUEUE). */
  queueLength?: number;
  /** DuckDB's memory limit for one query (default 512MB; there is no spill). */
  memoryLimit?: string;
  /** The daemon's clock (for the retry hint of a busy answer). */
  now?: () => number;
}

/** The daemon has as many queries as it takes: the client should try again after `retryAfterMs`. */
export class DaemonBusyError extends Error {
  override name = 'DaemonBusyError';
  constructor(
    message: string,
    readonly retryAfterMs: number,
  ) {
    super(message);
  }
}

function smaller(a: number, b: number | undefined): number {
  return b !== undefined && b > 0 && b < a ? b : a;
}

let nextQueryId = 1;

export class QueryService {
  private readonly bounds: QueryBounds;
  private readonly pool: QueryPool;
  private readonly workers: number;
  private readonly queueLength: number;
  private readonly now: () => number;
  private copied: number | null = null;
  private refreshing: Promise<void> | null = null;
  /** Every query admitted and not yet answered, with the time its limit ends it. */
  private readonly admitted = new Map<AbortController, number>();
  private closed = false;

  constructor(private readonly o: QueryServiceOptions) {
    this.bounds = { ...DEFAULT_QUERY_BOUNDS, ...o.bounds };
    this.workers = Math.max(1, o.workers ?? DEFAULT_QUERY_WORKERS);
    this.queueLength = Math.max(0, o.queueLength ?? DEFAULT_QUERY_QUEUE);
    this.now = o.now ?? systemNow;
    this.pool = new QueryPool({ size: this.workers, killGraceMs: QUERY_KILL_GRACE_MS });
    removeQueryCopyLeftovers(o.copyPath);
  }

  /** Queries admitted and not answered yet (running or waiting). */
  get active(): number {
    return this.admitted.size;
  }

  /** Queries running in a worker, waiting for one, and worker processes alive. */
  get load(): { running: number; waiting: number; processes: number } {
    return {
      running: this.pool.running,
      waiting: this.admitted.size - this.pool.running,
      processes: this.pool.processes,
    };
  }

  /** Answers one query; `signal` aborts when the client goes away. */
  async query(request: DaemonQuery, signal?: AbortSignal): Promise<JsonQueryResult> {
    if (this.closed) throw new QueryCancelledError('query cancelled: the daemon is stopping');
    // Refused before anything is spent on it (a copy, a worker): the worker checks again, as every query does.
    const refusal = statementRefusal(request.sql, { explain: request.allowRead.length === 0 });
    if (refusal !== null) throw new QueryRefusedError(refusal);
    this.admit();
    const control = new AbortController();
    const timeoutMs = smaller(this.bounds.timeoutMs, request.timeoutMs);
    this.admitted.set(control, this.now() + timeoutMs);
    const timer = setTimeout(
      () => control.abort(new Error(`it ran longer than ${Math.round(timeoutMs / 1000)} s (the time limit)`)),
      timeoutMs,
    );
    timer.unref();
    const onClientGone = () => control.abort(new Error('the client went away'));
    signal?.addEventListener('abort', onClientGone, { once: true });
    if (signal?.aborted) onClientGone();
    try {
      await this.freshBefore(control.signal);
      return await this.pool.run(
        {
          id: nextQueryId++,
          copyPath: this.o.copyPath,
          sql: request.sql,
          form: request.form,
          allowRead: request.allowRead,
          ...this.rowBounds(request),
          maxBytes: this.bounds.maxBytes,
          maxBytesHint: `select fewer or narrower columns (the daemon answers ${Math.round(this.bounds.maxBytes / 1048576)} MB at most)`,
          memoryLimit: this.o.memoryLimit ?? QUERY_MEMORY_LIMIT,
        },
        control.signal,
      );
    } catch (err) {
      if (control.signal.aborted && !(err instanceof QueryCancelledError)) {
        throw new QueryCancelledError(`query cancelled: ${reasonText(control.signal.reason)}`);
      }
      throw err;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onClientGone);
      this.admitted.delete(control);
    }
  }

  /** The row bound that binds, named with how to change it: the client's --max-rows, or the daemon's own. */
  private rowBounds(request: DaemonQuery): { maxRows: number; maxRowsHint?: string } {
    const maxRows = smaller(this.bounds.maxRows, request.maxRows);
    if (maxRows !== this.bounds.maxRows) return { maxRows };
    const allowed = this.bounds.maxRows.toLocaleString('en-US');
    return {
      maxRows,
      maxRowsHint: `restart the daemon with a larger --query-max-rows (serve/schedule; it allows ${allowed} rows)`,
    };
  }

  /** Refuses a query beyond the workers and the line, saying when a place is sure to free. */
  private admit(): void {
    if (this.admitted.size < this.workers + this.queueLength) return;
    const soonest = Math.min(...this.admitted.values());
    const retryAfterMs = Math.max(1000, soonest - this.now() + QUERY_KILL_GRACE_MS);
    throw new DaemonBusyError(
      `the daemon is busy: ${this.pool.running} queries running and ${this.admitted.size - this.pool.running} waiting (at most ${this.workers} and ${this.queueLength}); try again in ${Math.ceil(retryAfterMs / 1000)} s, when the time limit of one of them ends it at the latest`,
      retryAfterMs,
    );
  }

  /** `fresh`, given up when the query's signal aborts first (the copy goes on for the queries after it). */
  private freshBefore(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      this.fresh()
        .then(resolve, reject)
        .finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /**
   * The copy holds every change committed before this call: copied again only when something changed, and a
   * copy already under way serves only if it started after those changes (one copy serves the queries that wait).
   */
  private async fresh(): Promise<void> {
    const wanted = this.o.warehouse.generation;
    while (this.copied === null || this.copied < wanted) {
      this.refreshing ??= this.o.warehouse
        .writeQueryCopy(this.o.copyPath)
        .then((written) => {
          this.copied = written.generation;
        })
        .finally(() => {
          this.refreshing = null;
        });
      await this.refreshing;
    }
  }

  /** Cancels every query (their worker processes are ended), then removes the copy. */
  async close(): Promise<void> {
    this.closed = true;
    for (const control of this.admitted.keys()) control.abort(new Error('the daemon is stopping'));
    await this.pool.close('query cancelled: the daemon is stopping');
    await this.refreshing?.catch(() => undefined);
    rmSync(this.o.copyPath, { force: true });
    rmSync(`${this.o.copyPath}.wal`, { force: true });
  }
}

function reasonText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason ?? 'stopped');
}
