/**
 * `evsync schedule --cron "<expr>"`: a long-running process that runs the incremental sync on a cron schedule.
 * Never two runs at once (cron's waitForCompletion; a tick that falls during a run is skipped and logged), a
 * warning at start when the schedule cannot fit the credit budget, and a clean stop on SIGINT/SIGTERM: the running
 * sync finishes the page in flight and saves state, then the process exits 0.
 *
 * One API client serves every run: its token is reused while valid (a run does not cost a token call) and its
 * ledger keeps the service's credit window between runs; `beginRun` restarts the per-run stats and budget.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';
import type { Command } from 'commander';
import { selectStreams } from '../../../connectors/index.js';
import { DEFAULT_RATE_LIMIT } from '../../../connectors/service.js';
import type { ApiClient } from '../../api/index.js';
import type { ProgressEvent, SyncOptions, SyncResult } from '../../sync/index.js';
import type { Warehouse } from '../../warehouse/index.js';
import { type App, action, type Ctx, checkWarehousePath, connection, createClient, openWarehouse } from '../context.js';
import { neverFires, nextFiringTimes } from '../cron.js';
import { errorMessage, UsageError } from '../errors.js';
import {
  addBudgetOptions,
  addSelectionOptions,
  type BudgetFlags,
  parseTimeZoneFlag,
  type SelectionFlags,
} from '../options.js';
import { formatNumber, toJson } from '../output/format.js';
import { addPublishOptions } from './daemon-publish.js';
import { addQueryBoundOptions, type DaemonFlags, runDaemon } from './daemon-run.js';
import { statusLine, syncOptionsFrom } from './sync.js';

export interface ScheduleFlags extends SelectionFlags, BudgetFlags {
  cron?: string;
  tz?: string;
  runNow?: boolean;
  deletes?: boolean;
}

/**
 * Runs per hour of a cron expression, from its next firing times: intervals over the time they span (exact for
 * regular schedules, including 6-field ones with seconds; an average for irregular ones). Counting the times over
 * the span from now would add one run: 200 times every 3 s span 597 s, which read as 1,205.9 runs/hour, not 1,200.
 */
