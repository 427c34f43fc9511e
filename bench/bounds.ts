/**
 * Credit bounds from the simulator's ground truth and its own route table (page caps, scopes, custom-field
 * sources), never from the engine's plan: a bound taken from the code under test would pass by construction.
 *
 * Several event-scoped streams do not carry `event_id` in their records (registrant types, transactions, line
 * items, the audit log), so `truth()` alone cannot split them by event. The split comes from the service itself:
 * one `per-page=1` list per scope, reading `_meta.totalCount` (made after the measured run, its credits not
 * counted). The split is then checked against the truth: per stream, the scopes must add up to the number of
 * source records (in the window, for an incremental), or the bound is refused.
 */
import type { Simulator } from '../src/simulator/index.js';
import { STREAM_BY_NAME, type StreamSpec } from '../src/simulator/schema/streams.js';

export const LIST_CREDITS = 10;

/** The fewest list credits one scope can cost: one call even when empty, else one per full page. */
export function pageCredits(rows: number, cap: number): number {
  return LIST_CREDITS * Math.max(1, Math.ceil(rows / cap));
}

export function simSpec(name: string): StreamSpec {
  const s = STREAM_BY_NAME.get(name);
  if (!s) throw new Error(`the simulator has no stream ${name}`);
  return s;
}

/**
 * The streams a sync of `names` has to read: the names, `events` when any is event-scoped (it gives the scopes),
 * and the custom-field definition stream of each (without it the `c_<id>` fields cannot be asked for by name).
 */
export function streamsRead(names: readonly string[]): string[] {
  const out = new Set<string>();
  for (const name of names) {
    const s = simSpec(name);
    out.add(name);
    if (s.scope === 'event') out.add('events');
    if (s.custom) out.add(s.custom);
  }
  return [...out];
}

export interface Window {
  /** Inclusive, record format `YYYY-MM-DD HH:MM:SS` (record timestamps compare as text, as the service does). */
  from: string;
  /** Exclusive. */
  to: string;
}

/** The field a stream's windows are on: its cursor, or `updated_at` for the audit log (no id, no cursor search). */
function windowField(s: StreamSpec): string | null {
  return s.hasId ? s.cursor : 'updated_at';
}

/** Counts rows per scope by asking the service for `_meta.totalCount` (one 1-row page per scope). */
export class ScopeCounter {
  private bearer: string | null = null;

  constructor(
    private readonly baseUrl: string,
    private readonly encoded: string,
  ) {}

  private async token(): Promise<string> {
    if (this.bearer) return this.bearer;
    const res = await fetch(`${this.baseUrl}/oauth2/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${this.encoded}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    const body = (await res.json()) as { access_token?: unknown };
    if (typeof body.access_token !== 'string') throw new Error(`bounds: token call answered ${res.status}`);
    this.bearer = body.access_token;
    return this.bearer;
  }

  async count(name: string, eventId: number | null, window?: Window): Promise<number> {
    const s = simSpec(name);
    const q = new URLSearchParams({ 'per-page': '1', fields: s.hasId ? 'id' : 'registrant_id' });
    if (eventId !== null) q.set('event_id', String(eventId));
    const field = windowField(s);
    if (!s.hasId) {
      q.set('start_time', window?.from ?? '2000-01-01 00:00:00');
      if (window) q.set('end_time', window.to);
    } else if (window && field) {
      q.set('search', `${field}>=${window.from}&${field}<${window.to}`);
    }
    const res = await fetch(`${this.baseUrl}${s.path}?${q.toString()}`, {
      headers: { authorization: `Bearer ${await this.token()}` },
    });
    const body = (await res.json()) as { _meta?: { totalCount?: unknown } };
    const total = body._meta?.totalCount;
    if (!res.ok || typeof total !== 'number') throw new Error(`bounds: ${s.path} answered ${res.status}`);
    return total;
  }
}

export interface Bound {
  /** List credits per stream. */
  perStream: Record<string, number>;
  list: number;
  /** Scopes counted: calls no run can avoid, even when nothing changed. */
  scopes: number;
}

/** Rows per scope of one stream; checked against the truth's total. `window` null: every row. */
async function scopeRows(
  sim: Simulator,
  counter: ScopeCounter,
  name: string,
  eventIds: readonly number[],
  window: Window | null,
): Promise<number[]> {
  const s = simSpec(name);
  if (s.scope === 'dataList') throw new Error(`bounds of data-list-scoped ${name} are not computed here`);
  const field = windowField(s);
  const inWindow = (r: Record<string, unknown>) => {
    if (!window || !field) return true;
    const v = r[field];
    return typeof v === 'string' && v >= window.from && v < window.to;
  };
  const truth = sim.truth(name).records.filter(inWindow).length;
  if (s.scope === 'account') return [truth];
  const w = window && field ? window : undefined;
  const counts: number[] = [];
  for (const id of eventIds) counts.push(await counter.count(name, id, w));
  const sum = counts.reduce((a, b) => a + b, 0);
  if (sum !== truth) {
    throw new Error(`bounds: ${name} scopes add up to ${sum} rows, the source holds ${truth}: no bound computed`);
  }
  return counts;
}

/** `10 * max(1, ceil(rows / cap))` summed over every scope of every stream read, rows counted by `scopeRows`. */
async function listBound(
  sim: Simulator,
  counter: ScopeCounter,
  names: readonly string[],
  eventIds: readonly number[],
  window: Window | null,
): Promise<Bound> {
  const bound: Bound = { perStream: {}, list: 0, scopes: 0 };
  for (const name of streamsRead(names)) {
    const rows = await scopeRows(sim, counter, name, eventIds, window);
    const credits = rows.reduce((sum, n) => sum + pageCredits(n, simSpec(name).cap), 0);
    bound.perStream[name] = credits;
    bound.list += credits;
    bound.scopes += rows.length;
  }
  return bound;
}

/**
 * Full backfill: every stream read, every scope, `10 * max(1, ceil(rows / cap))`. The audit log is read in one
 * window per event covering all of it, so the same formula holds for it. Token calls are added by the caller.
 */
export async function backfillBound(
  sim: Simulator,
  counter: ScopeCounter,
  names: readonly string[],
  eventIds: readonly number[],
): Promise<Bound> {
  return listBound(sim, counter, names, eventIds, null);
}

/**
 * An incremental run right after a complete one, with every scope polled, over the window [from, to) between the
 * two runs' signposts (the first run's signpost is where its cursors stopped; the second reads up to its own):
 * - a stream with a cursor (`updated_at`), per scope: `10 * max(1, ceil(changed / cap))`, where `changed` is the
 *   number of current source records of the scope whose `updated_at` lies in the window (inserted or updated
 *   since; deleted ones no list returns). A scope with no change still costs its one poll;
 * - a stream without a cursor (definition streams, registrant_line_items) is re-read in full, as a snapshot:
 *   `10 * max(1, ceil(rows / cap))` per scope with the current rows;
 * - the audit log (no id; `start_time`/`end_time` windows), per event: `10 * max(1, ceil(rows in window / cap))`.
 * Token calls are added by the caller.
 */
export async function incrementalBound(
  sim: Simulator,
  counter: ScopeCounter,
  names: readonly string[],
  eventIds: readonly number[],
  window: Window,
): Promise<Bound> {
  return listBound(sim, counter, names, eventIds, window);
}

/** Event ids of the first account, from the truth (the engine reads every event of it, drafts included). */
export function eventIdsOf(sim: Simulator): number[] {
  return sim.truth('events').records.map((e) => Number(e.id));
}
