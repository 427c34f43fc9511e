/**
 * Polling as the safety net. Each scheduled run polls the selected streams that no webhook feeds (as `schedule`
 * does), and the webhook-fed ones only when due: at start (what changed while nothing was listening), every
 * `everyHours` while deliveries are healthy, and at every run while applying them fails. A run with nothing to poll
 * is skipped: it would cost credits for nothing.
 */

import { selectStreams } from '../../connectors/index.js';
import { systemNow } from '../../schemas/clock.js';
import { isCaptured } from '../sync/capture/objects.js';

export interface ReconcileOptions {
  /** The selection (`core`, `all`, or a comma list). */
  streams: string;
  /** Webhook-fed streams are polled at most this often while deliveries are healthy. */
  everyHours: number;
  /** Poll the webhook-fed streams at the first run (default true). */
  catchUp?: boolean;
  /** Whether webhooks feed the daemon at all (default true); without them every selected stream is polled. */
  webhooks?: boolean;
  now?: () => number;
}

export class ReconcilePolicy {
  /** Selected streams that webhooks feed, and the others. */
  readonly captured: string[];
  readonly polled: string[];
  private lastFullAt: number | null;
  private readonly now: () => number;

  constructor(private readonly o: ReconcileOptions) {
    const selected = selectStreams(o.streams);
    const fed = o.webhooks === false ? () => false : isCaptured;
    this.captured = selected.filter(fed).map((s) => s.name);
    this.polled = selected.filter((s) => !fed(s)).map((s) => s.name);
    this.now = o.now ?? systemNow;
    this.lastFullAt = o.catchUp === false ? this.now() : null;
  }

  /** Whether the webhook-fed streams are due now. */
  due(unhealthy: boolean): boolean {
    if (unhealthy || this.lastFullAt === null) return true;
    return this.now() - this.lastFullAt >= this.o.everyHours * 3_600_000;
  }

  /** The streams the next run polls, or null for none. */
  next(unhealthy: boolean): string[] | null {
    const streams = [...this.polled, ...(this.due(unhealthy) ? this.captured : [])];
    return streams.length > 0 ? streams : null;
  }

  /** A run that polled the webhook-fed streams completed: they are reconciled as of its start. */
  reconciled(startedAtMs: number): void {
    this.lastFullAt = startedAtMs;
  }
}
