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
import { existsSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';
import { type StreamDefinition, selectStreams } from '../../connectors/index.js';
import { LIST_CALL_CREDITS } from '../../connectors/service.js';
import type { ApiClient } from '../api/index.js';
import { neverFires, nextFiringTimes } from '../daemon/cron.js';
import { type CronSchedule, createCronJob } from '../daemon/cron-job.js';
import { budgetFit, type RateLimit, rateLimitFor, runsPerHour } from '../daemon/schedule-budget.js';
import type { ProgressEvent, SyncOptions, SyncResult } from '../sync/index.js';
import type { Warehouse } from '../warehouse/index.js';
import type { Connection } from './config.js';
import { type Ctx, checkWarehousePath, connection, createClient, openWarehouse } from './context.js';
import { errorMessage, UsageError } from './errors.js';
import type { BudgetFlags, SelectionFlags } from './options.js';
import { formatNumber, toJson } from './output/format.js';
import type { Logger } from './output/logger.js';
import { statusLine } from './run-report.js';
import { syncOptionsFrom } from './sync-options.js';

export interface ScheduleFlags extends SelectionFlags, BudgetFlags {
  cron?: string;
  tz?: string;
  runNow?: boolean;
  deletes?: boolean;
}

/** How often a schedule runs, in the unit that reads best: a yearly one is "1 run/year", not "0 runs/hour". */
export function frequency(perHour: number): string {
  const say = (n: number, unit: string) => {
    const text = formatNumber(Math.round(n * 10) / 10);
    return `${text} ${text === '1' ? 'run' : 'runs'}/${unit}`;
  };
  if (perHour >= 0.5) return say(perHour, 'hour');
  if (perHour * 24 >= 0.5) return say(perHour * 24, 'day');
  return say(perHour * 24 * 365, 'year');
}

/** What the warehouse knows before the first run: events in scope, and the limit the service reported last. */
interface WarehouseFacts {
  /** Null before the first sync. */
  events: number | null;
  /** `credit_limit` of the last run's ledger (from the service's X-Rate-Limit-Limit), or null. */
  learnedLimit: number | null;
}

/** What the budget warning needs from the warehouse: events in scope (the engine's own rule) and the limit seen. */
async function factsFrom(w: Warehouse, flags: SelectionFlags): Promise<WarehouseFacts> {
  const ledger = await w.runs.lastLedger();
  const learnedLimit = ledger?.limit != null && ledger.limit > 0 ? ledger.limit : null;
  if (!(await w.listTables()).includes('events')) return { events: null, learnedLimit };
  const { eventsInScope } = await import('../sync/index.js');
  return { events: eventsInScope(await w.current.events(), flags).length, learnedLimit };
}

async function warehouseFacts(ctx: Ctx, flags: SelectionFlags, held?: Warehouse): Promise<WarehouseFacts> {
  if (held) return factsFrom(held, flags);
  checkWarehousePath(ctx); // a --db no run can use is said now (exit 2), not at the first tick
  if (!existsSync(ctx.config.db)) return { events: null, learnedLimit: null };
  let w: Warehouse | null = null;
  try {
    w = await openWarehouse(ctx, { readOnly: true });
    return await factsFrom(w, flags);
  } finally {
    await w?.close();
  }
}

/** Where the cron expression came from, as the user would name it. */
function cronSource(ctx: Ctx, fromFlag: boolean): string {
  if (fromFlag) return '--cron';
  const file = ctx.config.file;
  const rel = file ? relative(ctx.io.cwd, file) : '';
  const name = file ? (rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file) : 'evsync.config.json';
  return `${name}: schedule.cron`;
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
  /** Cron expression when neither --cron nor schedule.cron is given (default: none, a usage error). */
  defaultCron?: string;
}

export interface Scheduler {
  /** Seconds between runs, from the cron's next firing times (null when it fires too rarely to say). */
  readonly everySeconds: number | null;
  /** Stops the cron job; resolves once the run in flight (if any) has returned. */
  stop(): Promise<{ runs: number; skipped: number }>;
}

/** The cron expression of the flags, the config file or the daemon's default; a usage error when none is valid. */
async function resolveSchedule(ctx: Ctx, flags: ScheduleFlags, defaultCron?: string): Promise<CronSchedule> {
  const fromFlag = flags.cron !== undefined;
  const cronTime = flags.cron ?? ctx.config.values.schedule?.cron ?? defaultCron;
  if (!cronTime) {
    throw new UsageError('no schedule: pass --cron "*/15 * * * *" or set schedule.cron in evsync.config.json');
  }
  const where = cronSource(ctx, fromFlag);
  const timeZone = flags.tz ?? ctx.config.values.schedule?.tz;
  const { validateCronExpression } = await import('cron');
  const valid = validateCronExpression(cronTime);
  if (!valid.valid) {
    throw new UsageError(
      `${where}: "${cronTime}" is not a valid cron expression (${valid.error?.message ?? 'invalid'}); expected 5 fields (minute hour day month weekday), or 6 with seconds first`,
    );
  }
  return { cronTime, where, timeZone };
}

/** One client for the daemon's life (see the file comment); made again only if a run left it unusable. */
class RunClients {
  private own: ApiClient | null = null;

  constructor(
    private readonly ctx: Ctx,
    private readonly conn: Connection,
    private readonly flags: ScheduleFlags,
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
        this.ctx.log.debug(`a new API client for this run: ${errorMessage(err)}`);
        await this.own.close();
        this.own = null;
      }
    }
    this.own = await createClient(this.ctx, this.conn, this.flags);
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
    private readonly log: Logger,
    private readonly flags: SelectionFlags,
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
    const formula = `${events} events x ${this.eventStreams} event streams (+${this.otherStreams} others) x ${LIST_CALL_CREDITS} credits x ${formatNumber(Math.round(this.perHour * 10) / 10)} runs/hour`;
    const capacity = `${formatNumber(fit.capacityPerHour)}/hour (${formatNumber(limit.credits)} credits per ${formatNumber(limit.windowSeconds)} s: ${limit.source})`;
    if (!fit.fits) {
      this.log.warn(
        `this schedule may need up to ${formatNumber(Math.round(fit.perHour))} credits/hour (${formula}) but the budget is ${capacity}: runs will fall behind. Schedule less often, or narrow --streams / --event-status`,
      );
    } else this.log.debug(`budget: up to ${formatNumber(Math.round(fit.perHour))} of ${capacity} (${formula})`);
  }

  /** After a run: the service may report another limit than the one the schedule was judged against. */
  async recheck(client: ApiClient, warehouse: Warehouse): Promise<void> {
    const learned = client.ledger.snapshot().limit;
    if (learned === this.checkedLimit) return;
    this.checkedLimit = learned;
    const events = (await factsFrom(warehouse, this.flags)).events;
    if (events !== null)
      this.check(events, { ...this.rate, credits: learned, source: 'the limit the service reported' });
  }
}

