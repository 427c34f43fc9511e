/**
 * The daemon's polling protocol (`evsync serve` and `evsync schedule`), as a library piece: which streams each
 * scheduled run polls, and what follows each run. With webhooks on, the webhook-fed streams are polled only when due
 * (see ReconcilePolicy); without them (`schedule`), every selected stream is polled every run.
 *
 * The catch-up: at start the daemon cannot know what the service sent while nothing listened (its retry schedule
 * is undocumented; a delivery it gave up is lost), so the first run polls every selected stream over every event,
 * past ones included, live events first (the engine's priority), from where the last poll ended. A catch-up the
 * budget cannot finish stays pending: every following run polls the same way (and resumes where the last one
 * stopped) until one completes; `status` shows it pending, and since when.
 *
 * Runs go through the same engine as `sync`, with the same rules: a path that answers 404 is recorded unavailable
 * unless the user named that stream one by one (the daemon's lists name streams of a set one by one, so the user's
 * own names are handed to the engine).
 */

import { systemNow } from '../../../schemas/clock.js';
import type { Warehouse } from '../../warehouse/index.js';
import type { RunningCapture } from '../capture/index.js';
import { ReconcilePolicy } from '../capture/reconcile.js';
import { resolveSelection } from '../selection.js';
import type { SyncOptions, SyncResult } from '../types.js';

/** `_evsync.meta` key: when a catch-up started that has not completed yet (absent when none is pending). */
export const CATCH_UP_MARK = 'daemon_catch_up_pending_since';

export interface ReconcileLoopOptions {
  warehouse: Warehouse;
  /** The user's selection (`core`, `all`, `a,b`). */
  streams: string;
  /** Whether webhooks feed this daemon (`serve`) or not (`schedule`): see `attach`. */
  webhooks: boolean;
  /** Webhook-fed streams are polled at most this often while deliveries are healthy. */
  everyHours: number;
  /** Poll at the first run what may have been missed while nothing listened (default true). */
  catchUp: boolean;
  /** Settled deliveries older than this are pruned from the journal. */
  retentionDays: number;
  log: (level: 'debug' | 'info' | 'warn', message: string) => void;
  now?: () => number;
}

export class ReconcileLoop {
  readonly policy: ReconcilePolicy;
  private readonly named: string[];
  private readonly now: () => number;
  /** A catch-up is pending (polled with past events included) until a run of it completes. */
  private catchingUp: boolean;
  /** Since when nothing listened (the previous daemon's last heartbeat), or null when no daemon ran here before. */
  private silentSince: number | null = null;
  /** The running receiver and applier (null until attached, and always without webhooks). */
  private capture: RunningCapture | null = null;

  constructor(private readonly o: ReconcileLoopOptions) {
    this.policy = new ReconcilePolicy({
      streams: o.streams,
      everyHours: o.everyHours,
      catchUp: o.catchUp,
      webhooks: o.webhooks,
      now: o.now,
    });
    this.named = [...resolveSelection(o.streams, { customFields: false }).named];
    this.now = o.now ?? systemNow;
    this.catchingUp = o.catchUp;
  }

  /** The receiver and applier started for the webhook-fed streams (`policy.captured`). */
  attach(capture: RunningCapture): void {
    this.capture = capture;
  }

  /**
   * At start, given the previous daemon's last heartbeat (null when none ever ran here): records the catch-up as
   * pending (a daemon killed before it completes owes it again) and since when nothing listened.
   */
  async start(lastHeartbeat: Date | null): Promise<void> {
    const pending = await this.o.warehouse.marks.get(CATCH_UP_MARK);
    if (pending) {
      this.catchingUp = true;
      this.o.log('info', `a catch-up pending since ${pending} goes on: every event is polled, past ones included`);
    } else if (this.catchingUp) await this.o.warehouse.marks.set(CATCH_UP_MARK, new Date(this.now()).toISOString());
    // Deliveries may have been lost from the earliest of the two on (a catch-up owed since then covers it too).
    const times = [lastHeartbeat?.getTime(), pending ? Date.parse(pending) : undefined].filter(
      (t): t is number => t !== undefined && Number.isFinite(t),
    );
    this.silentSince = times.length ? Math.min(...times) : null;
  }

