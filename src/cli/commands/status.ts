/**
 * `evsync status`: what the warehouse knows, without a single API call: the last runs, every cursor with its age,
 * rejected records, and the credit ledger as the last run left it.
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import type { Warehouse } from '../../warehouse/index.js';
import { type App, action, type Ctx, openWarehouse } from '../context.js';
import { ExitCode } from '../errors.js';
import { positiveInt } from '../options.js';
import { formatAge, formatTable, type Row, toJson } from '../output/format.js';
import { columnNames } from './query.js';

interface StatusFlags {
  runs?: number;
}

export interface StatusReport {
  db: string;
  exists: boolean;
  runs: Row[];
  cursors: Row[];
  rejected: number;
  ledger: Row | null;
  tables: Record<string, number>;
}

/** Text timestamps from the warehouse (`YYYY-MM-DD HH:MM:SS[.ffffff]`, UTC) as epoch ms. */
function epochOf(value: unknown): number | null {
  if (typeof value !== 'string' || value === '') return null;
  const ms = Date.parse(`${value.slice(0, 23).replace(' ', 'T')}Z`);
  return Number.isNaN(ms) ? null : ms;
}

async function rowsOf(w: Warehouse, sql: string): Promise<Row[]> {
  const r = await w.query(sql);
  const cols = columnNames(r.columns);
  return (r.rows as Row[]).map((row) => Object.fromEntries(cols.map((c) => [c, row[c] ?? null])));
}

async function collect(w: Warehouse, ctx: Ctx, limit: number): Promise<StatusReport> {
  const runs = await rowsOf(
    w,
    `SELECT * EXCLUDE (args) FROM _evsync.runs ORDER BY started_at DESC LIMIT ${Math.floor(limit)}`,
  );
  const cursors = (await w.listCursors()).map((c) => ({ ...c }) as Row);
  const rejected = Number((await rowsOf(w, 'SELECT count(*) AS n FROM _evsync.rejected'))[0]?.n ?? 0);
  const ledgerRows = await rowsOf(w, 'SELECT * FROM _evsync.credits ORDER BY recorded_at DESC LIMIT 1');
  const tables = await w.tableCounts();
  return { db: ctx.config.db, exists: true, runs, cursors, rejected, ledger: ledgerRows[0] ?? null, tables };
}

function render(ctx: Ctx, report: StatusReport): string {
  const now = Date.now();
  const parts: string[] = [];
  parts.push(`warehouse: ${report.db}`);
  parts.push(
    `\nlast runs:\n${report.runs.length ? formatTable(Object.keys(report.runs[0] ?? {}), report.runs) : '(none)\n'}`,
  );
  const cursorRows = report.cursors.map((c) => {
    const at = epochOf(c.updatedAt);
    return { ...c, age: at === null ? null : formatAge(at, now) };
  });
  parts.push(
    `\ncursors:\n${cursorRows.length ? formatTable(Object.keys(cursorRows[0] ?? {}), cursorRows) : '(none)\n'}`,
  );
  parts.push(`\nrejected records: ${report.rejected}${report.rejected ? ' (see _evsync.rejected)' : ''}`);
  if (report.ledger) {
    parts.push(`\nbudget (last snapshot):\n${formatTable(Object.keys(report.ledger), [report.ledger])}`);
  }
  void ctx;
  return `${parts.join('\n')}\n`;
}

async function status(ctx: Ctx, flags: StatusFlags): Promise<number> {
  if (!existsSync(ctx.config.db)) {
    const empty: StatusReport = {
      db: ctx.config.db,
      exists: false,
      runs: [],
      cursors: [],
      rejected: 0,
      ledger: null,
      tables: {},
    };
    if (ctx.json) ctx.out.write(`${toJson(empty, 2)}\n`);
    else ctx.out.write(`no warehouse at ${ctx.config.db} yet: run \`evsync sync\` (or \`evsync demo\`) first\n`);
    return ExitCode.Done;
  }
  let w: Warehouse | null = null;
  try {
    w = await openWarehouse(ctx, { readOnly: true });
    const report = await collect(w, ctx, flags.runs ?? 10);
    ctx.out.write(ctx.json ? `${toJson(report, 2)}\n` : render(ctx, report));
    return ExitCode.Done;
  } finally {
    await w?.close();
  }
}

export function registerStatusCommand(program: Command, app: App): void {
  program
    .command('status')
    .description('last runs, cursors and their age, rejected records, budget state (no API calls)')
    .option('--runs <n>', 'how many recent runs to show (default 10)', positiveInt())
    .addHelpText(
      'after',
      `
Examples:
  $ evsync status
  $ evsync status --json | jq '.runs[0].status'`,
    )
    .action(action<StatusFlags>(app, status));
}
