import type { Warehouse } from '../warehouse/index.js';
import { parseTimestampUtc } from './clock.js';

export interface ResumableRun {
  runId: string;
  signpost: string;
  startedAt: Date;
}

/**
 * The last run of this kind, if it did not finish its work: it ended partial (budget, max wait, stop request) or
 * never finished (the process was killed: its row still says running, and becomes interrupted). The next run reuses its signpost and skips the scopes it completed, so
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
  if (!last || !['partial', 'running', 'interrupted'].includes(String(last.status))) return null;
  let args: { signpost?: unknown; originStartedAt?: unknown };
  try {
    args = JSON.parse(String(last.args ?? '{}')) as typeof args;
  } catch {
    return null;
  }
  const signpost = args.signpost;
  if (typeof signpost !== 'string') return null;
  // A run that resumed another carries the first run's start, so a chain of partial runs skips every scope any of
  // them completed, not only those of the last one.
  const origin = typeof args.originStartedAt === 'string' ? new Date(args.originStartedAt) : null;
  // One process holds the database at a time, so a run still marked running was killed: say so in its row.
  if (last.status === 'running') {
    await warehouse.query(`UPDATE _evsync.runs SET status = 'interrupted' WHERE run_id = ?`, [String(last.run_id)]);
  }
  return {
    runId: String(last.run_id),
    signpost,
    startedAt:
      origin && !Number.isNaN(origin.getTime()) ? origin : parseTimestampUtc(String(last.started_at).slice(0, 19)),
  };
}