/** What every scheduled run shares. */
interface RunSetup {
  ctx: Ctx;
  options: SyncOptions;
  hooks: SchedulerHooks;
  label: string;
  signal: AbortSignal;
  clients: RunClients;
  budget: BudgetWatch;
  /** The slice of bulk work running now, which the next tick closes (null when none runs). */
  slice: { name: string; closing: AbortController } | null;
}

/** The log line of a finished run, at the level its status calls for (a slice that yielded to a tick is no alarm). */
function reportRun(ctx: Ctx, label: string, runNumber: number, result: SyncResult, yielded: boolean): void {
  // One JSON line per run: a daemon's output is read line by line (jq, log shippers).
  if (ctx.json) ctx.out.write(`${toJson({ run: runNumber, ...result })}\n`);
  const line = `${label} #${runNumber}: ${statusLine(result)}`;
  if (result.status === 'failed') ctx.log.error(`${line}; ${result.errors.join('; ')}`);
  else if (result.status === 'partial')
    ctx.log[yielded ? 'info' : 'warn'](`${line}; ${result.reason ?? ''} (the next run resumes)`);
  else ctx.log.ok(line);
}

/**
 * One scheduled sync, with the plan's extra options; a failure is logged, never thrown (see the catch). Returns
 * whether it was a slice that stopped for a tick (that tick's runs are then owed at once).
 */
