import type { Warehouse } from '../warehouse/index.js';
import { parseTimestampUtc } from './clock.js';

export interface ResumableRun {
  runId: string;
  signpost: string;
  startedAt: Date;
}

/** Statuses of a run that did not finish its work and whose signpost the next run of its kind carries on. */
const UNFINISHED = new Set(['partial', 'running', 'interrupted']);

/**
 * The last run of this kind, if it did not finish its work: it ended partial (budget, max wait, stop request, a
 * counting plan), never finished (the process was killed: its row still says running, and becomes interrupted), or
 * failed because the service went away (marked resumable). The next run reuses its signpost and skips the scopes it
 * completed, so together the two spend what one uninterrupted run would: no page is bought twice.
 */
export async function findResumableRun(warehouse: Warehouse, kind: string): Promise<ResumableRun | null> {
  const [last] = await warehouse.runs.recent({ limit: 1, kind });
  if (!last) return null;
  if (!UNFINISHED.has(last.status) && !(last.status === 'failed' && last.resumable)) return null;
  const signpost = last.args.signpost;
  if (typeof signpost !== 'string') return null;
  // One process holds the database at a time, so a run still marked running was killed: say so in its row.
  if (last.status === 'running') await warehouse.runs.markInterrupted(last.runId);
  // A run that resumed another carries the first run's start, so a chain of partial runs skips every scope any of
  // them completed, not only those of the last one.
  const originText = last.args.originStartedAt;
  const origin = typeof originText === 'string' ? new Date(originText) : null;
  return {
    runId: last.runId,
    signpost,
    startedAt: origin && !Number.isNaN(origin.getTime()) ? origin : parseTimestampUtc(last.startedAt.slice(0, 19)),
  };
}
