/**
 * The daemon's scheduler (`evsync schedule`, `evsync serve`): the incremental sync on a cron schedule. Never two
 * runs at once (cron's waitForCompletion; a tick that falls during a run is skipped and logged, unless the run is a
 * slice of bulk work, a daemon's catch-up: that yields to the tick, whose runs follow at once), a warning at start
 * when the schedule cannot fit the credit budget, and a clean stop: the running sync finishes the page in flight and
 * saves state.
 *
 * One API client serves every run: its token is reused while valid (a run does not cost a token call) and its
 * ledger keeps the service's credit window between runs; `beginRun` restarts the per-run stats and budget.
 */

import { type StreamDefinition, selectStreams } from '../../connectors/index.js';
import { LIST_CALL_CREDITS } from '../../connectors/service.js';
import type { Now } from '../../schemas/clock.js';
import type { ApiClient } from '../api/index.js';
import { SyncUsageError } from '../sync/errors.js';
import { type EventFilters, eventsInScope } from '../sync/event-scope.js';
import type { ProgressEvent, SyncOptions, SyncResult } from '../sync/types.js';
import type { Warehouse } from '../warehouse/index.js';
import { neverFires, nextFiringTimes } from './cron.js';
import { type CronSchedule, createCronJob } from './cron-job.js';
import { budgetFit, formatCount, frequency, type RateLimit, runsPerHour } from './schedule-budget.js';

/** Where the scheduler says what it does, at the level each line calls for. */
interface SchedulerLog {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  ok(message: string): void;
}

/** What the scheduler needs from whoever composes it (the command line: src/cli/scheduler.ts). */
export interface SchedulerHost {
  log: SchedulerLog;
  now: Now;
  /** A client for the runs (made again only if a run left the last one unusable). */
  newClient(): Promise<ApiClient>;
  /** The warehouse of one run, when the daemon holds none (closed after the run). */
  openWarehouse(): Promise<Warehouse>;
  /** Says a finished run, at the level its status calls for (`yielded`: a slice that stopped for a tick). */
  reportRun(label: string, runNumber: number, result: SyncResult, yielded: boolean): void;
  /** Says a run that failed before it had a result (a failure is logged, never thrown: the next tick tries again). */
  reportFailure(label: string, runNumber: number, err: unknown): void;
}

/** What the warehouse knows before the first run: events in scope, and the limit the service reported last. */
export interface WarehouseFacts {
  /** Null before the first sync. */
  events: number | null;
  /** `credit_limit` of the last run's ledger (from the service's X-Rate-Limit-Limit), or null. */
  learnedLimit: number | null;
}

/** What the budget warning needs from the warehouse: events in scope (the engine's own rule) and the limit seen. */
export async function factsFrom(w: Warehouse, filters: EventFilters): Promise<WarehouseFacts> {
  const ledger = await w.runs.lastLedger();
  const learnedLimit = ledger?.limit != null && ledger.limit > 0 ? ledger.limit : null;
  if (!(await w.listTables()).includes('events')) return { events: null, learnedLimit };
  return { events: eventsInScope(await w.current.events(), filters).length, learnedLimit };
}

/**
 * What a daemon built on the schedule adds (`evsync serve`): a client and warehouse it holds for its life, which
 * streams each run polls (null: skip the run, no credit spent), and what to do with each result.
 */
export interface SchedulerHooks {
  /** The open warehouse every run uses (default: opened for each run, closed after). */
  warehouse?: Warehouse;
  /** The client every run uses (default: one made for the daemon, reused across runs). */
  client?: ApiClient;
  /**
   * The runs of the next tick over the command's options, in order (none: the tick is skipped). A run with a `lane`
   * is a slice of bulk work: its lane closes when the next tick is due, and that tick's runs then follow at once.
   */
  plan?: () => Partial<SyncOptions>[];
  /** After each run (not skipped), with when it started and the options it was planned with. */
  onResult?: (result: SyncResult, startedAt: Date, planned: Partial<SyncOptions>) => Promise<void>;
  /** With --run-now (or a daemon's catch-up): wait this long before that first run (default 0). */
  firstRunDelayMs?: number;
  /** Every progress event of every run (which partitions a run wrote, for the daemon's publisher). */
  onProgress?: (event: ProgressEvent) => void;
  /** Log label of a run (default `run`). */
  label?: string;
}

export interface Scheduler {
  /** Seconds between runs, from the cron's next firing times (null when it fires too rarely to say). */
  readonly everySeconds: number | null;
  /** Stops the cron job; resolves once the run in flight (if any) has returned. */
  stop(): Promise<{ runs: number; skipped: number }>;
}