async function runScheduledSync(setup: RunSetup, runNumber: number, extra: Partial<SyncOptions>): Promise<boolean> {
  const { ctx, hooks, label } = setup;
  const startedAt = new Date(ctx.now());
  ctx.log.info(`${label} #${runNumber} started at ${startedAt.toISOString()}`);
  let warehouse: Warehouse | null = null;
  const closing = new AbortController();
  const planned = extra.lane ? { ...extra, lane: { ...extra.lane, closes: closing.signal } } : extra;
  if (extra.lane) setup.slice = { name: extra.lane.name, closing };
  try {
    const client = await setup.clients.forRun();
    warehouse = hooks.warehouse ?? (await openWarehouse(ctx));
    const { runSync } = await import('../sync/index.js');
    const result = await runSync(client, warehouse, {
      ...setup.options,
      ...planned,
      signal: setup.signal,
      onProgress: (event) => {
        if (event.type === 'item-failed') ctx.log.warn(event.error);
        hooks.onProgress?.(event);
      },
    });
    const yielded = result.status === 'partial' && extra.lane !== undefined && closing.signal.aborted;
    reportRun(ctx, label, runNumber, result, yielded);
    await setup.budget.recheck(client, warehouse);
    await hooks.onResult?.(result, startedAt, planned);
    return yielded && !setup.signal.aborted;
  } catch (err) {
    // One failed run must not end the daemon: the next tick tries again.
    if (ctx.json) ctx.out.write(`${toJson({ run: runNumber, status: 'failed', error: errorMessage(err) })}\n`);
    ctx.log.error(`${label} #${runNumber} failed: ${errorMessage(err)}`);
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
  setup.ctx.log.info(
    `tick at ${at} during ${slice.name}: it stops after its pages in flight (state saved), the tick's runs come first`,
  );
  slice.closing.abort(`the tick at ${at} is due`);
  return true;
}

/**
 * Runs the incremental sync on the cron schedule of `flags` (or the config file) until `signal` aborts: never two
 * runs at once, skipped ticks logged, the budget judged against the limit the service reported.
 */
export async function startScheduler(
  ctx: Ctx,
  flags: ScheduleFlags,
  signal: AbortSignal,
  hooks: SchedulerHooks = {},
  onBusy: (running: boolean) => void = () => undefined,
): Promise<Scheduler> {
  const schedule = await resolveSchedule(ctx, flags, hooks.defaultCron);
  const { cronTime, timeZone } = schedule;
  const conn = connection(ctx);
  const options = syncOptionsFrom(ctx, flags, 'incremental');
  const log = ctx.log;
  const clients = new RunClients(ctx, conn, flags, hooks.client);
  const facts = await warehouseFacts(ctx, flags, hooks.warehouse);
  const rate = rateLimitFor(facts.learnedLimit, ctx.config.values.rateLimit);
  const budget = new BudgetWatch(log, flags, selectStreams(options.streams ?? 'core'), rate);
  const setup: RunSetup = { ctx, options, hooks, label: hooks.label ?? 'run', signal, clients, budget, slice: null };

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
  if (never) throw new UsageError(`${schedule.where}: "${cronTime}" ${never}`);
  budget.perHour = runsPerHour(nextFiringTimes(job, 200));
  log.info(
    `schedule "${cronTime}"${timeZone ? ` (${timeZone})` : ''}: about ${frequency(budget.perHour)}, next at ${job.nextDate().toISO()}; Ctrl-C to stop`,
  );
  if (facts.events === null) {
    log.info('events in scope unknown until the first sync: the budget check runs on the next start');
  } else budget.check(facts.events, rate);

  job.start();
  let firstRun: NodeJS.Timeout | null = null;
  if (flags.runNow) {
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
