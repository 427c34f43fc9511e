/**
 * `evsync schedule --cron "<expr>"`: a long-running process that runs the incremental sync on a cron schedule.
 * Never two runs at once (cron's waitForCompletion; a tick that falls during a run is skipped and logged), a
 * warning at start when the schedule cannot fit the credit budget, and a clean stop on SIGINT/SIGTERM: the running
 * sync finishes the page in flight and saves state, then the process exits 0.
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { selectStreams } from '../../../connectors/index.js';
import type { Warehouse } from '../../warehouse/index.js';
import { type App, action, type Ctx, connection, createClient, openWarehouse, stopSignal } from '../context.js';
import { ExitCode, errorMessage, UsageError } from '../errors.js';
import {
  addBudgetOptions,
  addSelectionOptions,
  type BudgetFlags,
  parseTimeZoneFlag,
  type SelectionFlags,
} from '../options.js';
import { formatNumber } from '../output/format.js';
import { statusLine, syncOptionsFrom } from './sync.js';

interface ScheduleFlags extends SelectionFlags, BudgetFlags {
  cron?: string;
  tz?: string;
  runNow?: boolean;
  deletes?: boolean;
}

/** Runs per hour of a cron expression, from its next firing times (exact for regular schedules). */
export function runsPerHour(nextTimes: readonly number[], nowMs: number): number {
  if (nextTimes.length === 0) return 0;
  const last = nextTimes[nextTimes.length - 1] ?? nowMs;
  const spanHours = Math.max((last - nowMs) / 3_600_000, 1 / 3600);
  return nextTimes.length / spanHours;
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

/** Events in scope from the warehouse (what the next run would poll), or null before the first sync. */
async function eventsInScope(ctx: Ctx, flags: SelectionFlags): Promise<number | null> {
  if (!existsSync(ctx.config.db)) return null;
  let w: Warehouse | null = null;
  try {
    w = await openWarehouse(ctx, { readOnly: true });
    const tables = await w.query(
      `SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'main' AND table_name = 'events'`,
    );
    if (Number(tables.rows[0]?.n ?? 0) === 0) return null;
    const r = await w.query(
      `SELECT id, status, CAST(start_date AS VARCHAR) AS start_date FROM events WHERE _deleted_at IS NULL`,
    );
    const ids = flags.events ? new Set(flags.events) : null;
    const statuses = flags.eventStatus ? new Set(flags.eventStatus) : null;
    return r.rows.filter((row) => {
      const start = row.start_date == null ? null : String(row.start_date).slice(0, 10);
      if (ids && !ids.has(Number(row.id))) return false;
      if (statuses && !statuses.has(String(row.status))) return false;
      if (flags.eventsFrom && (start === null || start < flags.eventsFrom)) return false;
      if (flags.eventsTo && (start === null || start > flags.eventsTo)) return false;
      return true;
    }).length;
  } finally {
    await w?.close();
  }
}

async function schedule(ctx: Ctx, flags: ScheduleFlags): Promise<number> {
  const cronTime = flags.cron ?? ctx.config.values.schedule?.cron;
  if (!cronTime) {
    throw new UsageError('no schedule: pass --cron "*/15 * * * *" or set schedule.cron in evsync.config.json');
  }
  const timeZone = flags.tz ?? ctx.config.values.schedule?.tz;
  const { CronJob, validateCronExpression } = await import('cron');
  const valid = validateCronExpression(cronTime);
  if (!valid.valid) {
    throw new UsageError(`--cron "${cronTime}" is not a valid cron expression (${valid.error?.message ?? 'invalid'})`);
  }
  const conn = connection(ctx);
  const options = syncOptionsFrom(ctx, flags, 'incremental');
  const log = ctx.log;

  let running: Promise<void> | null = null;
  let runs = 0;
  let skipped = 0;
  let skipTimer: NodeJS.Timeout | null = null;
  const stop = stopSignal(ctx, (why) =>
    log.warn(`${why}: stopping${running ? ' after the page in flight (state is saved)' : ''}…`),
  );

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

  const runOnce = async (): Promise<void> => {
    if (stop.signal.aborted) return;
    runs += 1;
    const n = runs;
    log.info(`run #${n} started at ${new Date().toISOString()}`);
    const client = await createClient(ctx, conn, flags);
    let warehouse: Warehouse | null = null;
    try {
      warehouse = await openWarehouse(ctx);
      const { runSync } = await import('../../sync/index.js');
      const result = await runSync(client, warehouse, {
        ...options,
        signal: stop.signal,
        onProgress: (e) => {
          if (e.type === 'item-failed') log.warn(e.error);
        },
      });
      const line = `run #${n}: ${statusLine(result)}`;
      if (result.status === 'failed') log.error(`${line}; ${result.errors.join('; ')}`);
      else if (result.status === 'partial') log.warn(`${line}; ${result.reason ?? ''} (the next run resumes)`);
      else log.ok(line);
    } catch (err) {
      // One failed run must not end the daemon: the next tick tries again.
      log.error(`run #${n} failed: ${errorMessage(err)}`);
    } finally {
      await warehouse?.close().catch(() => undefined);
      await client.close();
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
      watchSkips(job.nextDate().toMillis());
      try {
        await p;
      } finally {
        running = null;
        if (skipTimer) clearTimeout(skipTimer);
      }
    },
    errorHandler: (err) => log.error(`scheduled run failed: ${errorMessage(err)}`),
  });

  const now = Date.now();
  const perHour = runsPerHour(
    job.nextDates(200).map((d) => d.toMillis()),
    now,
  );
  const streams = selectStreams(options.streams ?? 'core');
  const eventStreams = streams.filter((s) => s.scope === 'event').length;
  const events = await eventsInScope(ctx, flags);
  const rate = ctx.config.values.rateLimit ?? { credits: 2000, windowSeconds: 600 };
  log.info(
    `schedule "${cronTime}"${timeZone ? ` (${timeZone})` : ''}: about ${formatNumber(Math.round(perHour * 10) / 10)} runs/hour, next at ${job.nextDate().toISO()}; Ctrl-C to stop`,
  );
  if (events === null) {
    log.info('events in scope unknown until the first sync: the budget check runs on the next start');
  } else {
    const fit = budgetFit({
      events,
      eventStreams,
      otherStreams: streams.length - eventStreams,
      runsPerHour: perHour,
      limit: rate.credits,
      windowSeconds: rate.windowSeconds,
    });
    const formula = `${events} events x ${eventStreams} event streams (+${streams.length - eventStreams} others) x 10 credits x ${formatNumber(Math.round(perHour * 10) / 10)} runs/hour`;
    if (!fit.fits) {
      log.warn(
        `this schedule may need up to ${formatNumber(Math.round(fit.perHour))} credits/hour (${formula}) but the budget is ${formatNumber(fit.capacityPerHour)}/hour: runs will fall behind. Schedule less often, or narrow --streams / --event-status`,
      );
    } else
      log.debug(
        `budget: up to ${formatNumber(Math.round(fit.perHour))} of ${formatNumber(fit.capacityPerHour)} credits/hour (${formula})`,
      );
  }

  job.start();
  if (flags.runNow) void job.fireOnTick();
  await new Promise<void>((resolve) => {
    if (stop.signal.aborted) resolve();
    else stop.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  // stop() resolves once the running callback (if any) has returned: the engine saw the signal and saved state.
  await job.stop();
  if (running) await running;
  if (skipTimer) clearTimeout(skipTimer);
  stop.dispose();
  log.info(`schedule stopped after ${runs} run(s), ${skipped} tick(s) skipped`);
  return ExitCode.Done;
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
  cmd
    .option('--deletes', 'run delete sweeps every run (default: when due, with spare credits)')
    .addHelpText(
      'after',
      `
Never runs two syncs at once: a tick that falls while a sync is running is skipped and logged.
SIGINT/SIGTERM stop it cleanly: the running sync finishes the page in flight and saves state; exit 0.

Examples:
  $ evsync schedule --cron "*/15 * * * *"
  $ evsync schedule --cron "0 * * * *" --tz Europe/Paris --event-status live --budget 1500`,
    )
    .action(action<ScheduleFlags>(app, schedule));
}