/** One client for the daemon's life (see the file comment); made again only if a run left it unusable. */
class RunClients {
  private own: ApiClient | null = null;

  constructor(
    private readonly host: SchedulerHost,
    private readonly given: ApiClient | undefined,
  ) {}

  async forRun(): Promise<ApiClient> {
    if (this.given) {
      this.given.beginRun();
      return this.given;
    }
    if (this.own) {
      try {
        this.own.beginRun();
        return this.own;
      } catch (err) {
        this.host.log.debug(`a new API client for this run: ${err instanceof Error ? err.message : String(err)}`);
        await this.own.close();
        this.own = null;
      }
    }
    this.own = await this.host.newClient();
    return this.own;
  }

  /** Closes the client the daemon made (a given one belongs to the caller). */
  async close(): Promise<void> {
    await this.own?.close();
  }
}

/**
 * The schedule's credit need judged against the limit: at start, and again whenever a run learns another limit
 * from the service than the one the schedule was judged against.
 */
class BudgetWatch {
  /** Known once the cron job exists (from its next firing times). */
  perHour = 0;
  private readonly eventStreams: number;
  private readonly otherStreams: number;
  private checkedLimit: number;

  constructor(
    private readonly log: SchedulerLog,
    private readonly filters: EventFilters,
    streams: readonly StreamDefinition[],
    private readonly rate: RateLimit,
  ) {
    this.eventStreams = streams.filter((stream) => stream.scope === 'event').length;
    this.otherStreams = streams.length - this.eventStreams;
    this.checkedLimit = rate.credits;
  }

  check(events: number, limit: RateLimit): void {
    const fit = budgetFit({
      events,
      eventStreams: this.eventStreams,
      otherStreams: this.otherStreams,
      runsPerHour: this.perHour,
      limit: limit.credits,
      windowSeconds: limit.windowSeconds,
    });
    const formula = `${events} events x ${this.eventStreams} event streams (+${this.otherStreams} others) x ${LIST_CALL_CREDITS} credits x ${formatCount(Math.round(this.perHour * 10) / 10)} runs/hour`;
    const capacity = `${formatCount(fit.capacityPerHour)}/hour (${formatCount(limit.credits)} credits per ${formatCount(limit.windowSeconds)} s: ${limit.source})`;
    if (!fit.fits) {
      this.log.warn(
        `this schedule may need up to ${formatCount(Math.round(fit.perHour))} credits/hour (${formula}) but the budget is ${capacity}: runs will fall behind. Schedule less often, or narrow --streams / --event-status`,
      );
    } else this.log.debug(`budget: up to ${formatCount(Math.round(fit.perHour))} of ${capacity} (${formula})`);
  }

  /** After a run: the service may report another limit than the one the schedule was judged against. */
  async recheck(client: ApiClient, warehouse: Warehouse): Promise<void> {
    const learned = client.ledger.snapshot().limit;
    if (learned === this.checkedLimit) return;
    this.checkedLimit = learned;
    const events = (await factsFrom(warehouse, this.filters)).events;
    if (events !== null)
      this.check(events, { ...this.rate, credits: learned, source: 'the limit the service reported' });
  }
}

/** What every scheduled run shares. */
interface RunSetup {
  host: SchedulerHost;
  options: SyncOptions;
  hooks: SchedulerHooks;
  label: string;
  signal: AbortSignal;
  clients: RunClients;
  budget: BudgetWatch;
  /** The slice of bulk work running now, which the next tick closes (null when none runs). */
  slice: { name: string; closing: AbortController } | null;
}

/**
 * One scheduled sync, with the plan's extra options; a failure is logged, never thrown (see the catch). Returns
 * whether it was a slice that stopped for a tick (that tick's runs are then owed at once).
 */
async function runScheduledSync(setup: RunSetup, runNumber: number, extra: Partial<SyncOptions>): Promise<boolean> {
  const { host, hooks, label } = setup;
  const startedAt = new Date(host.now());
  host.log.info(`${label} #${runNumber} started at ${startedAt.toISOString()}`);
  let warehouse: Warehouse | null = null;
  const closing = new AbortController();
  const planned = extra.lane ? { ...extra, lane: { ...extra.lane, closes: closing.signal } } : extra;
  if (extra.lane) setup.slice = { name: extra.lane.name, closing };
  try {
    const client = await setup.clients.forRun();
    warehouse = hooks.warehouse ?? (await host.openWarehouse());
    const { runSync } = await import('../sync/run.js');
    const result = await runSync(client, warehouse, {
      ...setup.options,
      ...planned,
      signal: setup.signal,
      onProgress: (event) => {
        if (event.type === 'item-failed') host.log.warn(event.error);
        hooks.onProgress?.(event);
      },
    });
    const yielded = result.status === 'partial' && extra.lane !== undefined && closing.signal.aborted;
    host.reportRun(label, runNumber, result, yielded);
    await setup.budget.recheck(client, warehouse);
    await hooks.onResult?.(result, startedAt, planned);
    return yielded && !setup.signal.aborted;
  } catch (err) {
    // One failed run must not end the daemon: the next tick tries again.
    host.reportFailure(label, runNumber, err);
    return false;
  } finally {
    setup.slice = null;
    if (!hooks.warehouse) await warehouse?.close().catch(() => undefined);
  }
}

