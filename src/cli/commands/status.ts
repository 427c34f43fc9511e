/**
 * `evsync status`: what the warehouse knows, without a single API call: the last runs, every cursor with its age,
 * rejected records, and the credit ledger as the last run left it. Reads `_evsync` (see warehouse/bookkeeping.ts).
 */

import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { utcText } from '../../sync/capture/time.js';
import { HEARTBEAT_MARK } from '../../sync/daemon/heartbeat.js';
import { CATCH_UP_MARK } from '../../sync/daemon/reconcile-loop.js';
import type { PublishStats } from '../../sync/publisher.js';
import type { CursorState, LedgerRecord, RunRecord, UnavailableStream, Warehouse } from '../../warehouse/index.js';
import { type App, action, type Ctx, withWarehouse } from '../context.js';
import { askDaemon } from '../daemon.js';
import { CliError, ExitCode, errorMessage } from '../errors.js';
import { positiveInt } from '../options.js';
import { formatAge, formatDuration, formatNumber, formatTable, toJson } from '../output/format.js';
import {
  type CreditsSection,
  creditsSection,
  type DeliveriesSection,
  deliveriesSection,
  HISTORY_HOURS,
} from '../status-page/sections.js';
import { type StreamRow, streamRows } from '../status-page/streams.js';
import { writeStatusPage } from '../status-page/write-file.js';
import { type CaptureStatus, captureStatus, renderCapture } from './status-capture.js';

interface StatusFlags {
  runs?: number;
  allCursors?: boolean;
  html?: string;
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
  /** Streams the service does not serve here, with the config key that fixes each. */
  unavailable: (UnavailableStream & { fix: string })[];
  /** The ledger as the last run left it. */
  ledger: LedgerRecord | null;
  tables: Record<string, number>;
  /** Streams fed by webhooks (`evsync serve`): last delivery, lag, applied, found by reconciliation. */
  capture?: CaptureStatus[];
  /** Set when a running `evsync serve` answered (it holds the database). */
  servedBy?: string;
  /** When the document was made (ISO 8601, UTC). */
  generatedAt?: string;
  /** One row per stream: rows, how it is fed, freshness, lag, last poll, health with its reason. */
  streams?: StreamRow[];
  /** Credits per rate-limit window over the last 24 hours, the current window's remaining credits and reset. */
  credits?: CreditsSection;
  /** Syncs and reconciles started in the last 24 hours, newest first (at most TIMELINE_MAX). */
  timeline?: RunInfo[];
  /** Webhook deliveries received, settled, refused per 10 minutes over the last 24 hours; pending now. */
  deliveries?: DeliveriesSection;
  /** What the daemon (`serve`, `schedule`) left in the warehouse, and, when one answered, its live state. */
  daemon?: DaemonStatus;
}

export interface DaemonStatus {
  /** The last heartbeat a daemon wrote here (UTC ISO), null when none ever ran. */
  lastHeartbeat: string | null;
  /** Since when a catch-up is owed (it polls every selected stream, past events included, until one completes). */
  catchUpPendingSince: string | null;
  /** Set when a running daemon answered. */
  command?: 'serve' | 'schedule';
  pid?: number;
  /** Queries through the daemon not answered yet (running or waiting for a worker). */
  queriesRunning?: number;
  /** Of those, how many run in a worker process and how many wait for one; worker processes alive. */
  queries?: { running: number; waiting: number; processes: number };
  /** What publishing to --parquet-out / --snapshot costs and whether it keeps up (when the daemon publishes). */
  publish?: PublishStats;
}

/** The most runs the timeline holds (a daemon reconciling every minute makes 1,440 a day). */
const TIMELINE_MAX = 300;

/** A warehouse timestamp (`YYYY-MM-DD HH:MM:SS[.ffffff]`, UTC) as epoch ms. */
export function epochOf(value: unknown): number | null {
  if (typeof value !== 'string' || value === '') return null;
  const ms = Date.parse(`${value.slice(0, 23).replace(' ', 'T')}Z`);
  return Number.isNaN(ms) ? null : ms;
}

/** A run a killed process left 'running' (its PID is gone): shown as interrupted, as the next run will record it. */
function liveStatus(run: RunRecord): string {
  if (run.status !== 'running' || run.pid === null || run.pid === process.pid) return run.status;
  try {
    process.kill(run.pid, 0);
    return run.status;
  } catch {
    return 'interrupted';
  }
}

function runOf(run: RunRecord): RunInfo {
  const streams = (run.streams ?? {}) as Record<string, Partial<RunInfo['rows']>>;
  const rows = { inserted: 0, updated: 0, deleted: 0, rejected: 0 };
  for (const s of Object.values(streams)) {
    rows.inserted += s.inserted ?? 0;
    rows.updated += s.updated ?? 0;
    rows.deleted += s.deleted ?? 0;
    rows.rejected += s.rejected ?? 0;
  }
  const started = epochOf(run.startedAt);
  const finished = epochOf(run.finishedAt);
  const credits = run.credits;
  const total = credits
    ? (credits.total ?? Object.entries(credits).reduce((n, [k, v]) => (k === 'total' ? n : n + v), 0))
    : null;
  return {
    runId: run.runId,
    kind: run.kind,
    status: liveStatus(run),
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    durationMs: started !== null && finished !== null ? finished - started : null,
    credits: total,
    requests: run.requests,
    rows,
    error: run.error,
  };
}

