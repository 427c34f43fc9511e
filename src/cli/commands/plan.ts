/**
 * `evsync plan`: what a sync or backfill would do and cost before doing it. Without --count it spends nothing
 * (priced from the last runs' page counts); with --count it reads page 1 of every item (the call the sync would
 * make first anyway: its rows are kept) and says how many credits that took.
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import type { PlanReport } from '../../sync/index.js';
import type { Warehouse } from '../../warehouse/index.js';
import { type App, action, type Ctx, connection, createClient, openWarehouse } from '../context.js';
import { ExitCode } from '../errors.js';
import { addBudgetOptions, addSelectionOptions, type BudgetFlags, type SelectionFlags } from '../options.js';
import { formatDuration, formatNumber, formatTable, toJson } from '../output/format.js';
import { syncOptionsFrom } from './sync.js';

interface PlanFlags extends SelectionFlags, BudgetFlags {
  backfill?: boolean;
  count?: boolean;
  deletes?: boolean;
}

export function renderPlan(report: PlanReport): string {
  const rows = Object.entries(report.streams).map(([stream, s]) => ({
    stream,
    items: s.items,
    calls: s.calls,
    credits: s.credits,
  }));
  const table = rows.length > 0 ? formatTable(['stream', 'items', 'calls', 'credits'], rows) : '(nothing to do)\n';
  const atLeast = report.complete ? '' : 'at least ';
  const lines = [
    `${report.mode}: ${atLeast}${formatNumber(report.totalCalls)} list calls, ${atLeast}${formatNumber(report.totalCredits)} credits, ${report.complete ? report.events : 'unknown'} events in scope`,
    `needs ${report.windows} rate-limit window(s); estimated ${formatDuration(report.estimatedSeconds * 1000)} at the configured budget`,
    report.counted
      ? `counting spent ${formatNumber(report.spentCredits)} credits (page 1 of each item): those pages are kept, and the next \`evsync ${report.mode === 'backfill' ? 'backfill' : 'sync'}\` resumes from them and spends the figure above`
      : `spent nothing (priced from earlier runs; --count reads page 1 of each item for exact counts)`,
  ];
  const u = report.unpriced;
  if (u) {
    const command = `evsync plan${report.mode === 'backfill' ? ' --backfill' : ''} --count`;
    lines.push(
      `lower bound only: no events are known yet, so the ${u.perEventStreams} streams listed per event are not priced (at least ${formatNumber(u.countCreditsPerEvent)} credits per event, more for long lists; a real account's backfill can cost many times the figure above)`,
      `\`${command}\` prices everything exactly: it spends ${formatNumber(u.countCreditsNow)} credits now plus ${formatNumber(u.countCreditsPerEvent)} per event (page 1 of every item), and the pages it reads are kept: the ${report.mode === 'backfill' ? 'backfill' : 'sync'} resumes from them and does not buy them again`,
    );
  }
  for (const u of report.unavailable) {
    lines.push(`${u.stream} is unavailable (${u.detail ?? u.status}): not priced; ${u.hint ?? ''}`.trimEnd());
  }
  return `${table}${lines.join('\n')}\n`;
}

async function plan(ctx: Ctx, flags: PlanFlags): Promise<number> {
  const conn = connection(ctx);
  const options = syncOptionsFrom(ctx, flags, flags.backfill ? 'backfill' : 'incremental');
  const client = await createClient(ctx, conn, flags);
  let warehouse: Warehouse | null = null;
  try {
    // Pricing without --count writes nothing: the warehouse is opened read-only (an empty in-memory one when the
    // file does not exist yet), so plan works on a read-only filesystem and never creates a file.
    warehouse = flags.count
      ? await openWarehouse(ctx)
      : existsSync(ctx.config.db)
        ? await openWarehouse(ctx, { readOnly: true })
        : await (await import('../../warehouse/index.js')).Warehouse.open(':memory:');
    const { planSync, LOWER_BOUND_WARNING } = await import('../../sync/index.js');
    if (flags.count) ctx.log.info('counting: one page-1 call (10 credits) per item…');
    const report = await planSync(client, warehouse, { ...options, count: flags.count === true });
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
    .option('--count', 'read page 1 of every item to count rows exactly (spends 10 credits per item; rows are kept)')
    .option('--deletes', 'include delete sweeps for every cursor stream')
    .addHelpText(
      'after',
      `
Examples:
  $ evsync plan                          # incremental sync, priced from earlier runs (no credits spent)
  $ evsync plan --backfill --count       # exact: one page-1 call per item, rows kept for the sync
  $ evsync plan --streams all --json | jq .totalCredits`,
    )
    .action(action<PlanFlags>(app, plan));
}
