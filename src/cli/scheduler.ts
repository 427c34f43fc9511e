/**
 * The daemon's scheduler (src/daemon/scheduler.ts) as a command sets it up: the cron expression from --cron, the
 * config file or the daemon's default (a usage error when none is valid), the engine's options from the flags, what
 * the warehouse knows for the budget check, and the runs said as `sync` says them (one JSON line each with --json).
 */
import { existsSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';
import type { CronSchedule } from '../daemon/cron-job.js';
import { rateLimitFor } from '../daemon/schedule-budget.js';
import {
  factsFrom,
  type Scheduler,
  type SchedulerHooks,
  type SchedulerHost,
  startScheduler,
  type WarehouseFacts,
} from '../daemon/scheduler.js';
import type { SyncResult } from '../sync/index.js';
import type { Warehouse } from '../warehouse/index.js';
import { type Ctx, checkWarehousePath, connection, createClient, openWarehouse } from './context.js';
import { errorMessage, UsageError } from './errors.js';
import type { BudgetFlags, SelectionFlags } from './options.js';
import { toJson } from './output/format.js';
import { statusLine } from './run-report.js';
import { syncOptionsFrom } from './sync-options.js';

export interface ScheduleFlags extends SelectionFlags, BudgetFlags {
  cron?: string;
  tz?: string;
  runNow?: boolean;
  deletes?: boolean;
}

interface CommandSchedulerHooks extends SchedulerHooks {
  /** Cron expression when neither --cron nor schedule.cron is given (default: none, a usage error). */
  defaultCron?: string;
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

/** The scheduler's view of the command: its log, clock, client, warehouse and way of saying runs. */
function hostOf(ctx: Ctx, flags: ScheduleFlags): SchedulerHost {
  const conn = connection(ctx);
  return {
    log: ctx.log,
    now: ctx.now,
    newClient: () => createClient(ctx, conn, flags),
    openWarehouse: () => openWarehouse(ctx),
    reportRun: (label, runNumber, result, yielded) => reportRun(ctx, label, runNumber, result, yielded),
    reportFailure: (label, runNumber, err) => {
      if (ctx.json) ctx.out.write(`${toJson({ run: runNumber, status: 'failed', error: errorMessage(err) })}\n`);
      ctx.log.error(`${label} #${runNumber} failed: ${errorMessage(err)}`);
    },
  };
}

/**
 * Runs the incremental sync on the cron schedule of `flags` (or the config file) until `signal` aborts (see
 * src/daemon/scheduler.ts).
 */
export async function scheduleRuns(
  ctx: Ctx,
  flags: ScheduleFlags,
  signal: AbortSignal,
  hooks: CommandSchedulerHooks = {},
  onBusy?: (running: boolean) => void,
): Promise<Scheduler> {
  const schedule = await resolveSchedule(ctx, flags, hooks.defaultCron);
  const options = syncOptionsFrom(ctx, flags, 'incremental');
  const facts = await warehouseFacts(ctx, flags, hooks.warehouse);
  const rate = rateLimitFor(facts.learnedLimit, ctx.config.values.rateLimit);
  const plan = { schedule, options, filters: flags, facts, rate, runNow: flags.runNow === true };
  return startScheduler(hostOf(ctx, flags), plan, signal, hooks, onBusy);
}
