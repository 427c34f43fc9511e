/**
 * `evsync status` as text: the state that matters first (waiting for the window, failing, stale), then the
 * warehouse's tables, runs, cursors, rejected records, unavailable streams, the credit window as the service last
 * reported it, change capture and the daemon; or, while a one-shot run holds the warehouse, that run's progress.
 */
import type { RunProgress } from '../../sync/index.js';
import type { Ctx } from '../context.js';
import { formatAge, formatDuration, formatNumber, formatTable } from '../output/format.js';
import type { Style } from '../output/style.js';
import type { StatusState } from '../status-page/state.js';
import { renderCapture } from './capture.js';

const mib = (bytes: number) => (bytes / 1048576).toFixed(1);

import type { CursorInfo, DaemonStatus, StatusReport } from './document.js';

/** The state's word, and its colour (the word says it without colour too). */
const LEVEL_WORD: Record<StatusState['level'], { word: string; tone: 'red' | 'yellow' | 'green' | 'dim' }> = {
  failing: { word: 'FAILING', tone: 'red' },
  waiting: { word: 'WAITING', tone: 'yellow' },
  stale: { word: 'STALE', tone: 'yellow' },
  fresh: { word: 'FRESH', tone: 'green' },
  unjudged: { word: 'NOT JUDGED', tone: 'dim' },
  empty: { word: 'EMPTY', tone: 'dim' },
  running: { word: 'RUNNING', tone: 'green' },
};

function stateLine(s: Style, state: StatusState): string {
  const { word, tone } = LEVEL_WORD[state.level];
  return `${s.bold('State')}: ${s[tone](word)}: ${state.summary}`;
}

const utcClock = (text: string | null) => (text ? `${text.slice(0, 19).replace('T', ' ')} UTC` : null);

/** The window as the service last reported it, and to whom. */
function creditsLine(s: Style, report: StatusReport): string {
  const c = report.credits?.current;
  if (!c) return `${s.bold('Credits')}: no answer from the service recorded yet`;
  const reset = c.resetPassed
    ? `; the window reset at ${utcClock(c.resetAt)} (a full window since, until the next answer says)`
    : c.resetAt
      ? `; the window resets at ${utcClock(c.resetAt)}`
      : '';
  const heard = c.live ? `${c.heardBy}, now` : c.heardBy === 'daemon' ? 'a daemon between runs' : `run ${c.heardBy}`;
  return `${s.bold('Credits')}: ${formatNumber(c.remaining ?? 0)} of ${formatNumber(c.limit ?? 0)} left in the window as the service reported at ${utcClock(c.recordedAt)} (to ${heard})${reset}`;
}

/** The last snapshot: what it wrote, and what its readers read (its catalogue and parts). */
function snapshotText(last: NonNullable<DaemonStatus['publish']>['lastSnapshot']): string {
  if (!last) return '';
  return `; the snapshot: ${last.parts} part(s) written, ${last.keptParts} unchanged, ${mib(last.size)} MiB for its readers`;
}

function renderDaemon(s: Style, d: DaemonStatus | undefined): string | null {
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
      }${snapshotText(p.lastSnapshot)}${p.lastError ? `; last error: ${p.lastError}` : ''}`
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

/** The archive: entries, size, since when (evsync rebuild replays it). */
function archiveLine(style: Ctx['outStyle'], a: NonNullable<StatusReport['archive']>): string {
  const span = a.since ? `, from ${a.since} to ${a.latest} UTC` : '';
  const pruned = a.pruned ? `; pruned before ${a.pruned.before}` : '';
  const spooled = a.spooled > 0 ? `; ${a.spooled} not compressed yet` : '';
  const failed = a.rollUpError ? `; its last compression failed (kept, tried again): ${a.rollUpError}` : '';
  return `${style.bold('Archive')}: ${a.entries} page(s) and deliveries, ${mib(a.bytes)} MiB${span}${pruned}${spooled}${failed}\n`;
}

/** The history: versions kept beyond the current rows (each record's row is its current version). */
function historyLine(style: Ctx['outStyle'], h: NonNullable<StatusReport['history']>): string {
  const streams = Object.keys(h.kept).length;
  const versions = Object.values(h.kept).reduce((a, b) => a + b, 0);
  const off = h.off.length > 0 ? `; off for ${h.off.join(', ')}` : '';
  return `${style.bold('History')}: ${versions} earlier version(s) kept over ${streams} stream(s) (schema history)${off}\n`;
}

export function renderStatus(ctx: Ctx, report: StatusReport, allCursors: boolean): string {
  if (report.progress) return renderRunStatus(ctx.outStyle, report, report.progress);
  const style = ctx.outStyle;
  const parts: string[] = [`${style.bold('Warehouse')}: ${report.db}`];
  if (report.state) parts.push(stateLine(style, report.state));
  const tableRows = Object.entries(report.tables).map(([table, rows]) => ({ table, rows }));
  if (tableRows.length) parts.push(formatTable(['table', 'rows'], tableRows));
  if (report.archive) parts.push(archiveLine(style, report.archive));
  if (report.history && Object.keys(report.history.kept).length > 0) parts.push(historyLine(style, report.history));

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
  parts.push(creditsLine(style, report));
  const capture = renderCapture(style, report.capture ?? [], report.servedBy ?? null);
  if (capture) parts.push(capture);
  const daemon = renderDaemon(style, report.daemon);
  if (daemon) parts.push(daemon);
  return `${parts.join('\n')}\n`;
}

/** While a one-shot run holds the warehouse, it answers with its progress: what it did, what it spends, when it ends. */
function renderRunStatus(s: Style, report: StatusReport, p: RunProgress): string {
  const parts: string[] = [`${s.bold('Warehouse')}: ${report.db}, held by ${report.servedBy ?? `evsync ${p.mode}`}`];
  if (report.state) parts.push(stateLine(s, report.state));
  const i = p.items;
  const events = p.events === null ? '' : `, ${formatNumber(p.events)} events in scope`;
  parts.push(
    `${s.bold('Progress')}: ${formatNumber(i.done)} of ${formatNumber(i.queued)} items done (${formatNumber(i.running)} running, ${formatNumber(i.failed)} failed, ${formatNumber(i.skipped)} skipped, ${formatNumber(i.left)} left)${events}; run ${p.runId ?? '(starting)'} since ${utcClock(p.startedAt)}`,
  );
  parts.push(creditsLine(s, report));
  parts.push(
    `${s.bold('Spent')}: ${formatNumber(p.credits.spent)} credits; about ${formatNumber(p.credits.needed)} still to spend on the work planned so far`,
  );
  parts.push(
    `${s.bold('Ends')}: about ${utcClock(p.eta.at)} (in ${formatDuration(p.eta.seconds * 1000)}): ${p.eta.basis}`,
  );
  if (p.streams.length) {
    parts.push(
      formatTable(
        ['stream', 'done', 'running', 'failed', 'skipped', 'pages', 'rows'],
        p.streams.map((x) => ({
          stream: x.stream,
          done: x.done,
          running: x.running,
          failed: x.failed,
          skipped: x.skipped,
          pages: x.pages,
          rows: x.rows,
        })),
      ),
    );
  }
  return `${parts.join('\n')}\n`;
}
