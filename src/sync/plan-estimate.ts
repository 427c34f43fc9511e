/**
 * `plan --estimate`: a counting plan over a sample of the events. It reads the events list whole and page 1 of every
 * other account-scoped item (as `--count` does), page 1 of every event-scoped stream on a few events only, and
 * extrapolates the other events' pages from those (plan-sample.ts picks the events and the size figure,
 * plan-extrapolate.ts prices a stream). Every page it reads is kept for the run it prices, like `--count`'s.
 */
import { LIST_CALL_CREDITS } from '../../connectors/service.js';
import type { Warehouse } from '../warehouse/index.js';
import type { EventInfo } from './plan.js';
import { type Extrapolation, extrapolate, type StreamObservation } from './plan-extrapolate.js';
import { chooseSample, type EventSample, type SizeField } from './plan-sample.js';
import { eventScope } from './scope.js';
import type { CountedItem, WorkItem } from './work-item.js';

/** Events counted when the caller does not say. */
export const DEFAULT_SAMPLE_EVENTS = 3;

/** One planned item and what counting it learned (null: only listed). */
export interface PricedItem {
  item: WorkItem;
  counted: CountedItem | null;
}

export interface PlanEstimate {
  /** Events in scope; those never read before (all of them before a first sync), and those counted among them. */
  events: number;
  unread: number;
  sampled: number[];
  /** What the other events are extrapolated by: a size figure of their records, or their status. */
  by: SizeField | 'status';
  /** Credits of the total priced from counted answers (and earlier runs), and extrapolated to the other events. */
  exactCredits: number;
  extrapolatedCredits: number;
  /** The total with the extrapolated events priced at the smallest and largest rate the sample showed. */
  lowCredits: number;
  highCredits: number;
  /** Time to spend lowCredits and highCredits at the rate limit. */
  lowSeconds: number;
  highSeconds: number;
  /** Streams whose range rests on fewer than two counted events (it then says nothing). */
  spreadUnknown: string[];
  /** Why the total is only a lower bound (empty when it is not). */
  lowerBound: string[];
  /** Per stream: items counted and extrapolated, and the rate seen on the sample (rows per unit of `by`, or per event). */
  streams: Record<string, { counted: number; extrapolated: number; rate: { min: number; max: number } | null }>;
}

/**
 * What an estimate counts: what nothing else prices. Items never read (no cursor): every account- or parent-scoped
 * one, and the event-scoped ones of the sampled events (the rest are extrapolated); walks an earlier run left open
 * (one more page prices their rest exactly). Items with a history are priced from it, as a plan without a call is.
 * The sample is picked among the events never read, once the engine knows the events in scope.
 */
export class EstimateCounting {
  sample: EventSample | null = null;
  events = 0;
  private sampled = new Set<number>();

  constructor(
    private readonly warehouse: Warehouse,
    private readonly size: number,
  ) {}

  readonly counts = (item: WorkItem): boolean => {
    if (item.resume !== null) return true;
    // A delete sweep is priced by the walk of its scope (plan.ts): it says nothing of a never-read scope.
    if (item.previous !== null || item.mode === 'sweep') return false;
    return item.scope.column !== 'event_id' || this.sampled.has(item.scope.value ?? 0);
  };

  readonly eventsKnown = async (events: readonly EventInfo[]): Promise<void> => {
    const read = new Set((await this.warehouse.cursors.list()).map((c) => c.scope.split('/')[0]));
    const unread = events.filter((e) => !read.has(eventScope(e.id).key));
    this.events = events.length;
    const sample = chooseSample(unread, await this.warehouse.current.eventSizes(), this.size);
    this.sample = sample;
    this.sampled = new Set(sample.events);
  };
}

/** An event scope this warehouse never read: counted on the sample, extrapolated elsewhere. */
export function isUnreadEventItem(item: WorkItem): boolean {
  return item.scope.column === 'event_id' && item.previous === null && item.mode !== 'sweep';
}

/** Rows a counted answer stands for: its totalCount, or, without one, the least its page count allows. */
function observation(p: PricedItem & { counted: CountedItem }): StreamObservation {
  const perPage = Math.max(1, p.counted.perPage ?? p.item.stream.maxPerPage);
  const pages = p.counted.pageCount ?? 1;
  const rows = p.counted.totalCount ?? Math.max(0, (pages - 1) * perPage + (pages > 0 ? 1 : 0));
  return { eventId: p.item.scope.value ?? 0, rows, rowsExact: p.counted.totalCount !== null, perPage };
}

/** Each stream's extrapolation over the unread events the sample did not count. */
export function extrapolateStreams(
  priced: readonly PricedItem[],
  sample: EventSample,
): Map<string, Extrapolation & { counted: number; extrapolated: number }> {
  const byStream = new Map<string, { observed: StreamObservation[]; targets: number[]; maxPerPage: number }>();
  for (const p of priced) {
    if (!isUnreadEventItem(p.item)) continue;
    const name = p.item.stream.name;
    const entry = byStream.get(name) ?? { observed: [], targets: [], maxPerPage: p.item.stream.maxPerPage };
    byStream.set(name, entry);
    if (p.counted) entry.observed.push(observation({ ...p, counted: p.counted }));
    else entry.targets.push(p.item.scope.value ?? 0);
  }
  const out = new Map<string, Extrapolation & { counted: number; extrapolated: number }>();
  for (const [name, s] of byStream) {
    const x = extrapolate({ sample, observed: s.observed, targets: s.targets, maxPerPage: s.maxPerPage });
    out.set(name, { ...x, counted: s.observed.length, extrapolated: s.targets.length });
  }
  return out;
}

/** The estimate's summary, given the credits priced exactly and each stream's extrapolation. */
export function summarize(
  events: number,
  sample: EventSample,
  exactCredits: number,
  streams: ReadonlyMap<string, Extrapolation & { counted: number; extrapolated: number }>,
): Omit<PlanEstimate, 'lowSeconds' | 'highSeconds'> {
  const all = [...streams.entries()];
  const sum = (pick: (x: Extrapolation) => number) => all.reduce((n, [, x]) => n + pick(x), 0) * LIST_CALL_CREDITS;
  const lowerBound = all
    .filter(([, x]) => x.lowerBound && x.extrapolated > 0)
    .map(([name, x]) =>
      x.counted === 0
        ? `${name}: no counted event answered, so its ${x.extrapolated} other events are priced at one call each`
        : `${name}: the service's answers carry no _meta.totalCount, so its rows are taken at the least their page count allows`,
    );
  return {
    events,
    unread: sample.keys.size,
    sampled: sample.events,
    by: sample.by,
    exactCredits,
    extrapolatedCredits: sum((x) => x.calls),
    lowCredits: exactCredits + sum((x) => x.low),
    highCredits: exactCredits + sum((x) => x.high),
    spreadUnknown: all.filter(([, x]) => x.spreadUnknown && x.extrapolated > 0).map(([name]) => name),
    lowerBound,
    streams: Object.fromEntries(
      all.map(([name, x]) => [name, { counted: x.counted, extrapolated: x.extrapolated, rate: x.rate }]),
    ),
  };
}
