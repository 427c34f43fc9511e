/**
 * The messages between the daemon and a query worker process (query-worker.ts), over Node's IPC channel: one query
 * at a time per worker, identified by its id so that a late answer to a query already given up is ignored.
 */
import type { JsonQueryResult } from '../warehouse/index.js';

/** What a worker needs to answer one query: the copy to open, the SQL and every bound. */
export interface WorkerQuery {
  type: 'query';
  id: number;
  /** The query copy (a file of its own, opened read-only and sandboxed). */
  copyPath: string;
  sql: string;
  form: 'json' | 'text';
  allowRead: string[];
  maxRows: number;
  maxBytes: number;
  /** How the row and byte bounds are named in a refusal (the bound that binds, and how to change it). */
  maxRowsHint?: string;
  maxBytesHint?: string;
  memoryLimit: string;
}

/** Asks the worker to interrupt the query it runs (DuckDB's interrupt); the daemon ends the process if that hangs. */
interface WorkerCancel {
  type: 'cancel';
  id: number;
  reason: string;
}

export type ToWorker = WorkerQuery | WorkerCancel;

/** The error kinds a worker reports, so that the daemon raises the same error classes as an in-process query. */
export type WorkerErrorKind = 'refused' | 'cancelled' | 'too-large' | 'failed';

export type FromWorker =
  | { type: 'ready' }
  | { type: 'result'; id: number; ok: true; result: JsonQueryResult }
  | { type: 'result'; id: number; ok: false; kind: WorkerErrorKind; message: string };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** A message from a worker, or null when it is not one (a worker is our own code, but IPC is still a boundary). */
export function readFromWorker(v: unknown): FromWorker | null {
  if (!isRecord(v)) return null;
  if (v.type === 'ready') return { type: 'ready' };
  if (v.type !== 'result' || typeof v.id !== 'number') return null;
  if (v.ok === true && isRecord(v.result)) return v as unknown as FromWorker;
  if (v.ok === false && typeof v.message === 'string') return v as unknown as FromWorker;
  return null;
}

/** A message to a worker, or null when it is not one. */
export function readToWorker(v: unknown): ToWorker | null {
  if (!isRecord(v) || typeof v.id !== 'number') return null;
  if (v.type === 'cancel' && typeof v.reason === 'string') return v as unknown as WorkerCancel;
  if (v.type === 'query' && typeof v.sql === 'string' && typeof v.copyPath === 'string') {
    return v as unknown as WorkerQuery;
  }
  return null;
}
