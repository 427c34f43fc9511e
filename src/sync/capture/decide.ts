/**
 * What to do with the deliveries of one stream in one batch, given what the table holds: pure, so the ordering rules
 * are tested on their own.
 *
 * Deliveries are at-least-once and unordered. Per record, the newest delivery wins: ordered by its version (the
 * record's `updated_at`; for a delete, or a stream without `updated_at`, the delivery's `datetime`), then by
 * `datetime`, then a delete after an update after an insert. The winner is then compared with the stored row:
 * - older than the row (or than its delete mark): stale, nothing written;
 * - as old as the row: the same version, or two changes in one second that cannot be told apart: re-read;
 * - newer, or no row: written from the payload when it carries every column the scope's lists return (`json`
 *   deliveries of all fields), else re-read by id;
 * - a delete: the row is marked deleted at the delivery's time; without a row, a tombstone is written (from the
 *   payload's last state) and marked, so a late insert of that record stays out.
 */
import type { Action } from './payload.js';

export interface Candidate {
  seq: number;
  action: Action;
  recordId: number;
  eventId: number | null;
  /** The record's `updated_at` as an instant (null: the stream has none, or the record does not say). */
  updatedMs: number | null;
  /** The delivery's `datetime` as an instant. */
  datetimeMs: number | null;
  /** The payload carries every column its scope's lists return, in JSON types: it can be written as it is. */
  complete: boolean;
  bodySha256: string;
}

export interface StoredState {
  updatedMs: number | null;
  deletedMs: number | null;
}

type Outcome = 'payload' | 'reread' | 'deleted' | 'tombstone' | 'stale' | 'superseded' | 'unchanged';

export interface Decision {
  /** The delivery that decides the record's fate. */
  winner: Candidate;
  outcome: Outcome;
  /** For deletes and tombstones: when the record was deleted (ms). */
  deletedAtMs?: number;
  /** Deliveries of the same record that lost to the winner. */
  losers: Candidate[];
}

const RANK: Record<Action, number> = { insert: 0, update: 1, delete: 2 };

/** The time a delivery's record version stands for. */
function versionMs(c: Candidate): number | null {
  return c.action === 'delete' ? c.datetimeMs : (c.updatedMs ?? c.datetimeMs);
}

function compare(a: Candidate, b: Candidate): number {
  const va = versionMs(a) ?? Number.NEGATIVE_INFINITY;
  const vb = versionMs(b) ?? Number.NEGATIVE_INFINITY;
  if (va !== vb) return va - vb;
  const da = a.datetimeMs ?? Number.NEGATIVE_INFINITY;
  const db = b.datetimeMs ?? Number.NEGATIVE_INFINITY;
  if (da !== db) return da - db;
  return RANK[a.action] - RANK[b.action];
}

interface DecideOptions {
  /** Whether the stream's table has `updated_at` (else only `datetime` orders its deliveries). */
  hasUpdatedAt: boolean;
  /**
   * Replaying deliveries already applied (after a reconciliation run that may have overwritten them): the same
   * version as the row means the row is current, so nothing is re-read.
   */
  replay?: boolean;
  /** Now (ms), for a delete without a `datetime`. */
  nowMs: number;
}

/** Decides each record of one stream: `candidates` grouped by record id, `stored` by id. */
export function decide(
  candidates: readonly Candidate[],
  stored: ReadonlyMap<number, StoredState>,
  o: DecideOptions,
): Decision[] {
  const byId = new Map<number, Candidate[]>();
  for (const c of candidates) byId.set(c.recordId, [...(byId.get(c.recordId) ?? []), c]);
  const out: Decision[] = [];
  for (const [id, list] of byId) {
    const sorted = [...list].sort(compare);
    const winner = sorted[sorted.length - 1]!;
    const losers = sorted.slice(0, -1);
    // Two different bodies of the same version and time: which is the later change is unknowable from them.
    const ambiguous = losers.some((l) => compare(l, winner) === 0 && l.bodySha256 !== winner.bodySha256);
    out.push({ ...decideOne(winner, stored.get(id), ambiguous, o), losers });
  }
  return out;
}

function decideOne(
  candidate: Candidate,
  row: StoredState | undefined,
  ambiguous: boolean,
  options: DecideOptions,
): Omit<Decision, 'losers'> {
  const versionAt = versionMs(candidate);
  if (candidate.action === 'delete') {
    const at = candidate.datetimeMs ?? options.nowMs;
    if (!row) return { winner: candidate, outcome: 'tombstone', deletedAtMs: at };
    if (row.deletedMs !== null) return { winner: candidate, outcome: 'unchanged' };
    // A row updated after the delete's time is a later version (a record restored at the service): keep it.
    if (row.updatedMs !== null && row.updatedMs > at) return { winner: candidate, outcome: 'stale' };
    return { winner: candidate, outcome: 'deleted', deletedAtMs: at };
  }
  const write: Omit<Decision, 'losers'> = {
    winner: candidate,
    outcome: candidate.complete && !ambiguous ? 'payload' : 'reread',
  };
  if (!row) return write;
  if (row.deletedMs !== null) {
    // Deleted here: only a version after the delete brings it back (a sweep may have marked it wrongly).
    return versionAt !== null && versionAt > row.deletedMs ? write : { winner: candidate, outcome: 'stale' };
  }
  if (!options.hasUpdatedAt || row.updatedMs === null || candidate.updatedMs === null) {
    // Nothing orders this delivery against the row: the payload, or the source, is the latest known.
    return options.replay ? { winner: candidate, outcome: 'unchanged' } : write;
  }
  if (candidate.updatedMs < row.updatedMs) return { winner: candidate, outcome: 'stale' };
  if (candidate.updatedMs === row.updatedMs) {
    return options.replay ? { winner: candidate, outcome: 'unchanged' } : { winner: candidate, outcome: 'reread' };
  }
  return write;
}