/**
 * A tick falls while a slice of bulk work runs: the slice yields (its lane closes: it stops after its pages in
 * flight, state saved) and the tick's runs follow it. False when no slice runs (the tick is then skipped).
 */
function yieldToTick(setup: RunSetup, tickAt: number): boolean {
  const slice = setup.slice;
  if (!slice || slice.closing.signal.aborted) return false;
  const at = new Date(tickAt).toISOString();
  setup.host.log.info(
    `tick at ${at} during ${slice.name}: it stops after its pages in flight (state saved), the tick's runs come first`,
  );
  slice.closing.abort(`the tick at ${at} is due`);
  return true;
}

/** The schedule and what it is judged with, read by the command line from its flags and config. */
interface SchedulePlan {
  schedule: CronSchedule;
  /** Every run's options (the tick's plan goes over them). */
  options: SyncOptions;
  /** Which events are in scope, for the budget check. */
  filters: EventFilters;
  facts: WarehouseFacts;
  rate: RateLimit;
  /** Also run once at start (--run-now, or a daemon's catch-up). */
  runNow: boolean;
}

/**
 * Runs the incremental sync on `plan`'s cron schedule until `signal` aborts: never two runs at once, skipped ticks
 * logged, the budget judged against the limit the service reported.
 */
export async function startScheduler(
  host: SchedulerHost,
  plan: SchedulePlan,
  signal: AbortSignal,
  hooks: SchedulerHooks = {},
  onBusy: (running: boolean) => void = () => undefined,
): Promise<Scheduler> {
  const { schedule, options, facts, rate } = plan;
  const { cronTime, timeZone } = schedule;
  const log = host.log;
  const clients = new RunClients(host, hooks.client);
  const budget = new BudgetWatch(log, plan.filters, selectStreams(options.streams ?? 'core'), rate);
  const setup: RunSetup = { host, options, hooks, label: hooks.label ?? 'run', signal, clients, budget, slice: null };

  let runs = 0;
  const runOnce = async (): Promise<void> => {
    // A slice that yielded to a tick hands over to it: that tick's runs follow at once (cron skipped it meanwhile).
    let handOver = true;
    while (handOver && !signal.aborted) {
      handOver = false;
      for (const extra of hooks.plan ? hooks.plan() : [{}]) {
        if (signal.aborted) return;
        runs += 1;
        handOver = await runScheduledSync(setup, runs, extra);
      }
    }
  };
  const yieldTo = (tickAt: number) => yieldToTick(setup, tickAt);
  const { job, skips, inFlight } = await createCronJob(schedule, log, signal, runOnce, onBusy, yieldTo);

  const never = neverFires(job);
  if (never) throw new SyncUsageError(`${schedule.where}: "${cronTime}" ${never}`);
  budget.perHour = runsPerHour(nextFiringTimes(job, 200));
  log.info(
    `schedule "${cronTime}"${timeZone ? ` (${timeZone})` : ''}: about ${frequency(budget.perHour)}, next at ${job.nextDate().toISO()}; Ctrl-C to stop`,
  );
  if (facts.events === null) {
    log.info('events in scope unknown until the first sync: the budget check runs on the next start');
  } else budget.check(facts.events, rate);

  job.start();
  let firstRun: NodeJS.Timeout | null = null;
  if (plan.runNow) {
    if (hooks.firstRunDelayMs) firstRun = setTimeout(() => void job.fireOnTick(), hooks.firstRunDelayMs);
    else void job.fireOnTick();
  }
  return {
    everySeconds: budget.perHour > 0 ? Math.round(3600 / budget.perHour) : null,
    async stop() {
      // stop() resolves once the running callback (if any) has returned: the engine saw the signal and saved state.
      if (firstRun) clearTimeout(firstRun);
      await job.stop();
      const running = inFlight();
      if (running) await running;
      skips.clear();
      await clients.close();
      return { runs, skipped: skips.skipped };
    },
  };
}
