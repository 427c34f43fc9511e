/**
 * The state that matters first, for the status document (page, JSON and CLI alike): whether something waits for
 * the credit window (a run of the daemon's or a one-shot's, or webhook deliveries whose records must be re-read),
 * which streams fail, which are stale (their newest data older than their cadence) and by how much. "All fresh" is
 * said only when it is true: nothing waits or fails, and every stream judged is within its cadence. Freshness is
 * judged only against a known cadence: a running daemon's schedule, or the one the last daemon here ran with.
 */
import type { LedgerWait } from '../../api/index.js';
import type { RunProgress } from '../../sync/index.js';
import { span } from './html.js';
import type { StreamRow } from './streams.js';

/** Past its cadence by less than this, a stream is not stale yet: a run lands its window a minute or so after. */
export const STALE_GRACE_SECONDS = 120;

/** How often the streams are polled, and which: what freshness is judged against. */
export interface Cadence {
  /** Seconds between the scheduled runs (the cron's), null when unknown. */
  pollSeconds: number | null;
  /** Seconds between reconciliations of the webhook-fed streams (`serve`), null without webhooks. */
  reconcileSeconds: number | null;
  /** Streams every scheduled run polls (definitions included), and the ones only reconciliations poll. */
  polled: string[];
  reconciled: string[];
  /** Whose schedule it is: a running daemon, or the last one that ran here (stopped: nothing polls now). */
  source: string;
  running: boolean;
}

/** Calls waiting for the credit window now. */
export interface WaitingState {
  /** Who waits, in words: `evsync serve (PID 12), its run`, `evsync backfill (PID 9)`. */
  who: string;
  /** When the window resets, as the waiting client expects it (UTC ISO); null when unknown. */
  until: string | null;
  /** Seconds from the document's time until then. */
  inSeconds: number | null;
  reason: 'window' | '429';
  /** Since when (UTC ISO). */
  since: string;
}

/** Webhook deliveries whose records wait for credits to be re-read. */
export interface DeliveriesWaiting {
  pending: number;
  /** Seconds since the oldest of them arrived. */
  oldestSeconds: number | null;
  /** When the window they wait for resets (UTC ISO), null when unknown. */
  until: string | null;
}

export interface StaleStream {
  stream: string;
  freshnessSeconds: number;
  cadenceSeconds: number;
  /** How far past its cadence. */
  behindSeconds: number;
}

export type StateLevel = 'failing' | 'waiting' | 'stale' | 'fresh' | 'unjudged' | 'empty' | 'running';

export interface StatusState {
  /**
   * The first that holds, in this order: failing, waiting (for credits), stale, fresh; unjudged (no cadence known),
   * empty (nothing synced). A one-shot run holding the warehouse answers waiting or running.
   */
  level: StateLevel;
  /** The state in one line, what matters first. */
  summary: string;
  waiting: WaitingState | null;
  deliveriesWaiting: DeliveriesWaiting | null;
  /** Streams whose newest data is older than their cadence, stalest first. */
  stale: StaleStream[];
  /** Streams failing (the newest run that covered them failed on them). */
  failing: string[];
  /** What freshness was judged against; null when no schedule is known here. */
  cadence: Cadence | null;
}

interface StateInputs {
  streams: readonly StreamRow[];
  waiting: WaitingState | null;
  deliveriesWaiting: DeliveriesWaiting | null;
  cadence: Cadence | null;
}

/** A client's calls waiting for the window, as the document says it (null when none waits). */
export function waitingState(wait: LedgerWait | null, who: string, nowMs: number): WaitingState | null {
  if (!wait) return null;
  const until = wait.until?.getTime() ?? null;
  return {
    who,
    until: until === null ? null : new Date(until).toISOString(),
    inSeconds: until === null ? null : Math.max(0, Math.round((until - nowMs) / 1000)),
    reason: wait.reason,
    since: wait.since.toISOString(),
  };
}

/** The cadence a stream is judged against, or null when none applies (not in the schedule's selection). */
function cadenceOf(stream: string, cadence: Cadence): number | null {
  if (cadence.polled.includes(stream)) return cadence.pollSeconds;
  if (cadence.reconciled.includes(stream)) return cadence.reconcileSeconds;
  return null;
}

