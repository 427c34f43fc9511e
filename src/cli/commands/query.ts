/**
 * `evsync query "<sql>"`: SQL on the warehouse, and nothing else. The warehouse opens sandboxed (read-only, no file
 * system access, configuration locked: see `Sandbox` in warehouse/db/connection.ts) and only reading statements run,
 * so no statement can change the warehouse, write a file, attach another database or load an extension.
 * `--allow-read <dir>` lets queries read the user's own Parquet/CSV files in chosen folders.
 */
import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { DAEMON_DEFAULTS } from '../../../schemas/daemon-settings.js';
import { askDaemon } from '../../daemon/socket.js';
import type { Warehouse } from '../../warehouse/index.js';
import { type App, action, type Ctx, withWarehouse } from '../context.js';
import { CliError, ExitCode, errorMessage, UsageError } from '../errors.js';
import { parseFormat, positiveInt } from '../options.js';
import { columnNames, formatRows, OUTPUT_FORMATS, type OutputFormat, type Row } from '../output/format.js';

const QUERY_DEFAULTS = DAEMON_DEFAULTS.queries;

interface QueryFlags {
  format?: OutputFormat;
  allowRead?: string[];
  maxRows?: number;
  timeout?: number;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/**
 * The folders queries may read, absolute. DuckDB compares paths as text, so a folder reached through a symlink is
 * allowed under both its given and its real path.
 */
function allowedFolders(cwd: string, dirs: readonly string[]): string[] {
  const out = new Set<string>();
  for (const dir of dirs) {
    if (dir.trim() === '') throw new UsageError('--allow-read: expected a folder, got an empty string');
    const full = resolve(cwd, dir);
    let isDir = false;
    try {
      isDir = statSync(full).isDirectory();
    } catch (err) {
      throw new UsageError(`--allow-read ${dir}: ${errorMessage(err)}`);
    }
    if (!isDir) throw new UsageError(`--allow-read ${dir}: not a folder (name the folder that holds the files)`);
    out.add(full);
    out.add(realpathSync(full));
  }
  return [...out];
}

/** evsync's own refusal of a statement (statement-check.ts): it already says why. */
const OWN_REFUSAL = / is refused(?: \(statement \d+ of \d+\))?: queries are read-only \(/;

/** DuckDB's refusals, said in terms of what evsync query allows. */
function explain(message: string, allowed: readonly string[]): string {
  if (OWN_REFUSAL.test(message)) return message;
  if (/file system operations are disabled|Cannot access (file|directory)/i.test(message)) {
    const where = allowed.length ? `the warehouse and files under ${allowed.join(', ')}` : 'the warehouse';
    return `${message}\nevsync query is read-only: it never writes a file, and reads ${where} only (to read your own Parquet or CSV files, name their folder with --allow-read <dir>)`;
  }
  if (/configuration has been locked|Cannot (change|enable)/i.test(message)) {
    return `${message}\nevsync query is read-only: it cannot change DuckDB settings (SET, RESET, PRAGMA), which could lift its sandbox`;
  }
  if (/extensions is disabled/i.test(message)) {
    return `${message}\nevsync query is read-only: it cannot install or load extensions`;
  }
  if (/read-only|read only/i.test(message)) {
    return `${message} (evsync query is read-only: it never changes the warehouse)`;
  }
  return message;
}

async function query(ctx: Ctx, flags: QueryFlags, args: string[]): Promise<number> {
  const sql = args[0]?.trim();
  if (!sql) throw new UsageError('no SQL given: evsync query "select count(*) from registrants"');
  const format: OutputFormat = flags.format ?? (ctx.json ? 'json' : 'table');
  const allowRead = allowedFolders(ctx.io.cwd, flags.allowRead ?? []);
  // While `evsync serve` holds the database, it runs the query, under the same sandbox (see src/daemon/socket.ts).
  const served = await askDaemon(ctx.config.db, {
    op: 'query',
    sql,
    form: format === 'json' ? 'json' : 'text',
    allowRead,
    ...(flags.maxRows ? { maxRows: flags.maxRows } : {}),
    ...(flags.timeout ? { timeoutMs: flags.timeout * 1000 } : {}),
  });
  if (served) {
    if (!served.ok) throw new CliError(explain(served.error, allowRead));
    return printResult(ctx, format, served.result as QueryResult);
  }
  const result = await withWarehouse(ctx, { sandbox: { allowRead }, mustExist: true }, async (warehouse) => {
    try {
      const timeout = flags.timeout ? AbortSignal.timeout(flags.timeout * 1000) : undefined;
      return await warehouse.readQuery(sql, format === 'json' ? 'json' : 'text', {
        ...(flags.maxRows ? { maxRows: flags.maxRows } : {}),
        ...(timeout ? { signal: timeout } : {}),
      });
    } catch (err) {
      throw new CliError(explain(errorMessage(err), allowRead));
    }
  });
  return printResult(ctx, format, result);
}

type QueryResult = Awaited<ReturnType<Warehouse['readQuery']>>;

/** Prints a result the same way whether this process ran the query or the running `serve` did. */
function printResult(ctx: Ctx, format: OutputFormat, result: QueryResult): number {
  const rows = result.rows as readonly Row[];
  ctx.out.write(formatRows(format, columnNames(result.columns), rows));
  if (format === 'table') ctx.log.info(ctx.style.dim(`(${rows.length} row${rows.length === 1 ? '' : 's'})`));
  return ExitCode.Done;
}

export function registerQueryCommand(program: Command, app: App): void {
  program
    .command('query')
    .description('run SQL on the warehouse (read-only, sandboxed) and print the result')
    .argument('<sql>', 'the SQL statement (quote it)')
    .option(
      '--format <format>',
      `output format: ${OUTPUT_FORMATS.join(', ')} (default table; json with --json)`,
      parseFormat,
    )
    .option('--allow-read <dir>', 'also let queries read files under this folder (repeatable)', collect)
    .option(
      '--max-rows <n>',
      'refuse a result of more rows (through a running daemon its own bound applies too)',
      positiveInt('a whole number > 0'),
    )
    .option(
      '--timeout <seconds>',
      'cancel the query after this long (through a running daemon its own limit applies too)',
      positiveInt('a whole number > 0'),
    )
    .addHelpText(
      'after',
      `
Tables are named as the streams (registrants, sessions, ...); views in schema analytics; bookkeeping in _evsync.

Read-only: only reading statements run: SELECT, WITH, FROM, VALUES, TABLE, DESCRIBE, SHOW, SUMMARIZE, PIVOT,
UNPIVOT, and EXPLAIN of one of those (only without --allow-read). evsync reads every statement's first keyword
itself and refuses anything else before DuckDB sees the text (exit 1), naming it: "COPY is refused (statement 2
of 2): queries are read-only (...) and never write a file or change a database". So COPY, EXPORT, IMPORT,
ATTACH/DETACH, INSTALL/LOAD, SET/RESET/USE, PRAGMA, CALL, CREATE/INSERT/UPDATE/DELETE (after WITH too) and
EXPLAIN of any of them never run. The warehouse is opened with file system access disabled, so no query writes a
file or changes a database. Files are readable only under --allow-read folders (DuckDB matches the folder as a
path prefix). Large queries do not spill to disk.

A result of more than --max-rows rows is refused: "add a LIMIT or an aggregate, raise --max-rows, or write it
with \`evsync export\` (Parquet) instead".

While \`evsync serve\` or \`evsync schedule\` holds the warehouse, the query is answered by it, on a copy made
for queries (current as of the query): it may run --query-timeout seconds (default ${QUERY_DEFAULTS.timeoutMs / 1000}) and return --query-max-rows
rows (default ${QUERY_DEFAULTS.maxRows.toLocaleString('en-US')}) and ${QUERY_DEFAULTS.maxResultChars / 1048576} MB at most; a larger result is refused with the same remedies, naming the
daemon's bound when that is the one reached (a smaller --max-rows of yours binds first).
Interrupting \`evsync query\` (Ctrl-C) cancels the query in the daemon too.

JSON values: integers within +/-(2^53-1) and DECIMALs of at most 15 significant digits are JSON numbers; larger
ones stay strings so that no digit is lost (check with typeof). Lists, structs and JSON columns are real JSON.
Table and CSV print numbers exactly as DuckDB does (12.50).

Examples:
  $ evsync query "select registration_status, count(*) from registrants group by 1 order by 2 desc"
  $ evsync query "select * from registrants where event_id = 101" --format csv > registrants.csv
  $ evsync query "select id, updated_at from events" --format json | jq '.[0]'
  $ evsync query "select * from registrants" --max-rows 50000 --timeout 60
  $ evsync query --allow-read ./parquet "select count(*) from read_parquet('parquet/registrants/**/*.parquet')"`,
    )
    .action(action<QueryFlags>(app, query));
}
