/**
 * `evsync status`: what the warehouse knows, without a single API call: the last runs, every cursor with its age,
 * rejected records, and the credit ledger as the last run left it. Reads `_evsync` (see warehouse/bookkeeping.ts).
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import type { CursorState, Warehouse } from '../../warehouse/index.js';
import { type App, action, type Ctx, openWarehouse } from '../context.js';
import { ExitCode } from '../errors.js';
import { positiveInt } from '../options.js';
import { formatAge, formatDuration, formatNumber, formatTable, type Row, toJson } from '../output/format.js';

interface StatusFlags {
  runs?: number;
  allCursors?: boolean;
}

export interface RunInfo {
  runId: string;
  kind: string;
  status: string;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  credits: number | null;
  requests: number | null;
  rows: { inserted: number; updated: number; deleted: number; rejected: number };
  error: string | null;
}

export interface CursorInfo extends CursorState {
  /** Seconds since the cursor last moved. */
  ageSeconds: number | null;
}

export interface StatusReport {
  db: string;
  exists: boolean;
  runs: RunInfo[];
  cursors: CursorInfo[];
  rejected: { total: number; byStream: Record<string, number> };
  /** The ledger as the last run left it. */
  ledger: {
    runId: string;
    recordedAt: string;
    limit: number | null;
    remaining: number | null;
    resetAt: string | null;
    spent: number | null;
  } | null;
  tables: Record<string, number>;
}

/** A warehouse timestamp (`YYYY-MM-DD HH:MM:SS[.ffffff]`, UTC) as epoch ms. */
export function epochOf(value: unknown): number | null {
  if (typeof value !== 'string' || value === '') return null;
  const ms = Date.parse(`${value.slice(0, 23).replace(' ', 'T')}Z`);
  return Number.isNaN(ms) ? null : ms;
}

const num = (v: unknown): number | null => (v === null || v === undefined || v === '' ? null : Number(v));
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

function parseJson(v: unknown): unknown {
  if (typeof v !== 'string') return v ?? null;
  try {
    return JSON.parse(v);
  } catch {
    return null;
  }
}

function runOf(row: Row): RunInfo {
  const credits = parseJson(row.credits) as Record<string, number> | null;
  const streams = (parseJson(row.streams) ?? {}) as Record<string, Partial<RunInfo['rows']>>;
  const rows = { inserted: 0, updated: 0, deleted: 0, rejected: 0 };
  for (const s of Object.values(streams)) {
    rows.inserted += s.inserted ?? 0;
    rows.updated += s.updated ?? 0;
    rows.deleted += s.deleted ?? 0;
    rows.rejected += s.rejected ?? 0;
  }
  const started = epochOf(row.started_at);
  const finished = epochOf(row.finished_at);
  const total = credits
    ? (credits.total ?? Object.entries(credits).reduce((n, [k, v]) => (k === 'total' ? n : n + (Number(v) || 0)), 0))
    : null;
  return {
    runId: String(row.run_id),
    kind: String(row.kind),
    status: String(row.status),
    startedAt: str(row.started_at),
    finishedAt: str(row.finished_at),
    durationMs: started !== null && finished !== null ? finished - started : null,
    credits: total,
    requests: num(row.requests),
    rows,
    error: str(row.error),
  };
}

export async function collectStatus(
  w: Warehouse,
  db: string,
  limit: number,
  nowMs = Date.now(),
): Promise<StatusReport> {
  const runs = await w.query(
    `SELECT run_id, kind, status, CAST(started_at AS VARCHAR) AS started_at, CAST(finished_at AS VARCHAR) AS finished_at,
            CAST(credits AS VARCHAR) AS credits, requests, CAST(streams AS VARCHAR) AS streams, error
       FROM _evsync.runs ORDER BY started_at DESC LIMIT ?`,
    [Math.floor(limit)],
  );
  const cursors = (await w.listCursors()).map((c) => {
    const at = epochOf(c.updatedAt);
    return { ...c, ageSeconds: at === null ? null : Math.max(0, Math.round((nowMs - at) / 1000)) };
  });
  const rejected = await w.query(`SELECT stream, count(*) AS n FROM _evsync.rejected GROUP BY stream ORDER BY stream`);
  const byStream: Record<string, number> = {};
  for (const r of rejected.rows) byStream[String(r.stream)] = Number(r.n);
  const ledger = await w.query(
    `SELECT run_id, CAST(recorded_at AS VARCHAR) AS recorded_at, credit_limit, remaining,
            CAST(reset_at AS VARCHAR) AS reset_at, spent
       FROM _evsync.credits ORDER BY recorded_at DESC LIMIT 1`,
  );
  const l = ledger.rows[0];
  return {
    db,
    exists: true,
    runs: runs.rows.map(runOf),
    cursors,
    rejected: { total: Object.values(byStream).reduce((a, b) => a + b, 0), byStream },
    ledger: l
      ? {
          runId: String(l.run_id),
          recordedAt: String(l.recorded_at),
          limit: num(l.credit_limit),
          remaining: num(l.remaining),
          resetAt: str(l.reset_at),
          spent: num(l.spent),
        }
      : null,
    tables: await w.tableCounts(),
  };
}

