import { LIST_CALL_CREDITS } from '../../connectors/service.js';
import type { ResolvedStream } from '../../connectors/types.js';
import type { CursorState, ScopeRef } from '../warehouse/index.js';
import { hoursBetween, parseTimestampUtc } from './clock.js';
import { sweepScopeKey } from './scope.js';
import type { SyncMode, WalkMode } from './types.js';
import { ORIGIN, type Window } from './window.js';
import type { WorkItem } from './work-item.js';

/** What the planner knows about an event scope (from the `events` table). */
export interface EventInfo {
  id: number;
  status: string | null;
  startDate: string | null;
  endDate: string | null;
  createdAt: string | null;
}

export interface PlanContext {
  mode: SyncMode;
  window: Window;
  now: Date;
  cursors: ReadonlyMap<string, CursorState>;
  /** When this run finishes an earlier partial run: scopes that run completed are not walked again. */
  resumedStartedAt: Date | null;
  snapshotEveryHours: number;
  fullSnapshotEveryHours: number;
  pastEventDays: number;
  pastEventPollHours: number;
  auditStart: 'event-created' | string;
}

export function cursorId(stream: string, scope: string): string {
  return `${stream}|${scope}`;
}

/** Cursor timestamps are written by the warehouse in UTC record format; tolerate ISO too. */
function completedAt(cursor: CursorState): Date {
  return /[zZ]|[+-]\d\d:?\d\d$/.test(cursor.updatedAt)
    ? new Date(cursor.updatedAt)
    : parseTimestampUtc(cursor.updatedAt);
}

/** What ranking an event needs of the plan: the clock and where "past" begins. */
type RankContext = Pick<PlanContext, 'now' | 'pastEventDays'>;

function isPastEvent(event: EventInfo | undefined, ctx: RankContext): boolean {
  if (!event?.endDate) return false;
  const ended = parseTimestampUtc(event.endDate.length === 10 ? `${event.endDate} 23:59:59` : event.endDate);
  return (ctx.now.getTime() - ended.getTime()) / 86_400_000 > ctx.pastEventDays;
}

/** Live and upcoming events first (0), then recent past ones (1), then those past `pastEventDays` (2). */
export function eventRank(event: EventInfo | undefined, ctx: RankContext): number {
  if (!event) return 0;
  const today = ctx.now.toISOString().slice(0, 10);
  const upcoming = event.status === 'live' || (event.startDate !== null && event.startDate.slice(0, 10) >= today);
  if (upcoming) return 0;
  return isPastEvent(event, ctx) ? 2 : 1;
}

/**
 * The order of an event's work: its rank, then, among past events, the one that ended most recently first (a
 * fraction below 1 growing with the days since it ended): what a reader of a catch-up wants exact soonest.
 */
export function eventOrder(event: EventInfo | undefined, ctx: RankContext): number {
  const rank = eventRank(event, ctx);
  if (rank === 0 || !event?.endDate) return rank;
  const ended = parseTimestampUtc(event.endDate.length === 10 ? `${event.endDate} 23:59:59` : event.endDate);
  const days = Math.max(0, (ctx.now.getTime() - ended.getTime()) / 86_400_000);
  return rank + days / (days + 365);
}

const MODE_RANK: Record<WalkMode, number> = {
  incremental: 0,
  audit: 0,
  refresh: 0,
  backfill: 1,
  snapshot: 1,
  sweep: 3,
  check: 3,
};

/** Whole reads (a snapshot, a backfill) queue at this priority and above, after every poll. */
export const FULL_READ_PRIORITY = 10;

function price(pages: number | null | undefined): number {
  return LIST_CALL_CREDITS * Math.max(1, pages ?? 1);
}

/** The fields every kind's item shares. */
type ItemBase = Pick<WorkItem, 'stream' | 'scope' | 'cursorKey' | 'to' | 'previous' | 'customFieldNames'>;

/** What a kind's planner is given once the rules all kinds share have not settled the item. */
interface KindPlanInput {
  stream: ResolvedStream;
  cursor: CursorState | null;
  ctx: PlanContext;
  event: EventInfo | undefined;
  base: ItemBase;
  /** The event's order (eventOrder): live and upcoming first, then past events by how recently they ended. */
  rank: number;
}

/** A kind's own planning rules (see stream-kinds.ts). */
export type KindPlanner = (input: KindPlanInput) => WorkItem | null;

/** A kind's delete sweep, or null for kinds without one. */
export type SweepPlanner = (
  stream: ResolvedStream,
  scope: ScopeRef,
  ctx: PlanContext,
  policy: SweepPolicy,
  event?: EventInfo,
) => WorkItem | null;

/** When a scope's delete sweep is planned: `force` (now), when due every `everyHours`, or checked (`check`). */
export interface SweepPolicy {
  force: boolean;
  everyHours: number;
  /** Where no sweep is due, a delete check (one call) instead of nothing. */
  check?: boolean;
}

/**
 * The item for one stream and scope, or null when there is nothing to do. The rules every kind shares come first
 * (already done by the run this one resumes, an open walk to finish, a past event not yet due); then the kind's own.
 */
