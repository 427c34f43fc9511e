/**
 * What a run says to the person who started it: its progress (the live display on a terminal, else log lines), its
 * waits for the rate-limit window, its summary table and one-line status, what to do next, its exit code. Shared by
 * `sync`, `backfill`, `demo` and the daemon's runs.
 */
import type { ApiClient } from '../api/index.js';
import type { ProgressEvent, SyncResult } from '../sync/index.js';
import type { Ctx } from './context.js';
import { ExitCode } from './errors.js';
import { formatDuration, formatNumber, formatTable } from './output/format.js';
import { createLogger, type Logger } from './output/logger.js';
import { SyncProgress } from './output/progress.js';

/** A wait for the rate-limit window, as the client reports it. */
export interface RateLimitWait {
  ms: number;
  until: Date;
  reason: string;
  /** Bulk work waiting for the share of the window it leaves to other calls (reason `share`). */
  lane?: { name: string; leave: number; limit: number } | undefined;
}

/** The log line of a wait for the rate-limit window (sync's, and the daemon's for its whole life). */
export function waitLine(w: RateLimitWait): string {
  if (w.reason === 'share' && w.lane) {
    const { name, leave, limit } = w.lane;
    return `${name} waits ${formatDuration(w.ms)} for the rate-limit window, until ${w.until.toISOString()}: it leaves ${formatNumber(leave)} of the window's ${formatNumber(limit)} credits to other calls`;
  }
  const why = w.reason === '429' ? 'the service answered 429' : 'credits used up for this window';
  return `waiting ${formatDuration(w.ms)} for the rate-limit window (${why}), until ${w.until.toISOString()}`;
}

/**
 * Progress for one run: the live display on a terminal, else plain log lines for what matters (waits, failures).
 * Returns the logger to use while it is up (it keeps log lines from tearing the display).
 */
export function attachProgress(
  ctx: Ctx,
  client: ApiClient,
): { onProgress: (e: ProgressEvent) => void; log: Logger; dispose: () => void } {
  const failures = new FailureEcho();
  if (ctx.showProgress) {
    const display = new SyncProgress(ctx.err, ctx.style, () => client.ledger.snapshot());
    const log = createLogger(display.logStream, ctx.style, ctx.verbosity);
    const onWait = (w: { ms: number; until: Date; reason: string }) => display.onWait(w);
    client.on('wait', onWait);
    return {
      onProgress: (e) => {
        display.onEvent(e);
        if (e.type === 'item-failed') failures.report(e.stream, e.error, log);
      },
      log,
      dispose: () => {
        client.off('wait', onWait);
        display.stop();
      },
    };
  }
  const log = ctx.log;
  const onWait = (w: RateLimitWait) => log.info(waitLine(w));
  client.on('wait', onWait);
  return {
    onProgress: (e) => {
      if (e.type === 'item-failed') failures.report(e.stream, e.error, log);
      else if (e.type === 'plan') log.debug(`plan: ${e.streams.length} streams, ${e.events} events in scope`);
      else if (e.type === 'item-done') log.debug(`${e.stream} ${e.scope}: ${e.pages} pages, ${e.rows} rows`);
    },
    log,
    dispose: () => {
      client.off('wait', onWait);
    },
  };
}

/**
 * Failures as they happen: the first of each stream as a warning, the rest only with --verbose (the run's summary
 * groups them all). An unreachable service once printed 124 warning lines, one per URL.
 */
class FailureEcho {
  private readonly warned = new Set<string>();
  report(stream: string, error: string, log: Logger): void {
    if (this.warned.has(stream)) log.debug(error);
    else {
      this.warned.add(stream);
      log.warn(error);
    }
  }
}

export function summaryTable(result: SyncResult): string {
  const rows = Object.entries(result.streams).map(([stream, s]) => ({
    stream,
    inserted: s.inserted,
    updated: s.updated,
    deleted: s.deleted,
    rejected: s.rejected,
    pages: s.pages,
  }));
  if (rows.length === 0) return '';
  return formatTable(['stream', 'inserted', 'updated', 'deleted', 'rejected', 'pages'], rows);
}

export function statusLine(result: SyncResult): string {
  const c = result.credits;
  const items = result.items;
  return [
    `${result.status} in ${formatDuration(result.durationMs)}`,
    `credits ${formatNumber(c.total)} (list ${formatNumber(c.list)}, token ${formatNumber(c.token)}, other ${formatNumber(c.other)})`,
    `${formatNumber(result.requests)} requests`,
    `items ${items.done}/${items.total} done${items.pending ? `, ${items.pending} pending` : ''}${items.failed ? `, ${items.failed} failed` : ''}`,
    result.waitsMs > 0 ? `waited ${formatDuration(result.waitsMs)}` : null,
  ]
    .filter((p): p is string => p !== null)
    .join(' · ');
}

export function exitCodeOf(result: SyncResult): number {
  return result.status === 'done' ? ExitCode.Done : result.status === 'partial' ? ExitCode.Partial : ExitCode.Failure;
}

/** Tells the user what happened beyond the table: what to do after a partial run, what failed. */
export function explain(log: Logger, result: SyncResult, command: string): void {
  for (const warning of result.warnings) log.warn(warning);
  for (const e of result.errors) log.error(e);
  if (result.status === 'partial') {
    log.warn(
      `stopped before the end (${result.reason ?? 'budget or time limit'}); state is saved: run the same command again (\`${command}\`) to resume`,
    );
  } else if (result.status === 'failed' && result.reason) {
    log.warn(`state is saved: once the service answers again, run the same command (\`${command}\`) to resume`);
  }
}
