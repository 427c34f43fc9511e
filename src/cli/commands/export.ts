/**
 * `evsync export --out <dir>`: the warehouse tables as Parquet, Hive layout (`<out>/<table>/event_id=<id>/*.parquet`
 * for event-scoped tables), zstd. Reads the warehouse only.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { Warehouse } from '../../warehouse/index.js';
import { type App, action, type Ctx, openWarehouse } from '../context.js';
import { ExitCode, UsageError } from '../errors.js';
import { parseTableList } from '../options.js';
import { toJson } from '../output/format.js';

interface ExportFlags {
  out: string;
  tables?: string[];
  includeDeleted?: boolean;
}

async function exportCommand(ctx: Ctx, flags: ExportFlags): Promise<number> {
  const out = resolve(ctx.io.cwd, flags.out);
  let warehouse: Warehouse | null = null;
  try {
    warehouse = await openWarehouse(ctx, { readOnly: true, mustExist: true });
    if (flags.tables) {
      const known = await warehouse.listTables();
      const unknown = flags.tables.filter((t) => !known.includes(t));
      if (unknown.length > 0) {
        throw new UsageError(
          `--tables: no table ${unknown.join(', ')} in ${ctx.config.db} (tables: ${known.join(', ') || 'none yet'})`,
        );
      }
    }
    ctx.log.info(`exporting ${flags.tables ? flags.tables.join(', ') : 'every table'} to ${out}…`);
    const report = await warehouse.exportParquet({
      out,
      ...(flags.tables ? { tables: flags.tables } : {}),
      includeDeleted: flags.includeDeleted === true,
    });
    if (ctx.json) ctx.out.write(`${toJson({ out, ...report }, 2)}\n`);
    else {
      ctx.out.write(
        `exported ${report.tables.length} table(s) (${report.files} Parquet file(s)) to ${out}: ${report.tables.join(', ') || 'none'}\n`,
      );
    }
    return ExitCode.Done;
  } finally {
    await warehouse?.close();
  }
}

export function registerExportCommand(program: Command, app: App): void {
  program
    .command('export')
    .description('export the warehouse tables to Parquet (Hive layout, zstd)')
    .requiredOption('--out <dir>', 'output directory')
    .option('--tables <list>', 'only these tables (comma list; default every stream table)', parseTableList)
    .option('--include-deleted', 'also export rows whose _deleted_at is set (default: live rows only)')
    .addHelpText(
      'after',
      `
Layout: <out>/<table>/event_id=<id>/*.parquet for event-scoped tables, <out>/<table>/*.parquet otherwise.

Examples:
  $ evsync export --out ./parquet
  $ evsync export --out s3-staging/ --tables registrants,sessions --include-deleted
  $ duckdb -c "select count(*) from read_parquet('parquet/registrants/**/*.parquet', hive_partitioning = true)"`,
    )
    .action(action<ExportFlags>(app, exportCommand));
}