export function runsPerHour(nextTimes: readonly number[]): number {
  if (nextTimes.length < 2) return 0;
  const first = nextTimes[0] ?? 0;
  const last = nextTimes[nextTimes.length - 1] ?? first;
  if (last <= first) return 0;
  return ((nextTimes.length - 1) * 3_600_000) / (last - first);
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

export interface BudgetFit {
  perRun: number;
  perHour: number;
  capacityPerHour: number;
  fits: boolean;
}

/**
 * Upper bound of what the schedule spends: every event-scoped stream polled once per event in scope, every other
 * stream once, 10 credits a call, every run. Real incremental runs poll past events less often.
 */
export function budgetFit(opts: {
  events: number;
  eventStreams: number;
  otherStreams: number;
  runsPerHour: number;
  limit: number;
  windowSeconds: number;
}): BudgetFit {
  const perRun = (opts.events * opts.eventStreams + opts.otherStreams) * 10;
  const perHour = perRun * opts.runsPerHour;
  const capacityPerHour = opts.limit * (3600 / opts.windowSeconds);
  return { perRun, perHour, capacityPerHour, fits: perHour <= capacityPerHour };
}

export interface RateLimit {
  credits: number;
  windowSeconds: number;
  /** Where the numbers come from, for the budget message. */
  source: string;
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
  const ledger = await w.lastLedger();
  const learnedLimit = ledger?.limit != null && ledger.limit > 0 ? ledger.limit : null;
  if (!(await w.listTables()).includes('events')) return { events: null, learnedLimit };
  const { eventsInScope } = await import('../../sync/index.js');
  return { events: eventsInScope(await w.currentEvents(), flags).length, learnedLimit };
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

/**
 * The limit to plan with: what the service reported (its headers, as the last run's ledger recorded them), else
 * the configured `rateLimit`, else the spec's 2000 per 600 s. The window length is never in the headers.
 */
export function rateLimitFor(
  learnedLimit: number | null,
  configured: { credits: number; windowSeconds: number } | undefined,
): RateLimit {
  const windowSeconds = configured?.windowSeconds ?? 600;
  if (learnedLimit !== null) {
    return { credits: learnedLimit, windowSeconds, source: 'the limit the service reported' };
  }
  if (configured) return { ...configured, source: 'rateLimit in the config' };
  return { ...DEFAULT_RATE_LIMIT, source: "the service's documented default" };
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
  /** Options of run `n` over the command's, or null to skip it. */
  plan?: (n: number) => Partial<SyncOptions> | null;
  /** After each run (not skipped), with when it started. */
  onResult?: (result: SyncResult, startedAt: Date) => Promise<void>;
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
  /** Stops the cron job; resolves once the run in flight (if any) has returned. */
  stop(): Promise<{ runs: number; skipped: number }>;
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
  const fromFlag = flags.cron !== undefined;
  const cronTime = flags.cron ?? ctx.config.values.schedule?.cron ?? hooks.defaultCron;
  if (!cronTime) {
    throw new UsageError('no schedule: pass --cron "*/15 * * * *" or set schedule.cron in evsync.config.json');
  }
  const where = cronSource(ctx, fromFlag);
  const timeZone = flags.tz ?? ctx.config.values.schedule?.tz;
  const { CronJob, validateCronExpression } = await import('cron');
  const valid = validateCronExpression(cronTime);
  if (!valid.valid) {
    throw new UsageError(
      `${where}: "${cronTime}" is not a valid cron expression (${valid.error?.message ?? 'invalid'}); expected 5 fields (minute hour day month weekday), or 6 with seconds first`,
    );
  }
  const conn = connection(ctx);
  const options = syncOptionsFrom(ctx, flags, 'incremental');
  const log = ctx.log;

  let running: Promise<void> | null = null;
  let runs = 0;
  let skipped = 0;
  let skipTimer: NodeJS.Timeout | null = null;
  const stop = { signal };
  const label = hooks.label ?? 'run';

  // cron skips a tick silently while the previous run is still going: watch the tick times ourselves to log them.
  const watchSkips = (nextAt: number) => {
    skipTimer = setTimeout(
      () => {
        // After a stop request the run is winding down: more "skipped" lines would only be noise.
        if (!running || stop.signal.aborted) return;
        skipped += 1;
        log.warn(`tick at ${new Date(nextAt).toISOString()} skipped: the previous sync is still running`);
        watchSkips(job.nextDate().toMillis());
      },
      Math.max(0, nextAt - Date.now()) + 20,
    );
    skipTimer.unref();
  };

  // One client for the daemon's life (see the file comment); made again only if a run left it unusable.
  const shared: { client: ApiClient | null } = { client: null };
  const clientForRun = async (): Promise<ApiClient> => {
    if (hooks.client) {
      hooks.client.beginRun();
      return hooks.client;
    }
    if (shared.client) {
      try {
        shared.client.beginRun();
        return shared.client;
      } catch (err) {
        log.debug(`a new API client for this run: ${errorMessage(err)}`);
        await shared.client.close();
        shared.client = null;
      }
    }
    shared.client = await createClient(ctx, conn, flags);
    return shared.client;
  };

  const facts = await warehouseFacts(ctx, flags, hooks.warehouse);
  const rate = rateLimitFor(facts.learnedLimit, ctx.config.values.rateLimit);
  const streams = selectStreams(options.streams ?? 'core');
  const eventStreams = streams.filter((s) => s.scope === 'event').length;
  let perHour = 0;
  const checkBudget = (events: number, limit: RateLimit): void => {
    const fit = budgetFit({
      events,
      eventStreams,
      otherStreams: streams.length - eventStreams,
      runsPerHour: perHour,
      limit: limit.credits,
      windowSeconds: limit.windowSeconds,
    });
    const formula = `${events} events x ${eventStreams} event streams (+${streams.length - eventStreams} others) x 10 credits x ${formatNumber(Math.round(perHour * 10) / 10)} runs/hour`;
    const capacity = `${formatNumber(fit.capacityPerHour)}/hour (${formatNumber(limit.credits)} credits per ${formatNumber(limit.windowSeconds)} s: ${limit.source})`;
    if (!fit.fits) {
      log.warn(
        `this schedule may need up to ${formatNumber(Math.round(fit.perHour))} credits/hour (${formula}) but the budget is ${capacity}: runs will fall behind. Schedule less often, or narrow --streams / --event-status`,
      );
    } else log.debug(`budget: up to ${formatNumber(Math.round(fit.perHour))} of ${capacity} (${formula})`);
  };
  let checkedLimit = rate.credits;

  let planned = 0;
  const runOnce = async (): Promise<void> => {
    if (stop.signal.aborted) return;
    const extra = hooks.plan ? hooks.plan(planned + 1) : {};
    planned += 1;
    if (extra === null) return;
    runs += 1;
    const n = runs;
    const startedAt = new Date();
    log.info(`${label} #${n} started at ${startedAt.toISOString()}`);
    let warehouse: Warehouse | null = null;
    try {
      const c = await clientForRun();
      warehouse = hooks.warehouse ?? (await openWarehouse(ctx));
      const { runSync } = await import('../../sync/index.js');
      const result = await runSync(c, warehouse, {
        ...options,
        ...extra,
        signal: stop.signal,
        onProgress: (e) => {
          if (e.type === 'item-failed') log.warn(e.error);
          hooks.onProgress?.(e);
        },
      });
      // One JSON line per run: a daemon's output is read line by line (jq, log shippers).
      if (ctx.json) ctx.out.write(`${toJson({ run: n, ...result })}\n`);
      const line = `${label} #${n}: ${statusLine(result)}`;
      if (result.status === 'failed') log.error(`${line}; ${result.errors.join('; ')}`);
      else if (result.status === 'partial') log.warn(`${line}; ${result.reason ?? ''} (the next run resumes)`);
      else log.ok(line);
      // The service may report another limit than the one the schedule was judged against: judge it again.
      const learned = c.ledger.snapshot().limit;
      if (learned !== checkedLimit) {
        checkedLimit = learned;
        const events = (await factsFrom(warehouse, flags)).events;
        if (events !== null)
          checkBudget(events, { ...rate, credits: learned, source: 'the limit the service reported' });
      }
      await hooks.onResult?.(result, startedAt);
    } catch (err) {
      // One failed run must not end the daemon: the next tick tries again.
      if (ctx.json) ctx.out.write(`${toJson({ run: n, status: 'failed', error: errorMessage(err) })}\n`);
      log.error(`${label} #${n} failed: ${errorMessage(err)}`);
    } finally {
      if (!hooks.warehouse) await warehouse?.close().catch(() => undefined);
    }
  };

  const job = CronJob.from({
    cronTime,
    ...(timeZone ? { timeZone } : {}),
    waitForCompletion: true,
    start: false,
    onTick: async () => {
      const p = runOnce();
      running = p;
      onBusy(true);
      watchSkips(job.nextDate().toMillis());
      try {
        await p;
      } finally {
        running = null;
        onBusy(false);
        if (skipTimer) clearTimeout(skipTimer);
      }
    },
    errorHandler: (err) => log.error(`scheduled run failed: ${errorMessage(err)}`),
  });

  const never = neverFires(job);
  if (never) throw new UsageError(`${where}: "${cronTime}" ${never}`);
  perHour = runsPerHour(nextFiringTimes(job, 200));
  log.info(
    `schedule "${cronTime}"${timeZone ? ` (${timeZone})` : ''}: about ${frequency(perHour)}, next at ${job.nextDate().toISO()}; Ctrl-C to stop`,
  );
  if (facts.events === null) {
    log.info('events in scope unknown until the first sync: the budget check runs on the next start');
  } else checkBudget(facts.events, rate);

  job.start();
  let firstRun: NodeJS.Timeout | null = null;
  if (flags.runNow) {
    if (hooks.firstRunDelayMs) firstRun = setTimeout(() => void job.fireOnTick(), hooks.firstRunDelayMs);
    else void job.fireOnTick();
  }
  return {
    async stop() {
      // stop() resolves once the running callback (if any) has returned: the engine saw the signal and saved state.
      if (firstRun) clearTimeout(firstRun);
      await job.stop();
      if (running) await running;
      if (skipTimer) clearTimeout(skipTimer);
      await shared.client?.close();
      return { runs, skipped };
    },
  };
}

export function registerScheduleCommand(program: Command, app: App): void {
  const cmd = program
    .command('schedule')
    .description('run the incremental sync on a cron schedule (a long-running process)')
    .option('--cron <expr>', 'cron expression, 5 fields or 6 with seconds (or schedule.cron in the config file)')
    .option('--tz <zone>', 'time zone of the cron expression (default: the local zone)', parseTimeZoneFlag)
    .option('--run-now', 'also run once immediately at start');
  addSelectionOptions(cmd);
  addBudgetOptions(cmd);
  addQueryBoundOptions(cmd);
  addPublishOptions(cmd);
  cmd
    .option('--deletes', 'run delete sweeps every run (default: when due, with spare credits)')
    .addHelpText(
      'after',
      `
Never runs two syncs at once: a tick that falls while a sync is running is skipped and logged. It is \`evsync serve\`
without the webhook receiver: it holds the database for its whole life (a second writer is refused, naming it),
and \`evsync status\` and \`evsync query\` from another shell are answered by it (queries read a copy of the warehouse, bounded by
--query-timeout and --query-max-rows). Waits for the rate-limit window are printed as \`sync\` prints them.
SIGINT/SIGTERM stop it cleanly: the running sync finishes the page in flight and saves state; exit 0, or 3 when a
run in flight was cut short (the next start resumes it).

Examples:
  $ evsync schedule --cron "*/15 * * * *"
  $ evsync schedule --cron "0 * * * *" --tz Europe/Paris --event-status live --budget 1500
  $ evsync schedule --cron "*/15 * * * *" --snapshot ./evsync-snapshot.duckdb --parquet-out s3://bucket/evsync`,
    )
    .action(action<DaemonFlags>(app, (ctx, flags) => runDaemon(ctx, flags, { name: 'schedule' })));
}
