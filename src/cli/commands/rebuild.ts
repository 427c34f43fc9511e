/**
 * `evsync rebuild [--streams ...] [--dry-run]`: stream tables made again from the archive, through the path a live
 * page takes, with today's settings, and no API call (src/sync/rebuild/). `evsync archive` says what the archive
 * holds; `evsync archive prune --before <date>` removes what is older.
 */
import type { Command } from 'commander';
import { selectStreams } from '../../../connectors/index.js';
import { MissingArchiveError, RebuildRefused, type ReplayProgress, rebuild } from '../../sync/index.js';
import type { TableChange } from '../../warehouse/index.js';
import { type App, action, type Ctx, withWarehouse } from '../context.js';
import { CliError, ExitCode, UsageError } from '../errors.js';
import { parseStreamsFlag } from '../options.js';
import { toJson } from '../output/format.js';

interface RebuildFlags {
  streams?: string;
  dryRun?: boolean;
}

/** One line per table: what the rebuild changed (or would change). */
function describe(c: TableChange): string {
  const h = c.history;
  const history =
    h && (h.added > 0 || h.removed > 0) ? `; history: ${h.added} version(s) added, ${h.removed} removed` : '';
  if (c.missing) return `${c.table}: the table is missing; ${c.added} row(s) would be put back${history}`;
  const parts = [`${c.added} added`, `${c.changed} changed`, `${c.removed} removed`];
  if (c.columnsAdded.length) parts.push(`columns added: ${c.columnsAdded.join(', ')}`);
  if (c.columnsRemoved.length) parts.push(`columns no longer made: ${c.columnsRemoved.join(', ')}`);
  if (c.columnsRetyped.length) parts.push(`columns retyped: ${c.columnsRetyped.join(', ')}`);
  return `${c.table}: ${parts.join(', ')}${history}`;
}

/** A progress line at most every few seconds of the command's clock (and none in --json). */
function progressReporter(ctx: Ctx): (p: ReplayProgress) => void {
  let lastAt = ctx.now();
  return (p) => {
    const now = ctx.now();
    if (now - lastAt < 2000 || ctx.json) return;
    lastAt = now;
    const share = p.last > 0 ? Math.round((p.seq / p.last) * 100) : 100;
    ctx.log.info(`rebuild: ${share}% of the op log (${p.pages} page(s), ${p.records} record(s) replayed)`);
  };
}

async function rebuildCommand(ctx: Ctx, flags: RebuildFlags): Promise<number> {
  const streams = flags.streams === undefined ? null : selectStreams(flags.streams).map((s) => s.name);
  const dryRun = flags.dryRun === true;
  const result = await withWarehouse(ctx, { mustExist: true }, async (live) => {
    try {
      return await rebuild({
        live,
        streams,
        dryRun,
        overrides: ctx.config.values.streams ?? {},
        onProgress: progressReporter(ctx),
      });
    } catch (err) {
      if (err instanceof RebuildRefused) throw new UsageError(err.message);
      if (err instanceof MissingArchiveError) throw new CliError(`${err.message}: the archive cannot rebuild it`);
      throw err;
    }
  });
  if (ctx.json) {
    ctx.out.write(`${toJson(result, 2)}\n`);
    return ExitCode.Done;
  }
  const { pages, records } = result.replayed;
  const head = dryRun
    ? `dry run: nothing was written. Rebuilding from the archive (${pages} page(s), ${records} record(s)) would change:`
    : `rebuilt ${result.changes.length} table(s) from the archive${result.resumed ? ' (resumed)' : ''}: ${pages} page(s), ${records} record(s) replayed, no API call. Changed:`;
  ctx.out.write(`${head}\n${result.changes.map((c) => `  ${describe(c)}`).join('\n')}\n`);
  return ExitCode.Done;
}

export function registerRebuildCommand(program: Command, app: App): void {
  program
    .command('rebuild')
    .description('rebuild stream tables from the archive, with the current settings and no API call')
    .option(
      '--streams <list>',
      'only these streams (a comma list, core or all; default every stream the archive has)',
      parseStreamsFlag,
    )
    .option(
      '--dry-run',
      'say per table what a rebuild would change (rows added, changed, removed; columns), write nothing',
    )
    .addHelpText(
      'after',
      `
Every page evsync loads and every webhook delivery it accepts is kept in the archive beside the warehouse
(<database>.archive/), and every write to a stream table is logged. A rebuild replays that log into a scratch
warehouse (<database>.rebuild/) through the same normalizer, quarantine and schema evolution as a live page, with
the settings of evsync.config.json now (a custom field's type, an expansion), then replaces the tables in one
transaction. Until then the tables, the snapshot and the Parquet outputs are as they were. With the settings
unchanged the tables come out equal, _synced_at, _run_id and _deleted_at included.

A rebuild stopped midway (Ctrl-C, a kill) keeps its scratch: run the same command again to resume it. Publish the
result for readers with the next sync's --snapshot/--parquet-out, or evsync export.

Tables that held rows before this warehouse kept an archive (written by an evsync before layout 3) are refused:
their early rows are in no archive. Run a backfill of those streams once.

Examples:
  $ evsync rebuild --dry-run
  $ evsync rebuild --streams registrants
  $ evsync rebuild --streams registrants,sessions --json`,
    )
    .action(action<RebuildFlags>(app, rebuildCommand));
}
