/**
 * `evsync status`: what the warehouse knows, without a single API call: the state that matters first (waiting for
 * the credit window, failing, stale), the last runs, every cursor with its age, rejected records, and the credit
 * window as the service last reported it to any run or daemon. The document is built in src/cli/status/; while a
 * daemon or a one-shot run holds the warehouse, that process answers instead (src/daemon/socket.ts).
 */

import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { askDaemon } from '../../daemon/socket.js';
import { type App, action, type Ctx, withWarehouse } from '../context.js';
import { CliError, ExitCode, errorMessage } from '../errors.js';
import { positiveInt } from '../options.js';
import { toJson } from '../output/format.js';
import { type StatusReport, statusDocument } from '../status/document.js';
import { renderStatus } from '../status/text.js';
import { writeStatusPage } from '../status-page/write-file.js';

interface StatusFlags {
  runs?: number;
  allCursors?: boolean;
  html?: string;
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
  } else ctx.out.write(ctx.json ? `${toJson(report, 2)}\n` : renderStatus(ctx, report, flags.allCursors === true));
  return ExitCode.Done;
}

async function status(ctx: Ctx, flags: StatusFlags): Promise<number> {
  // While a daemon or a one-shot run holds the database, it answers (see src/daemon/socket.ts).
  const served = await askDaemon(ctx.config.db, { op: 'status', runs: flags.runs ?? 10 });
  if (served) {
    if (!served.ok) throw new CliError(`the process holding ${ctx.config.db} could not answer: ${served.error}`);
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
    .description(
      'the state first (waiting for the credit window, failing, stale), runs, cursors, rejected records, the credit window as the service last reported it (no API calls)',
    )
    .option('--runs <n>', 'how many recent runs to show (default 10)', positiveInt())
    .option('--all-cursors', 'list every cursor (stream and scope) even when there are many')
    .option('--html <file>', 'write the status page as one self-contained HTML file (0600) instead')
    .addHelpText(
      'after',
      `
While a daemon (serve, schedule) or a one-shot sync or backfill holds the warehouse, that process answers: a
one-shot run with its progress, the credits it spent, the window as the service last reported it, what it waits
for and when it should end.

Examples:
  $ evsync status
  $ evsync status --json | jq '.state.summary'          # waiting for the window until 10:26 UTC ...; or all fresh
  $ evsync status --json | jq '.credits.current'        # the window as the service last reported it, and when
  $ evsync status --json | jq '.progress.eta'           # while a backfill runs: when it should end, and why
  $ evsync status --html report.html     # the status page as a file: opens offline in any browser`,
    )
    .action(action<StatusFlags>(app, status));
}