  /** Whether a catch-up is still owed. */
  get pending(): boolean {
    return this.catchingUp;
  }

  /** Options of the next run over the daemon's own, or null to skip it (no credit spent for nothing). */
  plan(): Partial<SyncOptions> | null {
    const unhealthy = (this.capture?.applier.failuresSinceReconcile ?? 0) > 0;
    const list = this.catchingUp ? [...this.policy.polled, ...this.policy.captured] : this.policy.next(unhealthy);
    if (list === null || list.length === 0) {
      this.o.log('debug', 'reconcile skipped: every selected stream is fed by webhooks, none due');
      return null;
    }
    return {
      streams: list.join(','),
      namedStreams: this.named,
      // Each completed item reaches the tables (and the daemon's readers) at once, not at the end of a long run.
      mergeEachItem: true,
      ...(this.catchingUp ? this.catchUpOptions() : {}),
    };
  }

  /**
   * What a catch-up adds to a run: past events too (a change to one while nothing listened is otherwise missed for a
   * day). After a daemon ran here (its heartbeat says since when nothing listened), also the delete sweeps not run
   * since then, as owed work: a delete delivery the service gave up on is seen by no poll, only by a sweep; one the
   * user ran since (`sync --deletes`) is not paid for again. At a first start no delivery was ever missed: the sweeps
   * keep the cadence one-shot syncs had (`sweepEveryHours`, with spare credits), and the catch-up is one pass.
   */
  private catchUpOptions(): Partial<SyncOptions> {
    if (this.silentSince === null) return { pastEventPollHours: 0 };
    const silentHours = Math.max(0, (this.now() - this.silentSince) / 3_600_000);
    return { pastEventPollHours: 0, deletes: 'due', sweepEveryHours: silentHours };
  }

  /**
   * After each run: count what it found that webhooks had missed, mark the webhook-fed streams reconciled when it
   * completed (and the catch-up done), apply again what was applied during the run, prune old settled deliveries.
   */
  async after(result: SyncResult, startedAt: Date): Promise<void> {
    const warehouse = this.o.warehouse;
    const capture = this.capture;
    const polledCaptured = this.policy.captured.filter((name) => result.streams[name]);
    if (result.status === 'done') {
      if (polledCaptured.length > 0 || this.policy.captured.length === 0) this.policy.reconciled(startedAt.getTime());
      if (this.catchingUp) {
        this.catchingUp = false;
        await warehouse.marks.set(CATCH_UP_MARK, '');
        this.o.log('info', 'catch-up complete: every selected stream was polled, past events included');
      }
      if (capture) capture.applier.failuresSinceReconcile = 0;
    } else if (this.catchingUp) {
      this.o.log('warn', `catch-up not complete (${result.status}): the next run goes on with it`);
    }
    if (!capture) return;
    capture.metrics.runs.add({ status: result.status });
    capture.metrics.credits.add({ by: 'reconcile' }, result.credits.total);
    const found: Record<string, number> = {};
    for (const name of polledCaptured) {
      const counts = result.streams[name];
      if (counts) found[name] = counts.inserted + counts.updated + counts.deleted;
    }
    for (const [stream, rows] of Object.entries(found)) capture.metrics.reconciled.add({ stream }, rows);
    await warehouse.capture.recordReconcile(result.runId, found);
    // Definitions and events may have changed; a page read before a delivery's change and loaded after it must not
    // keep the older version: the deliveries applied meanwhile are applied again.
    capture.applier.invalidate();
    const replayed = await capture.applier.replay(startedAt.toISOString().replace('T', ' ').slice(0, 23));
    if (replayed) this.o.log('debug', `${replayed} deliveries applied during the run were checked again`);
    const before = new Date(this.now() - this.o.retentionDays * 86_400_000).toISOString().replace('T', ' ');
    const pruned = await warehouse.capture.prune(before.slice(0, 23));
    if (pruned) this.o.log('debug', `${pruned} settled deliveries older than ${this.o.retentionDays} days removed`);
  }
}
