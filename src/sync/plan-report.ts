import { DEFAULT_RATE_LIMIT, LIST_CALL_CREDITS } from '../../connectors/service.js';
import type { ApiClient } from '../api/index.js';
import type { Warehouse } from '../warehouse/index.js';
import { syncEngine } from './run.js';
import { resolveSelection } from './selection.js';

/** The selection's streams listed per event or per parent record (which need the events to be priced), and how many
 * of them are listed once per event. */
function scopedStreams(spec: string): { scoped: number; perEvent: number } {
  const s = resolveSelection(spec, { customFields: true });
  const scoped = [...s.dependentPhase, ...s.eventPhase];
  return { scoped: scoped.length, perEvent: scoped.filter((d) => d.scope === 'event').length };
}

/** The warning of a plan whose totals leave the event-scoped streams out (`PlanReport.unpriced` says by how much). */
export const LOWER_BOUND_WARNING =
  'no events are known yet: event-scoped streams are not priced, so the totals are a lower bound (`evsync plan --count` reads the events and prices everything)';

import type { SyncMode, SyncOptions, SyncResult } from './types.js';

export interface PlanReport {
  mode: SyncMode;
  /** Whether the figures come from page-1 counts (true) or from the last runs' page counts (false). */
  counted: boolean;
  streams: Record<string, { items: number; calls: number; credits: number }>;
  totalCalls: number;
  totalCredits: number;
  /** Rate-limit windows the credits need at the configured limit. */
  windows: number;
  /** Time to spend them: whole windows waited, plus the calls themselves at a typical pace. */
  estimatedSeconds: number;
  /** Credits spent by the plan itself (token and counting calls; their rows are kept, not wasted). */
  spentCredits: number;
  events: number;
  /**
   * False when part of the work could not be priced: event-scoped streams before `events` was ever synced (without
   * --count there is no call to learn the events). The totals are then a lower bound.
   */
  complete: boolean;
  /**
   * When not complete: the streams listed once per event that the totals leave out, and what `--count` would spend
   * to price everything (page 1 of every item: the items priced now, then one per such stream and event).
   */
  unpriced: { perEventStreams: number; countCreditsNow: number; countCreditsPerEvent: number } | null;
  /** With --count: the run the counting was recorded as; the sync or backfill it priced resumes it. */
  countRunId: string | null;
  /** Streams the service does not serve here (recorded by earlier runs, or found while counting). */
  unavailable: SyncResult['unavailable'];
  warnings: string[];
}

/** Seconds a list call takes end to end, for the estimate only. */
const TYPICAL_CALL_SECONDS = 0.25;

/**
 * What a sync would do and cost. Without `count` it spends nothing and writes nothing: items are priced from the
 * page counts the last complete walks took (one page when unknown). With `count` it reads page 1 of every item (the
 * call the sync would make first anyway), keeps those rows with their checkpoints in a run of the priced kind left
 * partial, so the sync or backfill that follows resumes it and buys none of those pages again; the rest is priced
 * from the answers' counts.
 */
export async function planSync(
  client: ApiClient,
  warehouse: Warehouse,
  options: SyncOptions & { count?: boolean },
): Promise<PlanReport> {
  const streams: PlanReport['streams'] = {};
  const scopes = new Set<string>();
  const result = await syncEngine(client, warehouse, options, {
    execution: options.count ? 'count' : 'dry',
    onItem: (item, firstPage) => {
      const entry = streams[item.stream.name] ?? { items: 0, calls: 0, credits: 0 };
      streams[item.stream.name] = entry;
      entry.items += 1;
      if (item.scope.column === 'event_id') scopes.add(item.scope.key);
      let calls = item.price / LIST_CALL_CREDITS;
      if (firstPage?.totalCount != null) {
        const perPage = Math.max(1, firstPage.perPage ?? item.stream.maxPerPage);
        // The first page is already paid for: what remains is the rest of the walk.
        calls = Math.max(0, Math.ceil(firstPage.totalCount / perPage) - 1);
      }
      entry.calls += calls;
      entry.credits += calls * LIST_CALL_CREDITS;
    },
  });
  const totalCalls = Object.values(streams).reduce((n, s) => n + s.calls, 0);
  const totalCredits = totalCalls * LIST_CALL_CREDITS;
  const ledger = client.ledger.snapshot();
  const windowSeconds = (ledger.windowMs ?? DEFAULT_RATE_LIMIT.windowSeconds * 1000) / 1000;
  const available = Math.max(0, ledger.remaining);
  const beyond = Math.max(0, totalCredits - available);
  const windows = Math.max(1, Math.ceil(totalCredits / Math.max(1, ledger.limit)));
  const waitWindows = Math.ceil(beyond / Math.max(1, ledger.limit));
  const concurrency = Math.max(1, options.concurrency ?? 2);
  const estimatedSeconds = Math.round(waitWindows * windowSeconds + (totalCalls * TYPICAL_CALL_SECONDS) / concurrency);
  const warnings = [...result.warnings];
  const { scoped, perEvent: perEventStreams } = scopedStreams(options.streams ?? 'core');
  const complete = options.count === true || scopes.size > 0 || scoped === 0;
  if (!complete) warnings.push(LOWER_BOUND_WARNING);
  const items = Object.values(streams).reduce((n, s) => n + s.items, 0);
  const unpriced = complete
    ? null
    : {
        perEventStreams,
        countCreditsNow: items * LIST_CALL_CREDITS,
        countCreditsPerEvent: perEventStreams * LIST_CALL_CREDITS,
      };
  return {
    mode: options.mode,
    counted: options.count === true,
    streams,
    totalCalls,
    totalCredits,
    windows,
    estimatedSeconds,
    spentCredits: result.credits.total,
    events: scopes.size,
    complete,
    unpriced,
    countRunId: options.count ? result.runId : null,
    unavailable: result.unavailable,
    warnings,
  };
}
