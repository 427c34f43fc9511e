/**
 * The sync window (not the credit window): the record times a run reads, and where each cursor stands in them.
 *
 * A run reads up to its signpost: the server's clock at the start minus the lag, written in the zone the service
 * writes record times in, since the service compares them as text (clock.ts). A cursor's watermark is where its next
 * range starts; it is caught up when it reached the signpost. An item reads one range, `from` (inclusive, null: from
 * the beginning) to `to` (exclusive), and a walk keeps the range it began with, so a run that resumes it finishes it
 * in that range, not its own. A completed walk moves its cursor's watermark to the end of its range.
 */
import type { CursorState, CursorWalk } from '../warehouse/index.js';
import { formatTimestamp } from './clock.js';
import type { WalkMode } from './types.js';

/** Record times from `from` (inclusive; null: from the beginning) to `to` (exclusive). */
export interface WindowRange {
  from: string | null;
  to: string;
}

/**
 * Where a range without a start begins when a call needs a start time (the audit log's `start_time`), and the audit
 * log's start for an event that gives no `created_at`.
 */
export const ORIGIN = '2000-01-01 00:00:00';

/** Whether a watermark reached `end`: nothing before `end` is left to read after it. */
export function reaches(watermark: string | null | undefined, end: string): boolean {
  return !!watermark && watermark >= end;
}

/** The range a walk reads: the one it began with; a walk recorded without its end reads to `end` (its item's). */
export function walkRange(walk: Pick<CursorWalk, 'from' | 'to'>, end: string): WindowRange {
  return { from: walk.from, to: walk.to ?? end };
}

/** A range as the service's search conditions on the cursor field: `from` inclusive, `to` exclusive. */
export function rangeConditions(field: string, range: WindowRange): string[] {
  const conditions = [`${field}<${range.to}`];
  if (range.from) conditions.unshift(`${field}>=${range.from}`);
  return conditions;
}

/**
 * The watermark a cursor holds once a walk of `mode` completed over a range ending at `end`: that end. A sweep (or
 * a delete check) reads ids, not changes, so it leaves the watermark where it was. A snapshot moves it too: streams
 * refreshed through their parent go on from there.
 */
export function watermarkAfter(mode: WalkMode, end: string, previous: CursorState | null): string | null {
  return mode === 'sweep' || mode === 'check' ? (previous?.watermark ?? null) : end;
}

/** One run's window: everything up to its signpost. */
export class Window {
  constructor(readonly signpost: string) {}

  /** A new run's window: up to the server's clock minus the lag, as a record time in the service's zone. */
  static endingAt(serverNow: Date, lagSeconds: number, recordTimezone: string): Window {
    return new Window(formatTimestamp(new Date(serverNow.getTime() - lagSeconds * 1000), recordTimezone));
  }

  /** Whether a cursor's watermark reached the signpost (nothing left to read in this window). */
  caughtUp(watermark: string | null | undefined): boolean {
    return reaches(watermark, this.signpost);
  }

  /** The range from `from` (a watermark, or a configured start) to the signpost; null when nothing is left. */
  rangeFrom(from: string): WindowRange | null {
    return this.caughtUp(from) ? null : { from, to: this.signpost };
  }

  /** The range of a walk an earlier run left open: its own. */
  resumed(walk: Pick<CursorWalk, 'from' | 'to'>): WindowRange {
    return walkRange(walk, this.signpost);
  }
}
