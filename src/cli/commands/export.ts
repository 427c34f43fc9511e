/**
 * `evsync export --out <dir>`: the warehouse tables as Parquet, Hive layout (`<out>/<table>/event_id=<id>/*.parquet`
 * for event-scoped tables), zstd. Reads the warehouse only, and writes only into table folders it created (marked
 * by `_evsync/manifest.json`): a folder or file it did not write is refused (exit 2) unless --force, and even then
 * never removed. See warehouse/copies/export.ts.
 */
import type { Command } from 'commander';
import { lakeSummary } from '../../outputs/lake-output.js';
import type { Warehouse } from '../../warehouse/index.js';
import { type App, action, type Ctx, withWarehouse } from '../context.js';
import { ExitCode, errorMessage, UsageError } from '../errors.js';
import { parseTableList } from '../options.js';
import { toJson } from '../output/format.js';
import { readOutputFlags } from '../output-paths.js';

interface ExportFlags {
  out: string;
  tables?: string[];
  includeDeleted?: boolean;
  force?: boolean;
}

/** `--tables` naming a table the warehouse does not have: the user's to fix, before anything is written. */
async function refuseUnknownTables(ctx: Ctx, warehouse: Warehouse, tables: string[]): Promise<void> {
  const known = await warehouse.listTables();
  const unknown = tables.filter((t) => !known.includes(t));
  if (unknown.length > 0) {
    throw new UsageError(
      `--tables: no table ${unknown.join(', ')} in ${ctx.config.db} (tables: ${known.join(', ') || 'none yet'})`,
    );
  }
}

async function exportCommand(ctx: Ctx, flags: ExportFlags): Promise<number> {
  // resolve(cwd, '') is the current folder: an empty --out must not mean "write here".
  if (flags.out.trim() === '') throw new UsageError('--out: expected a folder, got an empty string');
  // `s3://...` goes to the lake; any other URL is refused, never written as a local folder named `s3:`.
  const { output } = readOutputFlags(ctx, { flag: '--out', target: flags.out });
  const folder = output.kind === 'folder';
  const written = await withWarehouse(ctx, { readOnly: true, mustExist: true }, async (warehouse) => {
    if (folder && flags.tables) await refuseUnknownTables(ctx, warehouse, flags.tables);
    ctx.log.info(`exporting ${flags.tables ? flags.tables.join(', ') : 'every table'} to ${output.where}…`);
    // A folder is this warehouse's (its owner record), and no other writer's while this export writes (its lease);
    // the lake's account is this export's under its lease.
    try {
      return await output.write(
        warehouse,
        { command: 'evsync export', client: null },
        {
          ...(flags.tables ? { tables: flags.tables } : {}),
          includeDeleted: flags.includeDeleted === true,
          force: flags.force === true,
        },
      );
    } catch (err) {
      // A folder evsync does not own, or an --out where no folder can be: the user's to fix.
      if (folder && err instanceof Error && err.name === 'ExportRefusedError') throw new UsageError(errorMessage(err));
      throw err;
    }
  });
  const report = written.report;
  for (const warning of report.warnings) ctx.log.warn(warning);
  if (ctx.json) ctx.out.write(`${toJson({ out: output.where, ...report }, 2)}\n`);
  else if (written.kind === 'lake') ctx.out.write(lakeSummary(output.where, written.report));
  else {
    ctx.out.write(
      `exported ${report.tables.length} table(s) (${written.report.files} Parquet file(s)) to ${output.where}: ${report.tables.join(', ') || 'none'}\n`,
    );
  }
  return ExitCode.Done;
}

export function registerExportCommand(program: Command, app: App): void {
  program
    .command('export')
    .description('export the warehouse tables to Parquet (Hive layout, zstd)')
    .requiredOption(
      '--out <dir|s3://bucket/prefix>',
      'output folder (created if missing), or the lake on S3-compatible storage',
    )
    .option('--tables <list>', 'only these tables (comma list; default every stream table)', parseTableList)
    .option('--include-deleted', 'also export rows whose _deleted_at is set (default: live rows only)')
    .option('--force', 'write into a table folder evsync did not create, beside files it did not write (never removed)')
    .addHelpText(
      'after',
      `
Layout: <out>/<table>/event_id=<id>/*.parquet for event-scoped tables, <out>/<table>/*.parquet otherwise.

evsync writes only what it owns. Each <out>/<table> folder is created by evsync and marked with
<out>/<table>/_evsync/manifest.json, which lists every file it wrote (rows, bytes, sha256). A later export writes
new files under new names, then removes the files they replace (only those the manifest lists); it never removes
a folder with its contents. A partition whose rows did not change since evsync wrote it (the manifest records what
each file was written from) is left as it is: an export with nothing changed writes nothing. A table folder evsync
did not create, or one holding a file it did not write, is refused (exit 2, naming the folder and the file) unless
--force. Files are 0600, folders 0700.

A folder belongs to one warehouse and one account: the first export records them in <out>/_evsync/owner.json
(warehouse path, base URL, client id), and another warehouse or account is refused before anything is written
(exit 2; to hand the folder over, remove that file: the next export adopts the folder only if its files are that
warehouse's). A folder from an earlier evsync (manifests, no owner record) is adopted the same way. While an export
writes it holds <out>/_evsync/lease.json (another writer meanwhile: exit 1). A folder holding the warehouse is
refused.

s3://bucket/prefix writes the lake: <prefix>/<table>/account=<id>/event_id=<n>/*.parquet, one manifest per
table and account, under the account's lease (held by another writer: exit 1). Endpoint, region and path-style
addressing come from "lake" in the config; credentials from the AWS chain (environment, profile, instance role).

Examples:
  $ evsync export --out ./parquet
  $ evsync export --out s3-staging/ --tables registrants,sessions --include-deleted
  $ evsync export --out s3://lake/evsync --account northwind
  $ duckdb -c "select count(*) from read_parquet('parquet/registrants/**/*.parquet', hive_partitioning = true)"`,
    )
    .action(action<ExportFlags>(app, exportCommand));
}
