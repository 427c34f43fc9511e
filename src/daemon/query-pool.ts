/**
 * The daemon's query workers: at most `size` processes (query-worker-process.ts), each answering one query at a
 * time, started when a query needs one and kept for the next. A query waits in line (first come, first served)
 * while every worker is busy; it leaves the line when its signal aborts (its time limit, its client gone), so a
 * queued query can time out. How many may wait is the caller's bound (QueryService admits them).
 */
import type { JsonQueryResult } from '../warehouse/index.js';
import type { WorkerQuery } from './query-protocol.js';
import { QueryWorkerProcess } from './query-worker-process.js';

interface QueryPoolOptions {
  /** Worker processes at most. */
  size: number;
  /** How long a cancelled query's worker gets to end it before its process is ended. */
  killGraceMs: number;
}

interface Waiting {
  start: (worker: QueryWorkerProcess) => void;
  refuse: (why: Error) => void;
}

export class QueryPool {
  private readonly idle: QueryWorkerProcess[] = [];
  private readonly busy = new Set<QueryWorkerProcess>();
  private readonly line: Waiting[] = [];
  private closed = false;

  constructor(private readonly o: QueryPoolOptions) {}

  /** Queries running in a worker now. */
  get running(): number {
    return this.busy.size;
  }

  /** Queries waiting for a worker. */
  get waiting(): number {
    return this.line.length;
  }

  /** Worker processes alive (idle or busy). */
  get processes(): number {
    return this.idle.length + this.busy.size;
  }

  /** Runs `query` in a worker once one is free; rejects with the signal's reason if it aborts first. */
  async run(query: Omit<WorkerQuery, 'type'>, signal: AbortSignal): Promise<JsonQueryResult> {
    const worker = await this.take(signal);
    try {
      return await worker.ask(query, signal);
    } finally {
      this.give(worker);
    }
  }

  /** Ends every worker (their queries reject) and refuses what waits; resolves once every process has exited. */
  async close(why: string): Promise<void> {
    this.closed = true;
    for (const waiting of this.line.splice(0)) waiting.refuse(new Error(why));
    const all = [...this.idle, ...this.busy];
    for (const worker of all) worker.kill(why);
    await Promise.all(all.map((w) => w.exited));
  }

  private take(signal: AbortSignal): Promise<QueryWorkerProcess> {
    if (this.closed) return Promise.reject(new Error(`the query workers are closed`));
    if (signal.aborted) return Promise.reject(signal.reason);
    const ready = this.free();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      const waiting: Waiting = {
        start: (worker) => {
          signal.removeEventListener('abort', onAbort);
          resolve(worker);
        },
        refuse: (why) => {
          signal.removeEventListener('abort', onAbort);
          reject(why);
        },
      };
      const onAbort = () => {
        const at = this.line.indexOf(waiting);
        if (at >= 0) this.line.splice(at, 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.line.push(waiting);
    });
  }

  /** An idle worker, or a new one while fewer than `size` exist; marked busy. Null when all are busy. */
  private free(): QueryWorkerProcess | null {
    let worker = this.idle.pop();
    while (worker?.isDead) worker = this.idle.pop();
    if (!worker && this.busy.size < this.o.size) worker = new QueryWorkerProcess(this.o.killGraceMs);
    if (worker) this.busy.add(worker);
    return worker ?? null;
  }

  /** A worker back from a query: to the next in line, else idle (a dead one is dropped; the next query starts one). */
  private give(worker: QueryWorkerProcess): void {
    this.busy.delete(worker);
    if (this.closed) {
      worker.kill('the daemon is stopping');
      return;
    }
    if (!worker.isDead) this.idle.push(worker);
    for (;;) {
      const next = this.line[0];
      if (!next) return;
      const ready = this.free();
      if (!ready) return;
      this.line.shift();
      next.start(ready);
    }
  }
}
