/**
 * The bounds of queries through the daemon, as the query service and the socket's client apply them: read from the
 * daemon's settings (schemas/daemon-settings.ts), which the daemon's `--help` and the README read too.
 */
import { DAEMON_DEFAULTS } from '../../schemas/daemon-settings.js';

const Q = DAEMON_DEFAULTS.queries;

/**
 * The largest result a query through the daemon may return, as JSON text: the service's byte bound and the client's
 * read bound (socket.ts) both follow it.
 */
export const QUERY_RESULT_MAX_CHARS = Q.maxResultChars;

/** What one query may use unless the daemon was started with other bounds. */
export const DEFAULT_QUERY_BOUNDS = {
  /** Most rows a result may have (`--query-max-rows`). */
  maxRows: Q.maxRows,
  /** Most bytes a result may take as JSON. */
  maxBytes: QUERY_RESULT_MAX_CHARS,
  /** Longest a query may take from its arrival, in milliseconds (`--query-timeout`). */
  timeoutMs: Q.timeoutMs,
} as const;

/** Worker processes by default (`--query-workers`). */
export const DEFAULT_QUERY_WORKERS = Q.workers;
/** Queries that may wait for a worker by default (`--query-queue`). */
export const DEFAULT_QUERY_QUEUE = Q.queue;
/** How long a cancelled query gets to stop through DuckDB's interrupt before its worker process is ended. */
export const QUERY_KILL_GRACE_MS = Q.killGraceMs;
/** DuckDB's memory limit in a worker. */
export const QUERY_MEMORY_LIMIT = Q.memoryLimit;