export async function collectStatus(
  warehouse: Warehouse,
  db: string,
  limit: number,
  nowMs = Date.now(),
  zone = 'UTC',
): Promise<StatusReport> {
  const since = utcText(nowMs - HISTORY_HOURS * 3_600_000);
  const history = await warehouse.statusHistory(since, utcText(nowMs));
  const recent = await warehouse.runs.recent({ limit: Math.max(TIMELINE_MAX, Math.floor(limit)) });
  const runs = recent.slice(0, Math.floor(limit));
  const rawCursors = await warehouse.cursors.list();
  const cursors = rawCursors.map((cursor) => {
    const at = epochOf(cursor.updatedAt);
    return { ...cursor, ageSeconds: at === null ? null : Math.max(0, Math.round((nowMs - at) / 1000)) };
  });
  const byStream = await warehouse.rejectedCounts();
  const listed = await warehouse.unavailable.list();
  const unavailable = listed.map((entry) => ({ ...entry, fix: `streams.${entry.stream}.path in evsync.config.json` }));
  const tables = await warehouse.tableCounts();
  const captured = await warehouse.capture.streams();
  const ledger = await warehouse.runs.lastLedger();
  return {
    db,
    exists: true,
    runs: runs.map(runOf),
    cursors,
    rejected: { total: Object.values(byStream).reduce((a, b) => a + b, 0), byStream },
    unavailable,
    ledger,
    tables,
    capture: captureStatus(captured, nowMs),
    generatedAt: new Date(nowMs).toISOString(),
    streams: streamRows({
      tables,
      cursors: rawCursors,
      capture: captured,
      unavailable: listed,
      rejected: byStream,
      runs: recent,
      lags: history.lags,
      zone,
      nowMs,
    }),
    credits: creditsSection(history, ledger, nowMs),
    timeline: recent.filter((r) => r.startedAt >= since).map(runOf),
    deliveries: deliveriesSection(history, nowMs),
    daemon: {
      lastHeartbeat: (await warehouse.marks.get(HEARTBEAT_MARK)) || null,
      catchUpPendingSince: (await warehouse.marks.get(CATCH_UP_MARK)) || null,
    },
  };
}

/** The status document of the warehouse this command is configured for (the socket and the page answer with it). */
export function statusDocument(ctx: Ctx, w: Warehouse, runs: number): Promise<StatusReport> {
  return collectStatus(w, ctx.config.db, runs, Date.now(), ctx.config.values.recordTimezone ?? 'UTC');
}

