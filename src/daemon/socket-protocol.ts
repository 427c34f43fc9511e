/**
 * The messages on the warehouse's socket (socket.ts carries them), in one place for every side: the clients
 * (`status`, `query`), the daemon that answers both, and a one-shot run that answers `status` only.
 *
 * One request per connection, one JSON line each way: `{"op":"status","runs":10}` or
 * `{"op":"query","sql":"...","form":"json","allowRead":["/abs/dir"]}`; the answer is `{"ok":true,"result":...}`
 * (a status document, or a query result) or `{"ok":false,"error":"..."}`.
 */

/** A request: a status document (`runs` recent runs in it), or a query as the query service takes it. */
import { parseJsonObject } from '../../schemas/json-object.js';
import type { DaemonQuery } from './queries.js';

export type DaemonRequest = { op: 'status'; runs: number } | ({ op: 'query' } & DaemonQuery);

export type DaemonAnswer = { ok: true; result: unknown } | { ok: false; error: string };

export function parseRequest(line: string): DaemonRequest | null {
  const r = parseJsonObject(line);
  if (r === null) return null;
  if (r.op === 'status') return { op: 'status', runs: typeof r.runs === 'number' && r.runs > 0 ? r.runs : 10 };
  if (r.op === 'query' && typeof r.sql === 'string') {
    const allowRead = Array.isArray(r.allowRead) ? r.allowRead.filter((d): d is string => typeof d === 'string') : [];
    const positive = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined);
    const maxRows = positive(r.maxRows);
    const timeoutMs = positive(r.timeoutMs);
    return {
      op: 'query',
      sql: r.sql,
      form: r.form === 'text' ? 'text' : 'json',
      allowRead,
      ...(maxRows ? { maxRows } : {}),
      ...(timeoutMs ? { timeoutMs } : {}),
    };
  }
  return null;
}

/** Who holds the warehouse, as the answers name it: `evsync serve (PID 12)`, `evsync backfill (PID 9)`. */
export function holderName(command: string, pid: number): string {
  return `evsync ${command} (PID ${pid})`;
}

/**
 * A one-shot run's answer to a query: it holds the warehouse for its writes only and runs no query service (a
 * second DuckDB instance on the file would drop its lock when closed: see warehouse/copies/query-copy.ts).
 */
export function oneShotQueryRefusal(holder: string): string {
  return `${holder} holds the warehouse until it ends: a one-shot run answers \`evsync status\` but runs no query; query once it has ended, or query the read-only copy \`--snapshot <file>\` publishes (sync and backfill publish it when the run ends; serve and schedule on a cadence)`;
}
