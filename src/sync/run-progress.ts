/**
 * A run's progress as it goes, from the engine's progress events and the client's ledger alone (no database read:
 * a one-shot run answers `status` with it while it holds the warehouse): items queued, done, failed and skipped,
 * per stream pages and rows, events in scope, credits spent and still needed for the work planned so far, whether
 * it waits for the credit window, and when it should end (see eta.ts).
 */

import { LIST_CALL_CREDITS } from '../../connectors/service.js';
import type { Now } from '../../schemas/clock.js';
import type { CreditLedger } from '../api/index.js';
import { type Eta, estimateEnd } from './eta.js';
import type { ProgressEvent, SyncMode } from './types.js';

export interface StreamProgress {
  stream: string;
  /** Items (scopes) of the stream done, failed, skipped, walking now. */
  done: number;
  failed: number;
  skipped: number;
  running: number;
  pages: number;
  rows: number;
}

export interface RunWait {
  /** Since when the run's calls wait (UTC ISO). */
  since: string;
  /** When the window resets, as the ledger expects it (UTC ISO); null when unknown. */
  until: string | null;
  reason: 'window' | '429';
}

export interface RunProgress {
  mode: SyncMode;
  /** Null until the run is recorded (after the token call and the account check). */
  runId: string | null;
  startedAt: string;
  /** Events in scope, once the events list is stored. */
  events: number | null;
  /** Items planned so far (a phase is planned once the one before is stored) and what became of them. */
  items: { queued: number; done: number; failed: number; skipped: number; running: number; left: number };
  streams: StreamProgress[];
  credits: {
    /** Spent by this run so far. */
    spent: number;
    /** Still to spend on the work planned so far, priced as the planner prices it. */
    needed: number;
  };
  /** Set while the run waits for the credit window. */
  waiting: RunWait | null;
  eta: Eta;
}

type ItemState = 'running' | 'done' | 'failed' | 'skipped';

interface Item {
  stream: string;
  price: number;
  pages: number;
  state: ItemState;
}

export class RunProgressTracker {
  private runId: string | null = null;
  private events: number | null = null;
  private queued = 0;
  private queuedCredits = 0;
  private readonly items = new Map<string, Item>();
  private readonly rows = new Map<string, number>();
  private readonly startedAt: number;

  constructor(
    private readonly mode: SyncMode,
    private readonly ledger: CreditLedger,
    private readonly now: Now,
  ) {
    this.startedAt = now();
  }

  /** Feed it every progress event of the run. */
  readonly onProgress = (e: ProgressEvent): void => {
    if (e.type === 'run') this.runId = e.runId;
    else if (e.type === 'plan') this.events = e.events;
    else if (e.type === 'queued') {
      this.queued += e.items;
      this.queuedCredits += e.credits;
    } else if (e.type === 'item-start') {
      this.items.set(key(e), { stream: e.stream, price: e.price, pages: 0, state: 'running' });
    } else if (e.type === 'item-skipped') {
      const item = this.items.get(key(e)) ?? { stream: e.stream, price: e.price, pages: 0, state: 'skipped' };
      this.items.set(key(e), { ...item, state: 'skipped' });
    } else this.onItemEvent(e);
  };

  private onItemEvent(e: ProgressEvent): void {
    if (e.type !== 'page' && e.type !== 'item-done' && e.type !== 'item-failed') return;
    const item = this.items.get(key(e));
    if (e.type === 'item-failed') {
      if (item) item.state = 'failed';
      return;
    }
    // Page events carry the item's running counts; the stream's rows are the sum over its items.
    const previous = item?.pages ?? 0;
    if (item) item.pages = Math.max(previous, e.pages);
    if (e.type === 'item-done' && item) item.state = 'done';
    if (e.type === 'page') this.rows.set(key(e), Math.max(this.rows.get(key(e)) ?? 0, e.rows));
  }

  /** The progress now, with the credit window as the client's ledger knows it. */
  snapshot(): RunProgress {
    const now = this.now();
    const states = { running: 0, done: 0, failed: 0, skipped: 0 };
    let settled = 0;
    let running = 0;
    for (const item of this.items.values()) {
      states[item.state] += 1;
      // A walking item still needs its price less the pages it read, and at least one more page.
      if (item.state === 'running') running += Math.max(LIST_CALL_CREDITS, item.price - item.pages * LIST_CALL_CREDITS);
      else settled += item.price;
    }
    const runningPrice = [...this.items.values()].filter((i) => i.state === 'running').reduce((n, i) => n + i.price, 0);
    const needed = Math.max(0, this.queuedCredits - settled - runningPrice) + running;
    const ledger = this.ledger.snapshot();
    const spent = ledger.spent.list + ledger.spent.other + ledger.spent.token;
    const waiting = this.ledger.waiting();
    return {
      mode: this.mode,
      runId: this.runId,
      startedAt: new Date(this.startedAt).toISOString(),
      events: this.events,
      items: {
        queued: this.queued,
        ...states,
        left: Math.max(0, this.queued - states.done - states.failed - states.skipped),
      },
      streams: this.streams(),
      credits: { spent, needed },
      waiting: waiting
        ? { since: waiting.since.toISOString(), until: waiting.until?.toISOString() ?? null, reason: waiting.reason }
        : null,
      eta: estimateEnd({
        needed,
        reading: this.ledger.reading(),
        limit: ledger.limit,
        windowMs: ledger.windowMs,
        now,
        pace: { spent, activeMs: now - this.startedAt - ledger.waitedMs },
      }),
    };
  }

  private streams(): StreamProgress[] {
    const byStream = new Map<string, StreamProgress>();
    for (const [id, item] of this.items) {
      const s = byStream.get(item.stream) ?? {
        stream: item.stream,
        done: 0,
        failed: 0,
        skipped: 0,
        running: 0,
        pages: 0,
        rows: 0,
      };
      s[item.state] += 1;
      s.pages += item.pages;
      s.rows += this.rows.get(id) ?? 0;
      byStream.set(item.stream, s);
    }
    return [...byStream.values()].sort((a, b) => a.stream.localeCompare(b.stream));
  }
}

function key(e: { stream: string; scope: string }): string {
  return `${e.stream}\u0000${e.scope}`;
}