function staleStreams(streams: readonly StreamRow[], cadence: Cadence | null): StaleStream[] {
  if (!cadence) return [];
  const stale: StaleStream[] = [];
  for (const s of streams) {
    const every = cadenceOf(s.stream, cadence);
    if (every === null || s.freshnessSeconds === null || s.health === 'unavailable') continue;
    if (s.freshnessSeconds <= every + STALE_GRACE_SECONDS) continue;
    stale.push({
      stream: s.stream,
      freshnessSeconds: s.freshnessSeconds,
      cadenceSeconds: every,
      behindSeconds: s.freshnessSeconds - every,
    });
  }
  return stale.sort((a, b) => b.behindSeconds - a.behindSeconds);
}

const clock = (iso: string | null) => (iso ? `${iso.slice(11, 16)} UTC` : 'its reset (not known yet)');

function waitingText(w: WaitingState): string {
  const why = w.reason === '429' ? ' (the service answered 429)' : '';
  const left = w.inSeconds === null ? '' : ` (in ${span(w.inSeconds)})`;
  return `waiting for the window until ${clock(w.until)}${left}${why}: ${w.who}`;
}

function staleText(stale: readonly StaleStream[]): string {
  const named = stale
    .slice(0, 3)
    .map((s) => `${s.stream} ${span(s.freshnessSeconds)} old, cadence ${span(s.cadenceSeconds)}`)
    .join('; ');
  const more = stale.length > 3 ? `; ${stale.length - 3} more` : '';
  return `${stale.length} stream${stale.length === 1 ? '' : 's'} stale (${named}${more})`;
}

function deliveriesText(d: DeliveriesWaiting): string {
  const oldest = d.oldestSeconds === null ? '' : `, the oldest for ${span(d.oldestSeconds)}`;
  return `${d.pending} webhook deliver${d.pending === 1 ? 'y waits' : 'ies wait'} for credits to re-read their records${oldest}`;
}

/** "all fresh" when true, else what keeps it from being said. */
function calmText(i: StateInputs, judged: number): { level: StateLevel; text: string } {
  const withData = i.streams.filter((s) => s.freshnessSeconds !== null);
  if (withData.length === 0) return { level: 'empty', text: 'no stream synced yet' };
  if (!i.cadence) {
    const stalest = Math.max(...withData.map((s) => s.freshnessSeconds ?? 0));
    return {
      level: 'unjudged',
      text: `freshness not judged: no daemon ran here, so no schedule is known (the stalest data is ${span(stalest)} old)`,
    };
  }
  const running = i.cadence.running ? '' : ` (${i.cadence.source} is not running: nothing polls now)`;
  return {
    level: 'fresh',
    text: `all fresh: ${judged} stream${judged === 1 ? '' : 's'} within their cadence${running}`,
  };
}

export function statusState(i: StateInputs): StatusState {
  const failing = i.streams.filter((s) => s.health === 'failing').map((s) => s.stream);
  const stale = staleStreams(i.streams, i.cadence);
  const judged = i.cadence ? i.streams.filter((s) => cadenceOf(s.stream, i.cadence!) !== null).length : 0;
  const parts: string[] = [];
  if (failing.length) parts.push(`${failing.length} failing (${failing.join(', ')})`);
  if (i.waiting) parts.push(waitingText(i.waiting));
  if (i.deliveriesWaiting) parts.push(deliveriesText(i.deliveriesWaiting));
  if (stale.length) parts.push(staleText(stale));
  let level: StateLevel = failing.length
    ? 'failing'
    : i.waiting || i.deliveriesWaiting
      ? 'waiting'
      : stale.length
        ? 'stale'
        : 'fresh';
  if (parts.length === 0) {
    const calm = calmText(i, judged);
    level = calm.level;
    parts.push(calm.text);
  }
  return {
    level,
    summary: parts.join('; '),
    waiting: i.waiting,
    deliveriesWaiting: i.deliveriesWaiting,
    stale,
    failing,
    cadence: i.cadence,
  };
}

/** The state a one-shot run answers with: waiting for the window, or running; streams are not judged meanwhile. */
export function runState(progress: RunProgress, waiting: WaitingState | null, holder: string): StatusState {
  const i = progress.items;
  const done = `${i.done} of ${i.queued} items done, ${progress.credits.spent} credits spent; the work planned so far (about ${progress.credits.needed} credits more) ends about ${clock(progress.eta.at)}`;
  const summary = waiting ? `${waitingText(waiting)}; ${done}` : `${holder} is running: ${done}`;
  return {
    level: waiting ? 'waiting' : 'running',
    summary,
    waiting,
    deliveriesWaiting: null,
    stale: [],
    failing: [],
    cadence: null,
  };
}
