/**
 * `evsync sync` (incremental) and `evsync backfill` (full, resumable): the engine under the credit budget.
 * Exit 0 done, 3 partial (state saved: the same command resumes), 1 failed.
 */
import type { Command } from 'commander';
import type { ApiClient } from '../../api/index.js';
import type { DaemonSocket } from '../../daemon/socket.js';
import { lakeSummary } from '../../outputs/lake-output.js';
import type { Output } from '../../outputs/output.js';
import { TouchedPartitions } from '../../outputs/partition.js';
import type { SyncMode } from '../../sync/index.js';
import type { Warehouse } from '../../warehouse/index.js';
import { type App, action, type Ctx, connection, createClient, openWarehouse, stopSignal } from '../context.js';
import { addBudgetOptions, addSelectionOptions, type BudgetFlags, type SelectionFlags } from '../options.js';
import { formatDuration, toJson } from '../output/format.js';
import type { Logger } from '../output/logger.js';
import { readOutputFlags } from '../output-paths.js';
import { attachProgress, exitCodeOf, explain, statusLine, summaryTable } from '../run-report.js';
import { startRunSocket } from '../run-socket.js';
import { addSnapshotGraceOption, graceMsOf, type SnapshotGraceFlags } from '../snapshot-grace.js';
import { syncOptionsFrom } from '../sync-options.js';

