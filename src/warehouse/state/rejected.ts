/**
 * Records a run could not load (`_evsync.rejected`, declared in bookkeeping.ts): written by the load path with the
 * page they came in, counted per stream by `status`.
 */
import type { Db } from '../db/connection.js';
import { duckJson, utcNow } from '../db/sql.js';
import { json, tableExists } from './bookkeeping.js';

function rawJson(raw: unknown): string {
  if (raw === undefined) return 'null';
  return json(raw);
}

export async function recordRejected(
  db: Db,
  runId: string,
  stream: string,
  scope: string,
  rejected: readonly { raw: unknown; reason: string }[],
): Promise<void> {
  if (rejected.length === 0) return;
  const at = utcNow(db.now);
  // One statement for the whole list (usually a handful): a JSON array of [raw, reason] pairs unnested in SQL.
  const payload = duckJson(rejected.map((r) => [rawJson(r.raw), String(r.reason)]));
  // A record rejected again on a later run (the same raw JSON for the same reason in the same scope) is kept once.
  await db.run(
    `INSERT INTO _evsync.rejected (run_id, stream, scope, raw, reason, rejected_at)
     SELECT DISTINCT ?, ?, ?, CAST(p->>0 AS JSON), p->>1, CAST(? AS TIMESTAMP)
       FROM (SELECT unnest(CAST(CAST(? AS JSON) AS JSON[])) AS p) AS page
      WHERE NOT EXISTS (SELECT 1 FROM _evsync.rejected r WHERE r.stream = ? AND r.scope IS NOT DISTINCT FROM ?
                          AND r.reason = (page.p->>1) AND CAST(r.raw AS VARCHAR) = CAST(CAST(page.p->>0 AS JSON) AS VARCHAR))`,
    [runId, stream, scope, at, payload, stream, scope],
  );
}

/** Rejected records per stream. */
export async function rejectedCounts(db: Db): Promise<Record<string, number>> {
  if (!(await tableExists(db, '_evsync', 'rejected'))) return {};
  const r = await db.query(`SELECT stream, count(*) AS n FROM _evsync.rejected GROUP BY stream ORDER BY stream`);
  return Object.fromEntries(r.rows.map((row) => [String(row.stream), Number(row.n)]));
}
