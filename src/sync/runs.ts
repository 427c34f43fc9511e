import type { Warehouse } from '../warehouse/index.js';
import { parseTimestampUtc } from './clock.js';

export interface ResumableRun {
  runId: string;
  signpost: string;
  startedAt: Date;
}

/**
 * The last run of this kind, if it did not finish its work: it ended partial (budget, max wait, stop request) or
 * never finished (the process was killed). The next run reuses its signpost and skips the scopes it completed, so
 * together the two spend what one uninterrupted run would. A failed run is not resumed: its failure may persist,
 * and its open walks resume from their checkpoints anyway.
 */
export async function findResumableRun(warehouse: Warehouse, kind: string): Promise<ResumableRun | null> {
  const r = await warehouse.query(
    `SELECT run_id, status, CAST(started_at AS VARCHAR) AS started_at, CAST(args AS VARCHAR) AS args
       FROM _evsync.runs WHERE kind = ? ORDER BY started_at DESC LIMIT 1`,
    [kind],
  );
  const last = r.rows[0];
  if (!last || (last.status !== 'partial' && last.status !== 'running' && last.status !== null)) return null;
  let signpost: unknown;
  try {
    signpost = (JSON.parse(String(last.args ?? '{}')) as { signpost?: unknown }).signpost;
  } catch {
    return null;
  }
  if (typeof signpost !== 'string') return null;
  return {
    runId: String(last.run_id),
    signpost,
    startedAt: parseTimestampUtc(String(last.started_at).slice(0, 19)),
  };
}
