/**
 * `evsync plan`: what a sync or backfill would do and cost before doing it. Without --count or --estimate it spends
 * nothing (priced from the last runs' page counts); with --count it reads page 1 of every item (the call the sync
 * would make first anyway: its rows are kept) and says how many credits that took; with --estimate it does the same
 * on a sample of the events and extrapolates the others, saying how and how sure it is.
 */
import { existsSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { LIST_CALL_CREDITS } from '../../../connectors/service.js';
import type { Warehouse } from '../../warehouse/index.js';
import { type App, action, type Ctx, connection, createClient, openWarehouse } from '../context.js';
import { ExitCode } from '../errors.js';
import {
  addBudgetOptions,
  addSelectionOptions,
  type BudgetFlags,
  positiveInt,
  type SelectionFlags,
} from '../options.js';
import { toJson } from '../output/format.js';
import { renderPlan } from '../output/plan-text.js';
import { syncOptionsFrom } from '../sync-options.js';

interface PlanFlags extends SelectionFlags, BudgetFlags {
  backfill?: boolean;
  count?: boolean;
  estimate?: boolean;
  sample?: number;
  deletes?: boolean;
}

async function plan(ctx: Ctx, flags: PlanFlags): Promise<number> {
  const conn = connection(ctx);
  const options = syncOptionsFrom(ctx, flags, flags.backfill ? 'backfill' : 'incremental');
  const client = await createClient(ctx, conn, flags);
  let warehouse: Warehouse | null = null;
  try {
    // Pricing without counting writes nothing: the warehouse is opened read-only (an empty in-memory one when the
    // file does not exist yet), so plan works on a read-only filesystem and never creates a file.
    const counting = flags.count === true || flags.estimate === true;
    warehouse = counting
      ? await openWarehouse(ctx)
      : existsSync(ctx.config.db)
        ? await openWarehouse(ctx, { readOnly: true })
        : await (await import('../../warehouse/index.js')).Warehouse.open(':memory:');
    const { planSync, LOWER_BOUND_WARNING } = await import('../../sync/index.js');
    if (flags.count) ctx.log.info(`counting: one page-1 call (${LIST_CALL_CREDITS} credits) per item…`);
    if (flags.estimate) ctx.log.info('estimating: the events list, then page 1 of each stream on a few events…');
    const report = await planSync(client, warehouse, {
      ...options,
      count: flags.count === true,
      ...(flags.estimate ? { estimate: { sampleEvents: flags.sample } } : {}),
    });
    if (ctx.json) ctx.out.write(`${toJson(report, 2)}\n`);
    else ctx.out.write(renderPlan(report));
    // The lower bound is said in the main output (renderPlan), not again as a warning.
    for (const warning of report.warnings) if (ctx.json || warning !== LOWER_BOUND_WARNING) ctx.log.warn(warning);
    return ExitCode.Done;
  } finally {
    await warehouse?.close();
    await client.close();
  }
}

export function registerPlanCommand(program: Command, app: App): void {
  const cmd = program
    .command('plan')
    .description('price a sync or backfill in calls, credits, windows and time before running it');
  addSelectionOptions(cmd);
  addBudgetOptions(cmd);
  cmd
    .option('--backfill', 'price a full backfill instead of an incremental sync')
    .option(
      '--count',
      `read page 1 of every item to count rows exactly (spends ${LIST_CALL_CREDITS} credits per item; rows are kept)`,
    )
    .addOption(
      new Option(
        '--estimate',
        'estimate from a sample: the events list, page 1 of each account stream and of each per-event stream on a few events (rows kept), the other events extrapolated',
      ).conflicts('count'),
    )
    .addOption(
      new Option('--sample <events>', 'events --estimate counts (default 3; implies --estimate)')
        .argParser(positiveInt('a number of events >= 1'))
        .implies({ estimate: true })
        .conflicts('count'),
    )
    .option('--deletes', 'include delete sweeps for every cursor stream')
    .addHelpText(
      'after',
      `
Without --count or --estimate, plan makes no call and writes nothing: it prices from the page counts of earlier runs,
and on a warehouse that never synced its figure is a lower bound. --estimate and --count spend list calls (${LIST_CALL_CREDITS} credits
each) and keep the pages they read: the sync or backfill they price resumes from them and never buys them again.
--estimate reads the events list, page 1 of each account stream and page 1 of each per-event stream on the sampled
events (core on 3 events: 38 calls, ${38 * LIST_CALL_CREDITS} credits), and says what it spent, how it sampled, what it extrapolated by
(the events' target_attendance or capacity when every event carries one, else their status), the range the sample
allows, and the time at the limit the service reports. A plan without a call says what --estimate would spend.

Examples:
  $ evsync plan                          # incremental sync, priced from earlier runs (no credits spent)
  $ evsync plan --backfill --estimate    # before a first backfill: a few credits, an estimate with its basis
  $ evsync plan --backfill --sample 6    # the same, counting 6 events (more credits, a narrower range)
  $ evsync plan --backfill --count       # exact: one page-1 call per item, rows kept for the sync
  $ evsync plan --streams all --json | jq .totalCredits`,
    )
    .action(action<PlanFlags>(app, plan));
}
