/**
 * The largest result a query through the daemon may return, as JSON text (counted in characters, as the query
 * service counts a result and as the client reads the answer). The query service's default byte bound
 * (queries.ts, `DEFAULT_QUERY_BOUNDS.maxBytes`) and the client reading the answer off the socket (cli/daemon.ts)
 * both follow it (a test holds the service's default to it), so the client never stops reading an answer the
 * service allowed, nor reads four times more.
 */
export const QUERY_RESULT_MAX_CHARS = 64 * 1024 * 1024;