function renderDaemon(s: Ctx['style'], d: DaemonStatus | undefined): string | null {
  if (!d || (d.lastHeartbeat === null && d.command === undefined)) return null;
  const who = d.command
    ? `evsync ${d.command} (PID ${d.pid}) is running, ${d.queriesRunning ?? 0} query(ies) in it`
    : 'not running';
  const beat = d.lastHeartbeat ? `; last heartbeat ${d.lastHeartbeat.slice(0, 19).replace('T', ' ')} UTC` : '';
  const owed = d.catchUpPendingSince
    ? `; a catch-up owed since ${d.catchUpPendingSince.slice(0, 19).replace('T', ' ')} UTC (every selected stream, past events included, is polled until a run of it completes)`
    : '';
  const p = d.publish;
  const published = p
    ? `\n${s.bold('Publishing')} (--parquet-out / --snapshot): ${p.publishes} publish(es), ${p.failures} failed; ${p.pendingPartitions} partition(s) waiting${
        p.lastDurationMs !== null
          ? `; the last took ${formatDuration(p.lastDurationMs)} (${formatDuration(p.lastCpuMs ?? 0)} CPU, ${((p.lastBytes ?? 0) / 1048576).toFixed(1)} MiB written)`
          : ''
      }${p.lastError ? `; last error: ${p.lastError}` : ''}`
    : '';
  return `${s.bold('Daemon')}: ${who}${beat}${owed}${published}`;
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
  const style = ctx.outStyle;
  const parts: string[] = [`${style.bold('Warehouse')}: ${report.db}`];
  const tableRows = Object.entries(report.tables).map(([table, rows]) => ({ table, rows }));
  if (tableRows.length) parts.push(formatTable(['table', 'rows'], tableRows));

  parts.push(`${style.bold('Last runs')}`);
  if (report.runs.length === 0) parts.push('(none yet)\n');
  else
    parts.push(
      formatTable(
        ['run', 'kind', 'status', 'started (UTC)', 'duration', 'credits', 'inserted', 'updated', 'deleted', 'rejected'],
        report.runs.map((run) => ({
          run: run.runId,
          kind: run.kind,
          status: run.status,
          'started (UTC)': run.startedAt?.slice(0, 19) ?? null,
          duration: run.durationMs === null ? null : formatDuration(run.durationMs),
          credits: run.credits,
          ...run.rows,
        })),
      ),
    );
  const failed = report.runs.find((run) => run.error);
  if (failed) parts.push(`last error (${failed.runId}): ${failed.error}\n`);

  parts.push(`${style.bold('Cursors')}`);
  if (report.cursors.length === 0) parts.push('(none yet)\n');
  else if (report.cursors.length <= CURSOR_LIST_MAX || allCursors) parts.push(cursorTable(report.cursors));
  else {
    parts.push(cursorSummary(report.cursors));
    parts.push(
      `(${report.cursors.length} cursors by stream; --all-cursors lists every scope, --json gives them all)\n`,
    );
  }

  const rejected = report.rejected;
  parts.push(
    `${style.bold('Rejected records')}: ${rejected.total}${
      rejected.total
        ? ` (${Object.entries(rejected.byStream)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}; see _evsync.rejected)`
        : ''
    }`,
  );
  if (report.unavailable.length) {
    parts.push(
      `${style.bold('Unavailable streams')} (not served by the service here; skipped without a call until retried):`,
    );
    parts.push(
      formatTable(
        ['stream', 'path', 'status', 'since (UTC)', 'last tried (UTC)', 'fix'],
        report.unavailable.map((entry) => ({
          stream: entry.stream,
          path: entry.path,
          status: entry.status,
          'since (UTC)': entry.firstSeenAt,
          'last tried (UTC)': entry.lastSeenAt,
          fix: entry.fix,
        })),
      ),
    );
  }
  const ledger = report.ledger;
  if (ledger) {
    parts.push(
      `${style.bold('Budget')} at the end of the last run (${ledger.recordedAt.slice(0, 19)} UTC): ${formatNumber(ledger.remaining ?? 0)} of ${formatNumber(ledger.limit ?? 0)} credits left${ledger.resetAt ? `, window reset at ${ledger.resetAt.slice(0, 19)} UTC` : ''}; the run spent ${formatNumber(ledger.spent ?? 0)}`,
    );
  } else parts.push(`${style.bold('Budget')}: no run recorded yet`);
  const capture = renderCapture(style, report.capture ?? [], report.servedBy ?? null);
  if (capture) parts.push(capture);
  const daemon = renderDaemon(style, report.daemon);
  if (daemon) parts.push(daemon);
  return `${parts.join('\n')}\n`;
}

/** Writes the report as asked: the page (--html), JSON (--json) or text. */
function output(ctx: Ctx, report: StatusReport, flags: StatusFlags): number {
  if (flags.html) {
    let written: string;
    try {
      written = writeStatusPage(flags.html, report);
    } catch (err) {
      throw new CliError(`--html ${flags.html}: ${errorMessage(err)}`);
    }
    ctx.out.write(ctx.json ? `${toJson({ html: written })}\n` : `wrote the status page to ${written}\n`);
  } else ctx.out.write(ctx.json ? `${toJson(report, 2)}\n` : render(ctx, report, flags.allCursors === true));
  return ExitCode.Done;
}

async function status(ctx: Ctx, flags: StatusFlags): Promise<number> {
  // While `evsync serve` holds the database, it answers (see daemon.ts).
  const served = await askDaemon(ctx.config.db, { op: 'status', runs: flags.runs ?? 10 });
  if (served) {
    if (!served.ok) throw new CliError(`evsync serve could not answer: ${served.error}`);
    return output(ctx, served.result as StatusReport, flags);
  }
  if (!existsSync(ctx.config.db)) {
    const missing = `no warehouse at ${ctx.config.db} yet: run \`evsync sync\` (or \`evsync demo\`) first`;
    if (flags.html) throw new CliError(missing);
    if (!ctx.json) {
      ctx.out.write(`${missing}\n`);
      return ExitCode.Done;
    }
    const empty: StatusReport = {
      db: ctx.config.db,
      exists: false,
      runs: [],
      cursors: [],
      rejected: { total: 0, byStream: {} },
      unavailable: [],
      ledger: null,
      tables: {},
    };
    ctx.out.write(`${toJson(empty, 2)}\n`);
    return ExitCode.Done;
  }
  const report = await withWarehouse(ctx, { readOnly: true }, (w) => statusDocument(ctx, w, flags.runs ?? 10));
  return output(ctx, report, flags);
}

export function registerStatusCommand(program: Command, app: App): void {
  program
    .command('status')
    .description('last runs, cursors and their age, rejected records, budget state (no API calls)')
    .option('--runs <n>', 'how many recent runs to show (default 10)', positiveInt())
    .option('--all-cursors', 'list every cursor (stream and scope) even when there are many')
    .option('--html <file>', 'write the status page as one self-contained HTML file (0600) instead')
    .addHelpText(
      'after',
      `
Examples:
  $ evsync status
  $ evsync status --json | jq '.runs[0].status'
  $ evsync status --html report.html     # the status page as a file: opens offline in any browser`,
    )
    .action(action<StatusFlags>(app, status));
}
