/**
 * Which events a plan estimate counts, and by what it extrapolates to the others. The events list is all an estimate
 * knows of every event before counting: each record's status and, where the account fills them in, the documented
 * size figures `target_attendance` and `capacity`. A figure given on every event in scope (and above 0 on most of
 * them) is the size the rows of the others are scaled by; without one, events are grouped by status.
 */
import type { EventSize } from '../warehouse/index.js';
import type { EventInfo } from './plan.js';

/** The size figures an estimate can scale by, in the order it tries them. */
const SIZE_FIELDS = ['target_attendance', 'capacity'] as const;
export type SizeField = (typeof SIZE_FIELDS)[number];

export interface EventSample {
  /** The events counted (page 1 of every event-scoped stream), in the order picked. */
  events: number[];
  /** What the other events are extrapolated by: a size figure of their records, or their status. */
  by: SizeField | 'status';
  /** Each event's size figure (with `by` a size field) or status group (with 'status'), by event id. */
  keys: ReadonlyMap<number, number | string>;
}

function figureOf(size: EventSize | undefined, field: SizeField): number | null {
  if (!size) return null;
  return field === 'target_attendance' ? size.targetAttendance : size.capacity;
}

/**
 * The first size field given (a number >= 0) on every event in scope and above 0 on more than half of them, with
 * its values; null when none is.
 */
export function sizeFigures(
  events: readonly EventInfo[],
  sizes: readonly EventSize[],
): { field: SizeField; values: Map<number, number> } | null {
  const byId = new Map(sizes.map((s) => [s.id, s]));
  for (const field of SIZE_FIELDS) {
    const values = new Map<number, number>();
    for (const e of events) {
      const v = figureOf(byId.get(e.id), field);
      if (v !== null && v >= 0) values.set(e.id, v);
    }
    const positive = [...values.values()].filter((v) => v > 0).length;
    if (events.length > 0 && values.size === events.length && positive * 2 > events.length) return { field, values };
  }
  return null;
}

/** `k` positions spread over `n` ordered things: the first, the last, and evenly between. */
export function spreadPositions(n: number, k: number): number[] {
  if (k >= n) return Array.from({ length: n }, (_, i) => i);
  if (k <= 1) return n > 0 && k === 1 ? [0] : [];
  const picked = new Set<number>();
  for (let i = 0; i < k; i++) picked.add(Math.round((i * (n - 1)) / (k - 1)));
  return [...picked];
}

/**
 * The events to count: `k` of those in scope, spread over them ordered by size (largest first: the largest events
 * hold the pages beyond the first; those of size 0 last) or, without a size figure, grouped by status (largest
 * groups first), so the sample covers small and large events, or as many statuses as it can.
 */
export function chooseSample(events: readonly EventInfo[], sizes: readonly EventSize[], k: number): EventSample {
  const figures = sizeFigures(events, sizes);
  if (figures) {
    const ordered = [...events].sort((a, b) => figures.values.get(b.id)! - figures.values.get(a.id)! || a.id - b.id);
    // An event whose figure is 0 says nothing of the rows per unit: picked only when the others do not fill k.
    const positive = ordered.filter((e) => figures.values.get(e.id)! > 0).length;
    const picks = k <= positive ? spreadPositions(positive, k) : spreadPositions(ordered.length, k);
    return {
      events: picks.map((i) => ordered[i]!.id),
      by: figures.field,
      keys: figures.values,
    };
  }
  const statusOf = (e: EventInfo) => e.status ?? '(none)';
  const groupSize = new Map<string, number>();
  for (const e of events) groupSize.set(statusOf(e), (groupSize.get(statusOf(e)) ?? 0) + 1);
  const ordered = [...events].sort(
    (a, b) =>
      groupSize.get(statusOf(b))! - groupSize.get(statusOf(a))! ||
      statusOf(a).localeCompare(statusOf(b)) ||
      a.id - b.id,
  );
  return {
    events: spreadPositions(ordered.length, k).map((i) => ordered[i]!.id),
    by: 'status',
    keys: new Map(events.map((e) => [e.id, statusOf(e)])),
  };
}
