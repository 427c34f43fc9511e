/**
 * `evsync schedule --cron "<expr>"`: the daemon without the webhook receiver (src/cli/daemon-run.ts), its runs on a
 * cron schedule (src/cli/scheduler.ts). This file holds its flags and help.
 */
import type { Command } from 'commander';
import { type App, action } from '../context.js';
import { addPublishOptions } from '../daemon-publish.js';
import { addQueryBoundOptions, type DaemonFlags, runDaemon } from '../daemon-run.js';
import { addBudgetOptions, addSelectionOptions, parseTimeZoneFlag } from '../options.js';

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
A warehouse of another account, or a local --parquet-out of another warehouse, is refused at start (exit 2).
SIGINT/SIGTERM stop it cleanly: the running sync finishes the page in flight and saves state; exit 0, or 3 when a
run in flight was cut short (the next start resumes it).

Examples:
  $ evsync schedule --cron "*/15 * * * *"
  $ evsync schedule --cron "0 * * * *" --tz Europe/Paris --event-status live --budget 1500
  $ evsync schedule --cron "*/15 * * * *" --snapshot ./evsync-snapshot.duckdb --parquet-out s3://bucket/evsync`,
    )
    .action(action<DaemonFlags>(app, (ctx, flags) => runDaemon(ctx, flags, { name: 'schedule' })));
}
