/**
 * One query worker process seen from the daemon: started with `fork` (query-worker.ts), asked one query at a time,
 * and ended (SIGKILL) when a query it runs was cancelled and DuckDB's interrupt did not end it at once: a statement
 * that ignores interrupts must not keep a worker, a core or the daemon's shutdown. A worker runs at a lower CPU
 * priority than the daemon, so a machine full of queries still gives the receiver and the writer their turn.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { setPriority } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  type JsonQueryResult,
  QueryCancelledError,
  QueryRefusedError,
  QueryTooLargeError,
} from '../warehouse/index.js';
import { type FromWorker, readFromWorker, type ToWorker, type WorkerQuery } from './query-protocol.js';

/** Niceness of a worker (0 is the daemon's; 19 the lowest): queries are what waits when the machine is full. */
const WORKER_NICENESS = 10;
/** Enough of a dying worker's stderr to say why it died. */
const STDERR_TAIL = 2048;

/** The worker's entry beside this file; from the sources (tsx, tests) it is the .ts file, run through tsx. */
function workerEntry(): { file: string; execArgv: string[] } {
  const self = fileURLToPath(import.meta.url);
  const fromSource = self.endsWith('.ts');
  const file = self.replace(/query-worker-process\.(ts|js)$/, `query-worker.${fromSource ? 'ts' : 'js'}`);
  // tsx named by its resolved location: a bare `--import tsx` is looked up from the daemon's working folder.
  const tsx = fromSource ? pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href : null;
  return { file, execArgv: tsx ? ['--import', tsx] : [] };
}

/** A worker error as the class an in-process query raises (the CLI explains each the same way). */
function errorOf(message: Extract<FromWorker, { ok: false }>): Error {
  switch (message.kind) {
    case 'refused':
      return new QueryRefusedError(message.message);
    case 'cancelled':
      return new QueryCancelledError(message.message);
    case 'too-large':
      return new QueryTooLargeError(message.message);
    default:
      return new Error(message.message);
  }
}

interface Pending {
  id: number;
  resolve: (result: JsonQueryResult) => void;
  reject: (err: Error) => void;
}

export class QueryWorkerProcess {
  private readonly child: ChildProcess;
  private readonly ready: Promise<void>;
  private pending: Pending | null = null;
  private stderrTail = '';
  /** Exited, or being ended: never given another query. */
  private dead = false;
  /** Resolves once the process has exited. */
  readonly exited: Promise<void>;

  constructor(private readonly killGraceMs: number) {
    const entry = workerEntry();
    this.child = fork(entry.file, [], {
      execArgv: entry.execArgv,
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    try {
      if (this.child.pid !== undefined) setPriority(this.child.pid, WORKER_NICENESS);
    } catch {
      // A platform or a sandbox that refuses it: the worker runs at the daemon's priority.
    }
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL);
    });
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    this.ready = new Promise((resolve, reject) => {
      const onMessage = (raw: unknown) => {
        const message = readFromWorker(raw);
        if (message?.type === 'ready') resolve();
        else if (message?.type === 'result') this.settle(message);
      };
      this.child.on('message', onMessage);
      this.child.once('error', reject);
      void this.exited.then(() => {
        this.dead = true;
        const why = new Error(`the query worker ended${this.stderrTail ? `: ${this.stderrTail.trim()}` : ''}`);
        reject(why);
        this.pending?.reject(why);
        this.pending = null;
      });
    });
    // A worker that dies before it is ready is reported by `ask`; this keeps the rejection from going unhandled.
    this.ready.catch(() => undefined);
  }

  /** Whether the process is gone (ended by the daemon, or crashed). */
  get isDead(): boolean {
    return this.dead;
  }

  /** The process id (for tests and the status of queries). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * Runs one query. Aborting `signal` asks the worker to interrupt it; if no answer comes within the grace the
   * process is ended, and the query rejects with the abort's reason either way.
   */
  async ask(query: Omit<WorkerQuery, 'type'>, signal: AbortSignal): Promise<JsonQueryResult> {
    await this.ready;
    if (this.pending) throw new Error('a query worker answers one query at a time');
    const answered = new Promise<JsonQueryResult>((resolve, reject) => {
      this.pending = { id: query.id, resolve, reject };
    });
    let killer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason);
      this.post({ type: 'cancel', id: query.id, reason });
      killer = setTimeout(() => this.kill(`query cancelled: ${reason}`), this.killGraceMs);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    this.post({ type: 'query', ...query });
    try {
      return await answered;
    } finally {
      signal.removeEventListener('abort', onAbort);
      if (killer) clearTimeout(killer);
    }
  }

  /** Ends the process now; a query it runs rejects with `why` (a QueryCancelledError). */
  kill(why: string): void {
    const pending = this.pending;
    this.pending = null;
    pending?.reject(new QueryCancelledError(why));
    if (!this.dead) this.child.kill('SIGKILL');
    this.dead = true;
  }

  private settle(message: Extract<FromWorker, { type: 'result' }>): void {
    const pending = this.pending;
    if (!pending || pending.id !== message.id) return;
    this.pending = null;
    if (message.ok) pending.resolve(message.result);
    else pending.reject(errorOf(message));
  }

  private post(message: ToWorker): void {
    if (!this.dead && this.child.connected) this.child.send(message);
  }
}
