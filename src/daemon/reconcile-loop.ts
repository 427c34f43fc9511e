/**
 * The daemon's polling protocol (`evsync serve` and `evsync schedule`), as a library piece: which streams each
 * scheduled run polls, and what follows each run. With webhooks on, the webhook-fed streams are polled only when due
 * (see ReconcilePolicy); without them (`schedule`), every selected stream is polled every run.
 *
 * The catch-up: at start the daemon cannot know what the service sent while nothing listened (its retry schedule
 * is undocumented; a delivery it gave up is lost), so the first run polls every selected stream over every event,
 * past ones included, live events first (the engine's priority), from where the last poll ended. A catch-up the
 * budget cannot finish stays pending: every following run polls the same way (and resumes where the last one
 * stopped) until one completes; `status` shows it pending, and since when. It runs as bulk work in slices (`tick`):
 * it leaves a share of each window to the ticks and the re-reads, and each tick stops it for the tick's own polls.
 *
 * Runs go through the same engine as `sync`, with the same rules: a path that answers 404 is recorded unavailable
 * unless the user named that stream one by one (the daemon's lists name streams of a set one by one, so the user's
 * own names are handed to the engine).
 */

import { utcText } from '../../connectors/service.js';
import { systemNow } from '../../schemas/clock.js';
import type { RunningCapture } from '../sync/capture/index.js';
import { resolveSelection } from '../sync/selection.js';
import type { SyncOptions, SyncResult } from '../sync/types.js';
import type { Warehouse } from '../warehouse/index.js';
import { CATCH_UP_KIND, CATCH_UP_LEAVES, CatchUp } from './catch-up.js';
import { ReconcilePolicy } from './reconcile-policy.js';

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
  /** The catch-up owed (polled with past events included) until a run of it completes: its one owner. */
  readonly catchUp: CatchUp;
  /** The running receiver and applier (null until attached, and always without webhooks). */
  private capture: RunningCapture | null = null;

  constructor(private readonly o: ReconcileLoopOptions) {
    this.now = o.now ?? systemNow;
    this.catchUp = new CatchUp(o.warehouse, o.catchUp, this.now);
    this.policy = new ReconcilePolicy({
      streams: o.streams,
      everyHours: o.everyHours,
      catchUp: this.catchUp.wanted,
      webhooks: o.webhooks,
      now: o.now,
    });
    this.named = [...resolveSelection(o.streams, { customFields: false }).named];
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
    const pending = await this.catchUp.start(lastHeartbeat);
    if (pending) {
      this.o.log('info', `a catch-up pending since ${pending} goes on: every event is polled, past ones included`);
    }
  }

  /**
   * The streams every scheduled run polls (with the definition streams they need), and those only reconciliations
   * poll (the webhook-fed ones and theirs): what the status document judges freshness against.
   */
  cadenceStreams(): { polled: string[]; reconciled: string[] } {
    const read = (names: readonly string[]) => {
      if (names.length === 0) return [];
      const s = resolveSelection(names.join(','), { customFields: true });
      return [...s.accountPhase, ...s.dependentPhase, ...s.eventPhase].map((stream) => stream.name);
    };
    const polled = read(this.policy.polled);
    return { polled, reconciled: read(this.policy.captured).filter((name) => !polled.includes(name)) };
  }

  /** Whether a catch-up is still owed. */
  get pending(): boolean {
    return this.catchUp.pending;
  }

  /** Options of the next run over the daemon's own, or null to skip it (no credit spent for nothing). */
  plan(): Partial<SyncOptions> | null {
    const unhealthy = (this.capture?.applier.failuresSinceReconcile ?? 0) > 0;
    // A catch-up names the webhook-fed streams first: the silence left them furthest behind (the polled ones are as
    // stale as between two ticks), and its groups of events take their streams in this order (run.ts, owedGroup).
    const list = this.pending ? [...this.policy.captured, ...this.policy.polled] : this.policy.next(unhealthy);
    if (list === null || list.length === 0) {
      this.o.log('debug', 'reconcile skipped: every selected stream is fed by webhooks, none due');
      return null;
    }
    return {
      streams: list.join(','),
      namedStreams: this.named,
      // Each completed item reaches the tables (and the daemon's readers) at once, not at the end of a long run.
      mergeEachItem: true,
      ...(this.pending ? this.catchUpOptions() : {}),
    };
  }

  /**
   * The runs of the next tick, in order (none: the tick is skipped, no credit spent). During a catch-up the catch-up
   * runs as bulk work, in slices the scheduler ends when the next tick is due (`lane`), and from the second slice on
   * each tick first polls what a tick polls, the streams no webhook feeds, in an ordinary incremental run with a
   * fresh signpost: their cadence holds however long the catch-up takes. (The first slice polls them itself, live
   * events first; a slice skips the scopes a tick's run completed since the catch-up began.)
   */
  tick(): Partial<SyncOptions>[] {
    const run = this.plan();
    if (run === null || !this.pending) return run === null ? [] : [run];
    const slice = { ...run, runKind: CATCH_UP_KIND, lane: { name: 'the catch-up', leaveShare: CATCH_UP_LEAVES } };
    const polled = this.policy.polled;
    if (!this.catchUp.hasSliced || polled.length === 0) return [slice];
    this.o.log('info', `tick during the catch-up: ${polled.join(', ')} polled first, then the catch-up goes on`);
    return [{ streams: polled.join(','), namedStreams: this.named, mergeEachItem: true }, slice];
  }

  /**
   * What a catch-up adds to a run: past events too (a change to one while nothing listened is otherwise missed for a
   * day). After a daemon ran here (its heartbeat says since when nothing listened), what the silence owes and no
   * more: the delete sweeps whose schedule fell due (owed work, not spare-credit work), and for each scope of a
   * webhook-fed stream a delete check (one call, delete-check.ts) where no sweep is due: a delete delivery the
   * service gave up on is seen by no poll, and the check says whether the scope lost any record, a sweep following
   * only where it did. (Sweeping every scope instead made a two-minute silence cost more than a first start.) At a
   * first start no delivery was ever missed: the sweeps keep the cadence one-shot syncs had, and the catch-up is one
   * pass.
   */
  private catchUpOptions(): Partial<SyncOptions> {
    if (!this.catchUp.afterSilence) return { pastEventPollHours: 0 };
    return { pastEventPollHours: 0, deletes: 'due', deleteChecks: this.policy.captured };
  }

  /**
   * After each run (`planned`: the options `tick` gave it): count what it found that webhooks had missed, mark the
   * webhook-fed streams reconciled when it completed (and the catch-up done when it was the catch-up's), apply again
   * what was applied during the run, prune old settled deliveries.
   */
  async after(result: SyncResult, startedAt: Date, planned?: Partial<SyncOptions>): Promise<void> {
    const warehouse = this.o.warehouse;
    const capture = this.capture;
    const polledCaptured = this.policy.captured.filter((name) => result.streams[name]);
    // A tick's run between two slices is not the catch-up: its end neither completes the catch-up nor owes it.
    const slice = planned ? planned.runKind === CATCH_UP_KIND : this.pending;
    this.catchUp.ran(slice);
    if (result.status === 'done') {
      if (polledCaptured.length > 0 || this.policy.captured.length === 0) {
        this.policy.reconciled(startedAt.getTime());
        if (capture) capture.applier.failuresSinceReconcile = 0;
      }
      if (this.pending && slice) {
        await this.catchUp.complete();
        this.o.log('info', 'catch-up complete: every selected stream was polled, past events included');
      }
    } else if (this.pending && slice) this.notComplete(result, planned);
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
    const replayed = await capture.applier.replay(utcText(startedAt, 'ms'));
    if (replayed) this.o.log('debug', `${replayed} deliveries applied during the run were checked again`);
    const before = utcText(this.now() - this.o.retentionDays * 86_400_000, 'ms');
    const pruned = await warehouse.capture.prune(before);
    if (pruned) this.o.log('debug', `${pruned} settled deliveries older than ${this.o.retentionDays} days removed`);
  }

  /** Says why a slice of the catch-up ended before it: a tick came due (the way it yields), or it ran out. */
  private notComplete(result: SyncResult, planned: Partial<SyncOptions> | undefined): void {
    if (result.status === 'partial' && planned?.lane?.closes?.aborted) {
      const { done, total } = result.items;
      this.o.log(
        'info',
        `catch-up not complete (partial): it stopped for the tick after its pages in flight (${done} of ${total} items of this slice done); the tick's runs come first, then it goes on`,
      );
    } else this.o.log('warn', `catch-up not complete (${result.status}): the next run goes on with it`);
  }
}
