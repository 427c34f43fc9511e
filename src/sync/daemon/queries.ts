/**
 * SQL typed through the daemon (`evsync query` while `serve` or `schedule` holds the warehouse), answered so that
 * nothing a query does can hurt the daemon:
 * - it runs on a copy of the whole warehouse (query-copy.ts; made again only when something changed since the last
 *   one: ~1.3 s on `medium`, and in proportion to the file on larger ones), never on the live file: a second DuckDB instance on the live file would drop the daemon's writer lock when it
 *   closes (see `Db.openSnapshotReader`), and a query on the writer's own instance would run with file access on;
 * - on an instance of its own (sandboxed, one thread, its own memory limit), outside the warehouse's queue: the
 *   journal and the applier never wait for it;
 * - bounded: a time limit, a row and a byte bound on the result (read a chunk at a time, so a huge result stops at
 *   the bound instead of filling the heap), and cancelled (DuckDB's interrupt) when the client goes away or the
 *   daemon stops.
 */
import { rmSync } from 'node:fs';
import {
  type JsonQueryResult,
  QueryCancelledError,
  removeQueryCopyLeftovers,
  type Warehouse,
  Warehouse as WarehouseClass,
} from '../../warehouse/index.js';

export interface QueryBounds {
  /** Most rows a result may have. */
  maxRows: number;
  /** Most bytes a result may take as JSON. */
  maxBytes: number;
  /** Longest a query may run, in milliseconds. */
  timeoutMs: number;
}

/** What one query through the daemon may use unless the daemon was started with other bounds. */
export const DEFAULT_QUERY_BOUNDS: QueryBounds = {
  maxRows: 1_000_000,
  maxBytes: 64 * 1024 * 1024,
  timeoutMs: 5 * 60_000,
};

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
  /** DuckDB's memory limit for one query (default 512MB; there is no spill). */
  memoryLimit?: string;
}

function smaller(a: number, b: number | undefined): number {
  return b !== undefined && b > 0 && b < a ? b : a;
}

export class QueryService {
  private readonly bounds: QueryBounds;
  private copied: number | null = null;
  private refreshing: Promise<void> | null = null;
  private readonly running = new Set<AbortController>();
  private closed = false;

  constructor(private readonly o: QueryServiceOptions) {
    this.bounds = { ...DEFAULT_QUERY_BOUNDS, ...o.bounds };
    removeQueryCopyLeftovers(o.copyPath);
  }

  /** Queries running now. */
  get active(): number {
    return this.running.size;
  }

  /** Answers one query; `signal` aborts when the client goes away. */
  async query(request: DaemonQuery, signal?: AbortSignal): Promise<JsonQueryResult> {
    if (this.closed) throw new QueryCancelledError('query cancelled: the daemon is stopping');
    const control = new AbortController();
    const timeoutMs = smaller(this.bounds.timeoutMs, request.timeoutMs);
    const timer = setTimeout(
      () => control.abort(new Error(`it ran longer than ${Math.round(timeoutMs / 1000)} s (the time limit)`)),
      timeoutMs,
    );
    timer.unref();
    const onClientGone = () => control.abort(new Error('the client went away'));
    signal?.addEventListener('abort', onClientGone, { once: true });
    this.running.add(control);
    try {
      await this.fresh();
      if (control.signal.aborted) throw new QueryCancelledError(`query cancelled: ${String(control.signal.reason)}`);
      return await WarehouseClass.querySnapshot(this.o.copyPath, request.sql, {
        form: request.form,
        sandbox: { allowRead: request.allowRead },
        limits: {
          maxRows: smaller(this.bounds.maxRows, request.maxRows),
          maxBytes: this.bounds.maxBytes,
          signal: control.signal,
        },
        threads: 1,
        memoryLimit: this.o.memoryLimit ?? '512MB',
      });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onClientGone);
      this.running.delete(control);
    }
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

  /** Cancels every running query, then removes the copy. */
  async close(): Promise<void> {
    this.closed = true;
    for (const control of this.running) control.abort(new Error('the daemon is stopping'));
    await this.refreshing?.catch(() => undefined);
    rmSync(this.o.copyPath, { force: true });
    rmSync(`${this.o.copyPath}.wal`, { force: true });
  }
}
