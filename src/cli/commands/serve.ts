/**
 * `evsync serve`: the long-running form. One process owns the database and runs the webhook receiver and applier
 * (a change at the service is in the warehouse seconds later, for no credit when its delivery carries the whole
 * record), the scheduled reconciliation (streams without webhooks every run, webhook-fed streams after the catch-up
 * at start and then every `reconcileEveryHours`, or every run while applying fails), `GET /healthz`, `GET /metrics`,
 * and a local socket through which `evsync status` and `evsync query` reach the database it holds. The daemon
 * itself (lock, socket, runs, shutdown) is shared with `schedule`: see daemon-run.ts.
 */
import type { Command } from 'commander';
import { DAEMON_DEFAULTS } from '../../../schemas/daemon-settings.js';
import { type App, action } from '../context.js';
import { addPublishOptions } from '../daemon-publish.js';
import { addQueryBoundOptions, type DaemonFlags, runDaemon } from '../daemon-run.js';
import { addBudgetOptions, addSelectionOptions, parseTimeZoneFlag } from '../options.js';

/** The schedule `serve` polls on when neither --cron nor schedule.cron is given. */
const DEFAULT_SERVE_CRON = DAEMON_DEFAULTS.serveCron;

function hours(value: string): number {
  const n = Number(value);
  if (!(n >= 0) || !Number.isFinite(n)) throw new Error('expected a number of hours >= 0');
  return n;
}

export function registerServeCommand(program: Command, app: App): void {
  const cmd = program
    .command('serve')
    .description('the long-running form: webhook receiver and applier, scheduled reconciliation, /healthz, /metrics')
    .option(
      '--listen <host:port>',
      `address to listen on (default ${DAEMON_DEFAULTS.webhooks.listen}; TLS belongs to a reverse proxy)`,
    )
    .option('--path <path>', `path deliveries are POSTed to (default ${DAEMON_DEFAULTS.webhooks.path})`)
    .option('--cron <expr>', `reconciliation schedule (default schedule.cron, else "${DEFAULT_SERVE_CRON}")`)
    .option('--tz <zone>', 'time zone of the cron expression (default: the local zone)', parseTimeZoneFlag)
    .option(
      '--reconcile-every <hours>',
      `poll webhook-fed streams at most this often while deliveries are healthy (default ${DAEMON_DEFAULTS.reconcileEveryHours})`,
      hours,
    )
    .option('--no-catch-up', 'do not poll at start for what was missed while stopped (only when nothing changed)');
  addSelectionOptions(cmd);
  addBudgetOptions(cmd);
  addQueryBoundOptions(cmd);
  addPublishOptions(cmd);
  cmd
    .addHelpText(
      'after',
      `
Needs EVSYNC_WEBHOOK_SECRET (a long random string, e.g. \`openssl rand -hex 32\`): every delivery must carry it in
the ${DAEMON_DEFAULTS.webhooks.secretHeader} header (webhooks.secretHeader in the config); the database keeps only its hash. Set the service
up with \`evsync webhooks install --url <public url>\`.

It holds the database for its whole life (a second writer such as \`evsync sync\` is refused, naming it). While it
runs, \`evsync status\` and \`evsync query\` from another shell are answered by it (a socket beside the database):
queries read a copy of the warehouse made for them, bounded by --query-timeout and --query-max-rows, and are
cancelled when the client goes away; deliveries never wait for them. At start it catches up on what may have been
missed while it was stopped (every selected stream, past events included; --no-catch-up skips it). The catch-up
leaves a quarter of each rate-limit window to the ticks and webhook re-reads, and stops at each tick (after its
pages in flight) for the tick's own polls, then goes on.
With --parquet-out and --snapshot it keeps Parquet and a read-only DuckDB copy fresh for other tools (every
--publish-every seconds, ${DAEMON_DEFAULTS.publisher.everySeconds}), which cannot open the warehouse while it runs; a local --parquet-out is this
warehouse's alone (its owner record) and held by the daemon until it stops, and the snapshot may not lie inside it.
A warehouse of another account is refused at start (exit 2), as \`sync\` refuses it, before anything listens.
The status page, /status.json and /metrics are on --admin-listen (loopback; another address needs
EVSYNC_ADMIN_TOKEN, sent as "Authorization: Bearer").
SIGINT/SIGTERM stop it cleanly: exit 0, or 3 when a run in flight was cut short (its state is saved).

Examples:
  $ export EVSYNC_WEBHOOK_SECRET=$(openssl rand -hex 32)
  $ evsync serve --streams core --cron "*/15 * * * *"
  $ evsync serve --listen 127.0.0.1:9000 --reconcile-every 12
  $ evsync serve --snapshot ./evsync-snapshot.duckdb --parquet-out ./parquet   # for duckdb, Python, BI tools
  $ evsync serve --admin-listen 127.0.0.1:9788        # the status page: open http://127.0.0.1:9788/`,
    )
    .action(
      action<DaemonFlags>(app, (ctx, flags) =>
        runDaemon(ctx, flags, { name: 'serve', defaultCron: DEFAULT_SERVE_CRON }),
      ),
    );
}