export function planItemWith(
  planKind: KindPlanner,
  stream: ResolvedStream,
  scope: ScopeRef,
  ctx: PlanContext,
  extra: { event?: EventInfo; customFieldNames?: readonly string[] } = {},
): WorkItem | null {
  const cursor = ctx.cursors.get(cursorId(stream.name, scope.key)) ?? null;
  const open = cursor?.walk ?? null;
  const resumedDone =
    ctx.resumedStartedAt !== null && cursor !== null && !open && completedAt(cursor) >= ctx.resumedStartedAt;
  if (resumedDone) return null;

  const base: ItemBase = {
    stream,
    scope,
    cursorKey: scope.key,
    to: ctx.window.signpost,
    previous: cursor,
    customFieldNames: extra.customFieldNames,
  };
  const rank = eventOrder(extra.event, ctx);

  if (open) {
    // An earlier run stopped inside this walk: finish it, in its own window.
    const range = ctx.window.resumed(open);
    return {
      ...base,
      mode: open.mode,
      from: range.from,
      to: range.to,
      resume: open,
      price: price(1),
      priority: MODE_RANK[open.mode] * 10 + rank,
    };
  }

  const incrementalTier = ctx.mode === 'incremental' && cursor !== null;
  if (incrementalTier && Math.floor(rank) === 2 && hoursBetween(cursor.updatedAt, ctx.now) < ctx.pastEventPollHours)
    return null;
  return planKind({ stream, cursor, ctx, event: extra.event, base, rank });
}

/** An audit log: one window from the watermark (or the configured start) to the signpost. */
export function planAuditItem({ cursor, ctx, event, base, rank }: KindPlanInput): WorkItem | null {
  const start =
    ctx.mode === 'incremental' && cursor?.watermark
      ? cursor.watermark
      : ctx.auditStart === 'event-created'
        ? (event?.createdAt ?? ORIGIN)
        : ctx.auditStart;
  const range = ctx.window.rangeFrom(start);
  if (!range) return null;
  return { ...base, mode: 'audit', from: range.from, resume: null, price: price(1), priority: rank };
}

/** A list: a refresh through the parent, a snapshot, an incremental window or a backfill. */
export function planListItem({ stream, cursor, ctx, base, rank }: KindPlanInput): WorkItem | null {
  // A whole read from the start (a snapshot, or a backfill), priced by its last pages and queued after the rest.
  const fullRead = (mode: 'snapshot' | 'backfill') => ({
    ...base,
    mode,
    from: null,
    resume: null,
    price: price(cursor?.lastPages),
    priority: FULL_READ_PRIORITY + rank,
  });

  if (!stream.cursor && stream.refreshByParent && ctx.mode === 'incremental' && cursor?.watermark) {
    const fullDue =
      cursor.lastSweepAt == null || hoursBetween(cursor.lastSweepAt, ctx.now) >= ctx.fullSnapshotEveryHours;
    if (!fullDue) {
      const range = ctx.window.rangeFrom(cursor.watermark);
      if (!range) return null;
      return { ...base, mode: 'refresh', from: range.from, resume: null, price: price(1), priority: rank };
    }
  }

  if (!stream.cursor) {
    const fresh =
      !stream.refreshByParent &&
      ctx.mode === 'incremental' &&
      cursor?.lastSweepAt != null &&
      hoursBetween(cursor.lastSweepAt, ctx.now) < ctx.snapshotEveryHours;
    if (fresh) return null;
    return fullRead('snapshot');
  }

  if (ctx.mode === 'incremental' && cursor?.watermark) {
    const range = ctx.window.rangeFrom(cursor.watermark);
    if (!range) return null;
    return { ...base, mode: 'incremental', from: range.from, resume: null, price: price(1), priority: rank };
  }
  return fullRead('backfill');
}

/** A delete sweep by id of a cursor stream's scope, or null when not due (or the stream is not keyed by id alone). */
export const planIdSweep: SweepPlanner = (stream, scope, ctx, policy, event) => {
  if (!stream.cursor || stream.key.length !== 1 || stream.key[0] !== 'id') return null;
  const key = sweepScopeKey(scope);
  const cursor = ctx.cursors.get(cursorId(stream.name, key)) ?? null;
  const open = cursor?.walk ?? null;
  if (!open) {
    // A complete backfill of the scope is a sweep too (it records every id it sees).
    const main = ctx.cursors.get(cursorId(stream.name, scope.key));
    const last = [cursor?.lastSweepAt, main?.lastSweepAt]
      .filter((t): t is string => !!t)
      .sort()
      .pop();
    if (!main?.watermark) return null; // never read completely: nothing stored to sweep yet
    const due = policy.force || !last || hoursBetween(last, ctx.now) >= policy.everyHours;
    if (!due && !policy.check) return null;
    if (ctx.resumedStartedAt !== null && cursor !== null && completedAt(cursor) >= ctx.resumedStartedAt) return null;
    if (!due) return { ...sweepItem(stream, scope, ctx, cursor, open, event), mode: 'check', price: price(1) };
  }
  return sweepItem(stream, scope, ctx, cursor, open, event);
};

function sweepItem(
  stream: ResolvedStream,
  scope: ScopeRef,
  ctx: PlanContext,
  cursor: CursorState | null,
  open: CursorState['walk'],
  event: EventInfo | undefined,
): WorkItem {
  return {
    stream,
    scope,
    mode: 'sweep',
    cursorKey: sweepScopeKey(scope),
    from: null,
    to: ctx.window.signpost,
    resume: open,
    previous: cursor,
    price: price(cursor?.lastPages),
    priority: 30 + eventOrder(event, ctx),
  };
}

export function byPriority(a: WorkItem, b: WorkItem): number {
  return a.priority - b.priority;
}
