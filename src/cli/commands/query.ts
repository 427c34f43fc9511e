/**
 * `evsync query "<sql>"`: SQL on the warehouse, read-only. Values come back JSON-safe from the warehouse (BIGINT,
 * DECIMAL and timestamps as exact strings), so table, CSV and JSON all print them digit for digit.
 */
import type { Command } from 'commander';
import type { Warehouse } from '../../warehouse/index.js';
import { type App, action, type Ctx, openWarehouse } from '../context.js';
import { CliError, ExitCode, errorMessage, UsageError } from '../errors.js';
import { parseFormat } from '../options.js';
import { formatRows, OUTPUT_FORMATS, type OutputFormat, type Row } from '../output/format.js';

interface QueryFlags {
  format?: OutputFormat;
}

/** Column names of a warehouse result, whether it reports them as names or as `{name, type}`. */
export function columnNames(columns: readonly (string | { name: string })[]): string[] {
  return columns.map((c) => (typeof c === 'string' ? c : c.name));
}

async function query(ctx: Ctx, flags: QueryFlags, args: string[]): Promise<number> {
  const sql = args[0]?.trim();
  if (!sql) throw new UsageError('no SQL given: evsync query "select count(*) from registrants"');
  const format: OutputFormat = flags.format ?? (ctx.json ? 'json' : 'table');
  let warehouse: Warehouse | null = null;
  try {
    warehouse = await openWarehouse(ctx, { readOnly: true, mustExist: true });
    let result: Awaited<ReturnType<Warehouse['query']>>;
    try {
      result = await warehouse.query(sql);
    } catch (err) {
      const message = errorMessage(err);
      const hint = /read-only|read only/i.test(message)
        ? ' (evsync query is read-only: it never changes the warehouse)'
        : '';
      throw new CliError(`${message}${hint}`);
    }
    const columns = columnNames(result.columns);
    const rows = result.rows as readonly Row[];
    ctx.out.write(formatRows(format, columns, rows));
    if (format === 'table') ctx.log.info(ctx.style.dim(`(${rows.length} row${rows.length === 1 ? '' : 's'})`));
    return ExitCode.Done;
  } finally {
    await warehouse?.close();
  }
}

export function registerQueryCommand(program: Command, app: App): void {
  program
    .command('query')
    .description('run SQL on the warehouse (read-only) and print the result')
    .argument('<sql>', 'the SQL statement (quote it)')
    .option(
      '--format <format>',
      `output format: ${OUTPUT_FORMATS.join(', ')} (default table; json with --json)`,
      parseFormat,
    )
    .addHelpText(
      'after',
      `
Tables are named as the streams (registrants, sessions, ...); views in schema analytics; bookkeeping in _evsync.

Examples:
  $ evsync query "select registration_status, count(*) from registrants group by 1 order by 2 desc"
  $ evsync query "select * from registrants where event_id = 101" --format csv > registrants.csv
  $ evsync query "select id, updated_at from events" --format json | jq '.[0]'`,
    )
    .action(action<QueryFlags>(app, query));
}
