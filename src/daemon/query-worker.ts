/**
 * A query worker: a process of its own that answers the daemon's queries one at a time (query-pool.ts starts it
 * with `fork`). Each query opens the query copy read-only and sandboxed (Warehouse.querySnapshot), so nothing a
 * query does (its CPU, its memory, DuckDB's threads, a statement that ignores interrupts) can take what the
 * daemon's writer, journal and receiver need: the worst a query can do is be ended with its process.
 *
 * It exits when the daemon goes away (the IPC channel closes), so a daemon killed with SIGKILL leaves no worker.
 */
import { QueryCancelledError, QueryRefusedError, QueryTooLargeError, Warehouse } from '../warehouse/index.js';
import { type FromWorker, readToWorker, type WorkerErrorKind, type WorkerQuery } from './query-protocol.js';

const running = new Map<number, AbortController>();

function send(message: FromWorker): void {
  process.send?.(message);
}

function kindOf(err: unknown): WorkerErrorKind {
  if (err instanceof QueryRefusedError) return 'refused';
  if (err instanceof QueryCancelledError) return 'cancelled';
  if (err instanceof QueryTooLargeError) return 'too-large';
  return 'failed';
}

async function answer(q: WorkerQuery): Promise<void> {
  const control = new AbortController();
  running.set(q.id, control);
  try {
    const result = await Warehouse.querySnapshot(q.copyPath, q.sql, {
      form: q.form,
      sandbox: { allowRead: q.allowRead },
      limits: {
        maxRows: q.maxRows,
        maxBytes: q.maxBytes,
        ...(q.maxRowsHint ? { maxRowsHint: q.maxRowsHint } : {}),
        ...(q.maxBytesHint ? { maxBytesHint: q.maxBytesHint } : {}),
        signal: control.signal,
      },
      threads: 1,
      memoryLimit: q.memoryLimit,
    });
    send({ type: 'result', id: q.id, ok: true, result });
  } catch (err) {
    send({
      type: 'result',
      id: q.id,
      ok: false,
      kind: kindOf(err),
      message: err instanceof Error ? err.message : String(err),
    });
  } finally {
    running.delete(q.id);
  }
}

process.on('message', (raw: unknown) => {
  const message = readToWorker(raw);
  if (!message) return;
  if (message.type === 'cancel') running.get(message.id)?.abort(new Error(message.reason));
  else void answer(message);
});
// The daemon is gone (stopped, or killed): nothing is left to answer.
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