/** Beyond this many cursors the text output groups them by stream (a large account has thousands). */
const CURSOR_LIST_MAX = 40;

function ageText(seconds: number | null): string | null {
  return seconds === null ? null : formatAge(0, seconds * 1000);
}

function cursorTable(cursors: readonly CursorInfo[]): string {
  return formatTable(
    ['stream', 'scope', 'watermark', 'age', 'open walk'],
    cursors.map((c) => ({
      stream: c.stream,
      scope: c.scope,
      watermark: c.watermark,
      age: ageText(c.ageSeconds),
      'open walk': c.walk ? `${c.walk.mode}, ${c.walk.pages} pages, ${c.walk.rows} rows so far` : '',
    })),
  );
}

function cursorSummary(cursors: readonly CursorInfo[]): string {
  const byStream = new Map<string, CursorInfo[]>();
  for (const c of cursors) byStream.set(c.stream, [...(byStream.get(c.stream) ?? []), c]);
  const rows = [...byStream].map(([stream, list]) => {
    const marks = list.map((c) => c.watermark).filter((w): w is string => w !== null);
    const ages = list.map((c) => c.ageSeconds).filter((a): a is number => a !== null);
    return {
      stream,
      scopes: list.length,
      'oldest watermark': [...marks].sort()[0] ?? null,
      'oldest age': ages.length ? ageText(Math.max(...ages)) : null,
      'open walks': list.filter((c) => c.walk).length,
    };
  });
  return formatTable(['stream', 'scopes', 'oldest watermark', 'oldest age', 'open walks'], rows);
}

function render(ctx: Ctx, report: StatusReport, allCursors: boolean): string {
  const s = ctx.outStyle;
  const parts: string[] = [`${s.bold('Warehouse')}: ${report.db}`];
  const tableRows = Object.entries(report.tables).map(([table, rows]) => ({ table, rows }));
  if (tableRows.length) parts.push(formatTable(['table', 'rows'], tableRows));

  parts.push(`${s.bold('Last runs')}`);
  if (report.runs.length === 0) parts.push('(none yet)\n');
  else
    parts.push(
      formatTable(
        ['run', 'kind', 'status', 'started (UTC)', 'duration', 'credits', 'inserted', 'updated', 'deleted', 'rejected'],
        report.runs.map((r) => ({
          run: r.runId,
          kind: r.kind,
          status: r.status,
          'started (UTC)': r.startedAt?.slice(0, 19) ?? null,
          duration: r.durationMs === null ? null : formatDuration(r.durationMs),
          credits: r.credits,
          ...r.rows,
        })),
      ),
    );
  const failed = report.runs.find((r) => r.error);
  if (failed) parts.push(`last error (${failed.runId}): ${failed.error}\n`);

  parts.push(`${s.bold('Cursors')}`);
  if (report.cursors.length === 0) parts.push('(none yet)\n');
  else if (report.cursors.length <= CURSOR_LIST_MAX || allCursors) parts.push(cursorTable(report.cursors));
  else {
    parts.push(cursorSummary(report.cursors));
    parts.push(
      `(${report.cursors.length} cursors by stream; --all-cursors lists every scope, --json gives them all)\n`,
    );
  }

  const rej = report.rejected;
  parts.push(
    `${s.bold('Rejected records')}: ${rej.total}${
      rej.total
        ? ` (${Object.entries(rej.byStream)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}; see _evsync.rejected)`
        : ''
    }`,
  );
  const l = report.ledger;
  if (l) {
    parts.push(
      `${s.bold('Budget')} at the end of the last run (${l.recordedAt.slice(0, 19)} UTC): ${formatNumber(l.remaining ?? 0)} of ${formatNumber(l.limit ?? 0)} credits left${l.resetAt ? `, window reset at ${l.resetAt.slice(0, 19)} UTC` : ''}; the run spent ${formatNumber(l.spent ?? 0)}`,
    );
  } else parts.push(`${s.bold('Budget')}: no run recorded yet`);
  return `${parts.join('\n')}\n`;
}

async function status(ctx: Ctx, flags: StatusFlags): Promise<number> {
  if (!existsSync(ctx.config.db)) {
    const empty: StatusReport = {
      db: ctx.config.db,
      exists: false,
      runs: [],
      cursors: [],
      rejected: { total: 0, byStream: {} },
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
    const report = await collectStatus(w, ctx.config.db, flags.runs ?? 10);
    ctx.out.write(ctx.json ? `${toJson(report, 2)}\n` : render(ctx, report, flags.allCursors === true));
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
    .option('--all-cursors', 'list every cursor (stream and scope) even when there are many')
    .addHelpText(
      'after',
      `
Examples:
  $ evsync status
  $ evsync status --json | jq '.runs[0].status'`,
    )
    .action(action<StatusFlags>(app, status));
}
