/**
 * The defaults of queries through the daemon, stated once: the query service applies them, and the daemon's
 * `--help` and the README read them from here.
 */

/**
 * The largest result a query through the daemon may return, as JSON text (counted in characters, as the query
 * service counts a result and as the client reads the answer off the socket): the service's byte bound and the
 * client's read bound both follow it, so the client never stops reading an answer the service allowed.
 */
export const QUERY_RESULT_MAX_CHARS = 64 * 1024 * 1024;

/** What one query may use unless the daemon was started with other bounds. */
export const DEFAULT_QUERY_BOUNDS = {
  /** Most rows a result may have (`--query-max-rows`). */
  maxRows: 1_000_000,
  /** Most bytes a result may take as JSON. */
  maxBytes: QUERY_RESULT_MAX_CHARS,
  /** Longest a query may take from its arrival, in milliseconds (`--query-timeout`). */
  timeoutMs: 5 * 60_000,
} as const;

/** Worker processes by default (`--query-workers`): one per core of a 2-core machine. */
export const DEFAULT_QUERY_WORKERS = 2;
/** Queries that may wait for a worker by default (`--query-queue`): a dashboard of twenty tiles fits, with room. */
export const DEFAULT_QUERY_QUEUE = 32;
/** How long a cancelled query gets to stop through DuckDB's interrupt before its worker process is ended. */
export const QUERY_KILL_GRACE_MS = 500;
/** DuckDB's memory limit in a worker (there is no spill: a query that needs more fails, alone). */
export const QUERY_MEMORY_LIMIT = '512MB';
