import { LIST_CALL_CREDITS } from '../../connectors/service.js';
import type { ApiClient } from '../api/index.js';
import type { Warehouse } from '../warehouse/index.js';
import {
  DEFAULT_SAMPLE_EVENTS,
  EstimateCounting,
  extrapolateStreams,
  isUnreadEventItem,
  type PlanEstimate,
  type PricedItem,
  summarize,
} from './plan-estimate.js';
import type { EventSample } from './plan-sample.js';
import { type RateLimitView, rateLimitView, type TimeAtLimit, timeAtLimit } from './plan-time.js';
import { syncEngine } from './run.js';
import { resolveSelection } from './selection.js';
import type { SyncMode, SyncOptions, SyncResult } from './types.js';
import type { CountedItem } from './work-item.js';

export type { PlanEstimate } from './plan-estimate.js';
export type { RateLimitView } from './plan-time.js';

/** The selection's streams listed per event or per parent record (which need the events to be priced), and how many
 * of them are listed once per event. */
function scopedStreams(spec: string): { scoped: number; perEvent: number } {
  const s = resolveSelection(spec, { customFields: true });
  const scoped = [...s.dependentPhase, ...s.eventPhase];
  return { scoped: scoped.length, perEvent: scoped.filter((d) => d.scope === 'event').length };
}

/** The warning of a plan whose totals leave the event-scoped streams out (`PlanReport.unpriced` says by how much). */
export const LOWER_BOUND_WARNING =
  'no events are known yet: event-scoped streams are not priced, so the totals are a lower bound (`evsync plan --estimate` or `--count` read the events and price everything)';

export interface PlanOptions extends SyncOptions {
  /** Read page 1 of every item (kept for the run priced): exact counts. */
  count?: boolean;
  /** Read page 1 of every item on `sampleEvents` events only (kept too) and extrapolate the others. */
  estimate?: { sampleEvents?: number };
}

export interface PlanReport {
  mode: SyncMode;
  /** Whether the figures come from page-1 counts (true: --count or --estimate) or from the last runs' page counts. */
  counted: boolean;
  /** Per stream: items, the calls and credits they still need, and how many were counted or extrapolated. */
  streams: Record<string, { items: number; calls: number; credits: number; counted: number; extrapolated: number }>;
  totalCalls: number;
  totalCredits: number;
  /** Rate-limit windows the credits touch at `rateLimit` (the current one included). */
  windows: number;
  /** Time to spend them at `rateLimit`: the waits for its resets, plus the calls of the last window. */
  estimatedSeconds: number;
  /** The limit the time is priced at: the service's figures once an answer reported them. */
  rateLimit: RateLimitView;
  /** Credits spent by the plan itself (token and counting calls; their rows are kept, not wasted). */
  spentCredits: number;
  /** The list calls among them (10 credits each). */
  spentListCalls: number;
  events: number;
  /**
   * False when part of the work could not be priced: event-scoped streams before `events` was ever synced (without
   * a call there is no way to learn the events), or an estimate resting on answers without a total count. The
   * totals are then a lower bound.
   */
  complete: boolean;
  /**
   * When no events are known: the streams listed once per event that the totals leave out, and what `--count`
   * (page 1 of every item: the items priced now, then one per such stream and event) or `--estimate` (the same on
   * DEFAULT_SAMPLE_EVENTS events; more when the events list takes more than a page, less with fewer events) would
   * spend to price everything.
   */
  unpriced: {
    perEventStreams: number;
    countCreditsNow: number;
    countCreditsPerEvent: number;
    estimateCredits: number;
  } | null;
  /** With --estimate: how the figures were reached and how sure they are. */
  estimate: PlanEstimate | null;
  /** With --count or --estimate: the run the counting was recorded as; the sync or backfill it priced resumes it. */
  countRunId: string | null;
  /** Streams the service does not serve here (recorded by earlier runs, or found while counting). */
  unavailable: SyncResult['unavailable'];
  warnings: string[];
}

/** Calls an item counted still needs: the pages its first answer announces, less those read (and kept). */
function remainingCalls(counted: CountedItem, maxPerPage: number): number {
  if (counted.complete) return 0;
  const perPage = Math.max(1, counted.perPage ?? maxPerPage);
  const pages =
    counted.totalCount !== null ? Math.ceil(counted.totalCount / perPage) : Math.max(1, counted.pageCount ?? 1);
  return Math.max(0, pages - counted.pagesRead);
}

type StreamEntries = PlanReport['streams'];

function entryOf(streams: StreamEntries, name: string): StreamEntries[string] {
  const entry = streams[name] ?? { items: 0, calls: 0, credits: 0, counted: 0, extrapolated: 0 };
  streams[name] = entry;
  return entry;
}

/** Prices every item counted or priced from earlier runs; returns the items left to extrapolate. */
function priceItems(priced: readonly PricedItem[], streams: StreamEntries, sampling: boolean): PricedItem[] {
  const left: PricedItem[] = [];
  for (const p of priced) {
    const entry = entryOf(streams, p.item.stream.name);
    entry.items += 1;
    if (p.counted) entry.counted += 1;
    // Unread events' items: the counted ones inform the extrapolation, the others are priced by it.
    const extrapolable = sampling && isUnreadEventItem(p.item);
    if (extrapolable) left.push(p);
    if (extrapolable && !p.counted) continue;
    const calls = p.counted ? remainingCalls(p.counted, p.item.stream.maxPerPage) : p.item.price / LIST_CALL_CREDITS;
    entry.calls += calls;
    entry.credits += calls * LIST_CALL_CREDITS;
  }
  return left;
}

