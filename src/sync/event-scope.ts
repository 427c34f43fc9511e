/**
 * The one event-scope rule: which stored events a run's event-scoped streams cover, from the user's filters.
 * `sync`, `backfill`, `plan` and `schedule` all use it, so they never disagree on what is in scope.
 */
import { closestName } from '../../connectors/suggest.js';
import type { EventRow } from '../warehouse/index.js';
import { SyncUsageError } from './errors.js';
import type { EventInfo } from './plan.js';

export interface EventFilters {
  events?: readonly number[] | undefined;
  eventStatus?: readonly string[] | undefined;
  /** `YYYY-MM-DD`: events starting on or after / on or before. */
  eventsFrom?: string | undefined;
  eventsTo?: string | undefined;
}

export function hasEventFilters(f: EventFilters): boolean {
  return !!(f.events?.length || f.eventStatus?.length || f.eventsFrom || f.eventsTo);
}

/** Refuses filters that cannot match anything whatever the data: before any call is made. */
export function checkEventFilters(f: EventFilters): void {
  for (const [flag, value] of [
    ['--events-from', f.eventsFrom],
    ['--events-to', f.eventsTo],
  ] as const) {
    if (value !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(value))
      throw new SyncUsageError(`${flag} ${value}: expected a date as YYYY-MM-DD`);
  }
  if (f.eventsFrom && f.eventsTo && f.eventsFrom > f.eventsTo) {
    throw new SyncUsageError(
      `--events-from ${f.eventsFrom} is after --events-to ${f.eventsTo}: no event can start in that range`,
    );
  }
}

export function eventsInScope(all: readonly EventRow[], f: EventFilters): EventInfo[] {
  const only = f.events?.length ? new Set(f.events) : null;
  const statuses = f.eventStatus?.length ? new Set(f.eventStatus) : null;
  return all
    .filter((e) => !only || only.has(e.id))
    .filter((e) => !statuses || (e.status !== null && statuses.has(e.status)))
    .filter((e) => !f.eventsFrom || (e.startDate !== null && e.startDate.slice(0, 10) >= f.eventsFrom))
    .filter((e) => !f.eventsTo || (e.startDate !== null && e.startDate.slice(0, 10) <= f.eventsTo));
}

function sample(values: readonly (string | number)[], max = 10): string {
  const shown = values.slice(0, max).join(', ');
  return values.length > max ? `${shown}, ... (${values.length} in all)` : shown;
}

/**
 * Why the filters leave no event (naming what exists), or what part of `--events` names no event; null when every
 * filter found something. Only meaningful once the events are stored.
 */
export function unmatchedFilters(
  all: readonly EventRow[],
  filters: EventFilters,
): { error: string | null; warning: string | null } {
  if (!hasEventFilters(filters)) return { error: null, warning: null };
  const inScope = eventsInScope(all, filters);
  const ids = all.map((e) => e.id);
  const missing = (filters.events ?? []).filter((id) => !ids.includes(id));
  if (inScope.length > 0) {
    const warning = missing.length ? `--events: no event ${sample(missing)} in this account (ignored)` : null;
    return { error: null, warning };
  }
  if (all.length === 0) return { error: 'the filters match no event: this account has no events yet', warning: null };
  const parts: string[] = [];
  if (filters.events?.length) parts.push(`--events ${filters.events.join(',')} (event ids here: ${sample(ids)})`);
  if (filters.eventStatus?.length) {
    const statuses = [...new Set(all.map((e) => e.status).filter((s): s is string => s !== null))].sort();
    const hints = filters.eventStatus
      .filter((s) => !statuses.includes(s))
      .flatMap((s) => closestName(s, statuses) ?? [])
      .map((s) => `; did you mean "${s}"?`);
    parts.push(
      `--event-status ${filters.eventStatus.join(',')} (statuses here: ${statuses.join(', ') || 'none'}${hints.join('')})`,
    );
  }
  if (filters.eventsFrom || filters.eventsTo) {
    const starts = all
      .map((e) => e.startDate?.slice(0, 10))
      .filter((d): d is string => !!d)
      .sort();
    const range = starts.length ? `${starts[0]} to ${starts[starts.length - 1]}` : 'none with a start date';
    parts.push(
      `--events-from/--events-to ${filters.eventsFrom ?? '…'}..${filters.eventsTo ?? '…'} (events start ${range})`,
    );
  }
  return { error: `no event matches ${parts.join(' and ')}`, warning: null };
}