interface SyncFlags extends SelectionFlags, BudgetFlags, SnapshotGraceFlags {
  deletes?: boolean;
  parquetOut?: string;
  snapshot?: string;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The partitions the run wrote, to the folder or the lake `--parquet-out` named (`named`, as given). */
async function exportTouched(
  ctx: Ctx,
  warehouse: Warehouse,
  client: ApiClient,
  output: Output,
  named: string,
  touched: TouchedPartitions,
  runId: string,
): Promise<void> {
  const log = ctx.log;
  if (touched.size === 0) {
    log.info(`--parquet-out: the run wrote nothing, nothing exported`);
    return;
  }
  const who = { command: commandLine(ctx.app.argv), client };
  const written = await output.write(warehouse, who, { touched, runId });
  if (written.kind === 'lake') {
    for (const warning of written.report.warnings) log.warn(warning);
    log.info(`parquet: ${lakeSummary(output.where, written.report).trim()}`);
    return;
  }
  const bytes = written.report.bytesWritten;
  log.info(
    bytes === 0
      ? `parquet: ${named} left as it is: the rows of the ${touched.count()} partition(s) the run read did not change`
      : `parquet: exported ${touched.size} table(s) to ${named} (${(bytes / 1048576).toFixed(1)} MiB written; partitions whose rows did not change were left as they are)`,
  );
  log.debug(`export: ${toJson(written.report)}`);
}

/** Publishes the snapshot after a run and says where and how long it took. */
async function publishSnapshotAfter(
  warehouse: Warehouse,
  target: string,
  runId: string,
  log: Logger,
  graceMs: number | undefined,
) {
  const result = await warehouse.publishSnapshot(target, { runId, ...(graceMs === undefined ? {} : { graceMs }) });
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  if (result.unchanged) {
    log.info(`snapshot: ${target} left as it is: nothing it holds changed since it was published`);
    return result;
  }
  for (const warning of result.views.warnings) log.warn(`snapshot: ${warning}`);
  log.info(
    `snapshot: published ${target} in ${formatDuration(result.ms)} (${result.tables.length} tables, ${
      result.parts.written
    } of ${result.parts.written + result.parts.kept} parts written, ${mib(result.bytes)}; ${mib(
      result.size,
    )} with its parts in ${target}.parts); open it read-only with any DuckDB client while evsync runs`,
  );
  return result;
}

/** The command as the user typed it, to tell them what to run again. Quotes what a shell would need quoted. */
function commandLine(argv: readonly string[]): string {
  return ['evsync', ...argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`))].join(' ');
}

/** Scripts reading --json get a JSON answer however the command ends (the message also goes to stderr). */
async function runSyncCommand(ctx: Ctx, flags: SyncFlags, mode: SyncMode, name: string): Promise<number> {
  try {
    return await syncCommandBody(ctx, flags, mode, name);
  } catch (err) {
    if (ctx.json) ctx.out.write(`${toJson({ status: 'failed', error: errorText(err) }, 2)}\n`);
    throw err;
  }
}

async function syncCommandBody(ctx: Ctx, flags: SyncFlags, mode: SyncMode, name: string): Promise<number> {
  const { output, snapshot } = readOutputFlags(ctx, {
    flag: '--parquet-out',
    target: flags.parquetOut,
    snapshot: flags.snapshot,
  });
  const conn = connection(ctx);
  const options = syncOptionsFrom(ctx, flags, mode);
  const client = await createClient(ctx, conn, flags);
  let warehouse: Warehouse | null = null;
  let socket: DaemonSocket | null = null;
  const progress = attachProgress(ctx, client);
  const stop = stopSignal(ctx, (why) => progress.log.warn(`${why}: finishing the page in flight and saving state…`));
  try {
    warehouse = await openWarehouse(ctx);
    // While the run holds the file, `status` from another shell is answered by it, from its progress.
    const { RunProgressTracker } = await import('../../sync/index.js');
    const tracker = new RunProgressTracker(mode, client.ledger, ctx.now);
    socket = await startRunSocket(ctx, mode, client, tracker);
    // Another writer of this account's lake, a local folder of another warehouse or account, or one another writer
    // holds now: refused before any credit is spent (the lease is taken at export).
    if (output) await output.check(warehouse, { command: 'evsync', client });
    const { runSync } = await import('../../sync/index.js');
    const touched = new TouchedPartitions();
    progress.log.info(
      `${mode === 'backfill' ? 'backfill' : 'sync'} of ${options.streams ?? 'core'} into ${ctx.config.db} (${conn.who})`,
    );
    const result = await runSync(client, warehouse, {
      ...options,
      signal: stop.signal,
      onProgress: (e) => {
        tracker.onProgress(e);
        touched.onProgress(e);
        progress.onProgress(e);
      },
    });
    progress.dispose();
    if (output && flags.parquetOut && result.status !== 'failed')
      await exportTouched(ctx, warehouse, client, output, flags.parquetOut, touched, result.runId);
    // Partial runs too: what they loaded is committed, and readers of the snapshot should see it.
    if (snapshot && result.status !== 'failed')
      await publishSnapshotAfter(warehouse, snapshot, result.runId, ctx.log, graceMsOf(flags));
    if (ctx.json) ctx.out.write(`${toJson(result, 2)}\n`);
    else {
      ctx.out.write(summaryTable(result));
      ctx.out.write(`${statusLine(result)}\n`);
    }
    explain(ctx.log, result, name);
    return exitCodeOf(result);
  } finally {
    progress.dispose();
    stop.dispose();
    await warehouse?.close();
    // Closed last: until the process lets go of the file, `status` is answered rather than refused.
    await socket?.close();
    await client.close();
  }
}

function describe(cmd: Command, mode: SyncMode): Command {
  addSelectionOptions(cmd);
  addBudgetOptions(cmd);
  cmd
    .option('--deletes', 'run delete sweeps now for every cursor stream (default: when due, with spare credits)')
    .option(
      '--parquet-out <dir|s3://bucket/prefix>',
      'also export the partitions this run wrote to Parquet (Hive layout), locally or to the lake; a local folder is this warehouse’s alone (<dir>/_evsync/owner.json: another warehouse or account is refused)',
    )
    .option(
      '--snapshot <file>',
      'when the run ends (also a partial one), publish a read-only DuckDB catalogue of the warehouse (tables as views over Parquet parts in <file>.parts, analytics views) to <file>, replaced atomically, writing only the parts that changed (nothing when nothing changed): open that with the duckdb CLI, Python or a BI tool, never the warehouse itself (never inside --parquet-out, never a file of the warehouse)',
    );
  addSnapshotGraceOption(cmd);
  return cmd.addHelpText(
    'after',
    mode === 'incremental'
      ? `
Examples:
  $ evsync sync                                  # core streams, every event
  $ evsync sync --streams registrants,sessions --event-status live --budget 600
  $ evsync sync --json | jq .credits.total
  $ evsync sync --snapshot ./evsync-snapshot.duckdb   # then: duckdb -readonly ./evsync-snapshot.duckdb

Exit codes: 0 done, 3 partial (budget or max wait reached; run the same command again to resume), 1 failed, 2 usage.`
      : `
Examples:
  $ evsync backfill --streams all
  $ evsync backfill --events 101,102 --max-wait 0   # stop (exit 3) instead of waiting for a window
  $ evsync backfill --streams all --snapshot ./evsync-snapshot.duckdb

A backfill is resumable: when it stops early (exit 3), run the same command again; it continues from the saved
checkpoints and spends no credits twice.`,
  );
}

export function registerSyncCommands(program: Command, app: App): void {
  describe(
    program.command('sync').description('incremental sync: fetch what changed since the last run'),
    'incremental',
  ).action(action<SyncFlags>(app, (ctx, flags) => runSyncCommand(ctx, flags, 'incremental', commandLine(app.argv))));
  describe(
    program.command('backfill').description('full sync of the selected streams (resumable, within the budget)'),
    'backfill',
  ).action(action<SyncFlags>(app, (ctx, flags) => runSyncCommand(ctx, flags, 'backfill', commandLine(app.argv))));
}