const sumOf = (streams: StreamEntries, pick: (s: StreamEntries[string]) => number) =>
  Object.values(streams).reduce((n, s) => n + pick(s), 0);

/**
 * What a sync would do and cost. Without `count` or `estimate` it spends nothing and writes nothing: items are
 * priced from the page counts the last complete walks took (one page when unknown). With `count` it reads page 1 of
 * every item (the call the sync would make first anyway) and the events list whole, keeps those rows with their
 * checkpoints in a run of the priced kind left partial, so the sync or backfill that follows resumes it and buys
 * none of those pages again; the rest is priced from the answers' counts. With `estimate` it does the same on a
 * sample of the events only and extrapolates the others (plan-estimate.ts).
 */
export async function planSync(client: ApiClient, warehouse: Warehouse, options: PlanOptions): Promise<PlanReport> {
  const priced: PricedItem[] = [];
  const estimating = options.estimate
    ? new EstimateCounting(warehouse, options.estimate.sampleEvents ?? DEFAULT_SAMPLE_EVENTS)
    : null;
  const counting = options.count === true || estimating !== null;
  const result = await syncEngine(client, warehouse, options, {
    execution: counting ? 'count' : 'dry',
    onItem: (item, counted) => priced.push({ item, counted }),
    ...(estimating ? { counts: estimating.counts, eventsKnown: estimating.eventsKnown } : {}),
  });
  const streams: StreamEntries = {};
  const left = priceItems(priced, streams, estimating !== null);
  const rate = rateLimitView(client.ledger.snapshot());
  const timeOf = (credits: number) =>
    timeAtLimit(credits, credits / LIST_CALL_CREDITS, rate, Math.max(1, options.concurrency ?? 2));
  const sample = estimating?.sample;
  const estimate = sample
    ? estimateOf(streams, left, { events: estimating.events, sample }, (c) => timeOf(c).seconds)
    : null;
  const time = timeOf(sumOf(streams, (s) => s.credits));
  return reportOf(options, result, { streams, estimate, counting, events: eventsOf(priced), rate, time });
}

/** Extrapolates the items left over the sample into `streams`, and summarizes the estimate. */
function estimateOf(
  streams: StreamEntries,
  left: readonly PricedItem[],
  counting: { events: number; sample: EventSample },
  secondsOf: (credits: number) => number,
): PlanEstimate {
  const exactCredits = sumOf(streams, (s) => s.credits);
  const extrapolated = extrapolateStreams(left, counting.sample);
  for (const [name, x] of extrapolated) {
    const entry = entryOf(streams, name);
    entry.extrapolated += x.extrapolated;
    entry.calls += x.calls;
    entry.credits += x.calls * LIST_CALL_CREDITS;
  }
  const summary = summarize(counting.events, counting.sample, exactCredits, extrapolated);
  return { ...summary, lowSeconds: secondsOf(summary.lowCredits), highSeconds: secondsOf(summary.highCredits) };
}

function eventsOf(priced: readonly PricedItem[]): number {
  return new Set(priced.filter((p) => p.item.scope.column === 'event_id').map((p) => p.item.scope.key)).size;
}

interface Priced {
  streams: StreamEntries;
  estimate: PlanEstimate | null;
  counting: boolean;
  events: number;
  rate: RateLimitView;
  time: TimeAtLimit;
}

function reportOf(options: PlanOptions, result: SyncResult, got: Priced): PlanReport {
  const { streams, estimate, counting, time } = got;
  const totalCalls = sumOf(streams, (s) => s.calls);
  const totalCredits = totalCalls * LIST_CALL_CREDITS;
  const warnings = [...result.warnings];
  const { scoped, perEvent } = scopedStreams(options.streams ?? 'core');
  const events = estimate?.events ?? got.events;
  const eventsKnown = counting || events > 0 || scoped === 0;
  if (!eventsKnown) warnings.push(LOWER_BOUND_WARNING);
  const items = sumOf(streams, (s) => s.items);
  const perEventCredits = perEvent * LIST_CALL_CREDITS;
  return {
    mode: options.mode,
    counted: counting,
    streams,
    totalCalls,
    totalCredits,
    windows: time.windows,
    estimatedSeconds: time.seconds,
    rateLimit: got.rate,
    spentCredits: result.credits.total,
    spentListCalls: result.credits.list / LIST_CALL_CREDITS,
    events,
    complete: eventsKnown && (estimate?.lowerBound.length ?? 0) === 0,
    unpriced: eventsKnown
      ? null
      : {
          perEventStreams: perEvent,
          countCreditsNow: items * LIST_CALL_CREDITS,
          countCreditsPerEvent: perEventCredits,
          estimateCredits: items * LIST_CALL_CREDITS + DEFAULT_SAMPLE_EVENTS * perEventCredits,
        },
    estimate,
    countRunId: counting ? result.runId : null,
    unavailable: result.unavailable,
    warnings,
  };
}
