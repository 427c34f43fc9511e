/**
 * `evsync serve`: the long-running form. One process owns the database and runs the webhook receiver and applier
 * (a change at the service is in the warehouse seconds later, for no credit when its delivery carries the whole
 * record), the scheduled reconciliation (`schedule`'s cron loop: streams without webhooks every run, webhook-fed
 * streams at start and then every `reconcileEveryHours`, or every run while applying fails), `GET /healthz`,
 * `GET /metrics`, and a local socket through which `evsync status` and `evsync query` reach the database it holds.
 *
 * SIGINT/SIGTERM stop it cleanly: deliveries are refused (503, the service retries them), the batch and the run in
 * flight finish and save state, then the process exits 0. A delivery journaled and not yet applied is applied at
 * the next start.
 */
import type { Command } from 'commander';
import type { ApiClient } from '../../api/index.js';
import type { CaptureOptions, ReconcilePolicy, RunningCapture } from '../../sync/capture/index.js';
import type { SyncOptions, SyncResult } from '../../sync/index.js';
import type { Warehouse } from '../../warehouse/index.js';
import { type AdminServer, adminSettings, captureMetricsText, startAdminServer } from '../admin-server.js';
import { type App, action, type Ctx, connection, createClient, openWarehouse, stopSignal } from '../context.js';
import { type DaemonSocket, startDaemonSocket } from '../daemon.js';
import { ExitCode, errorMessage } from '../errors.js';
import { addBudgetOptions, addSelectionOptions, parseTimeZoneFlag } from '../options.js';
import { toJson } from '../output/format.js';
import type { Logger } from '../output/logger.js';
import { type WebhookSettings, webhookSecret, webhookSettings } from '../webhook-settings.js';
import { type ScheduleFlags, type Scheduler, startScheduler } from './schedule.js';
import { statusDocument } from './status.js';
import { syncOptionsFrom } from './sync.js';

interface ServeFlags extends ScheduleFlags {
  listen?: string;
  adminListen?: string;
  path?: string;
  reconcileEvery?: number;
  catchUp?: boolean;
}

/** The schedule `serve` polls on when neither --cron nor schedule.cron is given. */
export const DEFAULT_SERVE_CRON = '*/15 * * * *';

function hours(value: string): number {
  const n = Number(value);
  if (!(n >= 0) || !Number.isFinite(n)) throw new Error('expected a number of hours >= 0');
  return n;
}

/** Everything `serve` holds open, each null until opened: `shutdown` closes what was. */
interface Held {
  warehouse: Warehouse | null;
  client: ApiClient | null;
  running: RunningCapture | null;
  socket: DaemonSocket | null;
  scheduler: Scheduler | null;
  admin?: AdminServer | null;
}

/** What the receiver and applier are started with: the sync's own selection, so both write what a run would. */
function captureOptions(
  w: Warehouse,
  c: ApiClient,
  secret: string,
  policy: ReconcilePolicy,
  options: SyncOptions,
  settings: WebhookSettings,
  log: Logger,
): CaptureOptions {
  return {
    warehouse: w,
    client: c,
    secret,
    streams: policy.captured,
    filters: options,
    ...(options.overrides ? { overrides: options.overrides } : {}),
    ...(options.recordTimezone ? { recordTimezone: options.recordTimezone } : {}),
    listen: settings.listen,
    path: settings.path,
    secretHeader: settings.secretHeader,
    maxBodyBytes: settings.maxBodyBytes,
    log: (level, message) => log[level](message),
  };
}

/** The socket beside the database: serve holds it, so `status` and `query` from another shell are answered here. */
function startSocket(ctx: Ctx, w: Warehouse): Promise<DaemonSocket> {
  return startDaemonSocket(ctx.config.db, async (request) => {
    if (request.op === 'status') {
      return {
        ...(await statusDocument(ctx, w, request.runs)),
        servedBy: `evsync serve (PID ${process.pid})`,
      };
    }
    return w.capture.readQuery(request.sql, request.form, { allowRead: request.allowRead });
  });
}

/** Says where serve listens (and, with --json, as one line a supervisor can read). */
function announce(ctx: Ctx, r: RunningCapture, policy: ReconcilePolicy, socket: DaemonSocket): void {
  ctx.log.info(
    `listening on ${r.url} (deliveries), ${r.origin}/healthz; ${policy.captured.length} stream(s) fed by webhooks (${policy.captured.join(', ') || 'none'}), ${policy.polled.length} polled`,
  );
  if (ctx.json) ctx.out.write(`${toJson({ listening: r.url, healthz: `${r.origin}/healthz`, socket: socket.path })}\n`);
}

/** Which streams the next reconciliation polls (null skips the run: no credit spent for nothing). */
function planReconcile(r: RunningCapture, policy: ReconcilePolicy, log: Logger): () => { streams: string } | null {
  return () => {
    const unhealthy = r.applier.failuresSinceReconcile > 0;
    const list = policy.next(unhealthy);
    if (list === null) log.debug('reconcile skipped: every selected stream is fed by webhooks, none due');
    return list === null ? null : { streams: list.join(',') };
  };
}

/**
 * After each reconciliation run: count what it found that webhooks had missed, mark the webhook-fed streams
 * reconciled when it succeeded, apply again what was applied during the run, and prune old settled deliveries.
 */
function afterReconcile(
  w: Warehouse,
  r: RunningCapture,
  policy: ReconcilePolicy,
  settings: WebhookSettings,
  log: Logger,
): (result: SyncResult, startedAt: Date) => Promise<void> {
  return async (result, startedAt) => {
    r.metrics.runs.add({ status: result.status });
    r.metrics.credits.add({ by: 'reconcile' }, result.credits.total);
    const found: Record<string, number> = {};
    for (const name of policy.captured) {
      const s = result.streams[name];
      if (s) found[name] = s.inserted + s.updated + s.deleted;
    }
    for (const [stream, rows] of Object.entries(found)) r.metrics.reconciled.add({ stream }, rows);
    await w.capture.recordReconcile(result.runId, found);
    if (Object.keys(found).length > 0 && result.status === 'done') {
      policy.reconciled(startedAt.getTime());
      r.applier.failuresSinceReconcile = 0;
    }
    // Definitions and events may have changed; a page read before a delivery's change and loaded after it must not
    // keep the older version: the deliveries applied meanwhile are applied again.
    r.applier.invalidate();
    const replayed = await r.applier.replay(startedAt.toISOString().replace('T', ' ').slice(0, 23));
    if (replayed) log.debug(`${replayed} deliveries applied during the run were checked again`);
    const before = new Date(Date.now() - settings.retentionDays * 86_400_000).toISOString().replace('T', ' ');
    const pruned = await w.capture.prune(before.slice(0, 23));
    if (pruned) log.debug(`${pruned} settled deliveries older than ${settings.retentionDays} days removed`);
  };
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/**
 * Closes what serve opened, in the order that loses nothing: deliveries first (503: the service retries them), then
 * the run in flight (it saves its state), then the database.
 */
async function shutdown(held: Held, log: Logger): Promise<{ runs: number } | null | undefined> {
  held.running?.receiver.close();
  await held.admin?.close();
  const summary = await held.scheduler?.stop().catch(() => null);
  await held.running?.close().catch((err: unknown) => log.warn(`closing the receiver: ${errorMessage(err)}`));
  await held.socket?.close().catch(() => undefined);
  await held.client?.close().catch(() => undefined);
  await held.warehouse?.close().catch(() => undefined);
  return summary;
}

async function serve(ctx: Ctx, flags: ServeFlags): Promise<number> {
  const conn = connection(ctx);
  const secret = webhookSecret(ctx);
  const settings = webhookSettings(ctx, flags);
  const admin = adminSettings(ctx, flags.adminListen);
  const options = syncOptionsFrom(ctx, flags, 'incremental');
  const streams = options.streams ?? 'core';
  const capture = await import('../../sync/capture/index.js');
  const { parseListen, ReconcilePolicy, startCapture } = capture;
  parseListen(settings.listen);
  const policy = new ReconcilePolicy({
    streams,
    everyHours: settings.reconcileEveryHours,
    catchUp: flags.catchUp !== false,
  });
  const log = ctx.log;
  let busy = false;
  const stop = stopSignal(ctx, (why) =>
    log.warn(`${why}: stopping${busy ? ' after the page in flight (state is saved)' : ''}…`),
  );
  const held: Held = { warehouse: null, client: null, running: null, socket: null, scheduler: null };
  try {
    const w = await openWarehouse(ctx);
    held.warehouse = w;
    const c = await createClient(ctx, conn, flags);
    held.client = c;
    const r = await startCapture(captureOptions(w, c, secret, policy, options, settings, log));
    held.running = r;
    const socket = await startSocket(ctx, w);
    held.socket = socket;
    announce(ctx, r, policy, socket);
    if (admin) {
      held.admin = await startAdminServer({
        ...admin,
        status: () => statusDocument(ctx, w, 10).then((d) => ({ ...d, servedBy: `evsync serve (PID ${process.pid})` })),
        metrics: () => captureMetricsText(w, r.metrics),
        log: (level, message) => log[level](message),
      });
      log.info(`status page on ${held.admin.origin}/ (also /status.json, /metrics)`);
      if (ctx.json) ctx.out.write(`${toJson({ admin: held.admin.origin, metrics: `${held.admin.origin}/metrics` })}\n`);
    }
    held.scheduler = await startScheduler(
      ctx,
      { ...flags, runNow: flags.catchUp !== false || flags.runNow === true },
      stop.signal,
      {
        warehouse: w,
        client: c,
        label: 'reconcile',
        defaultCron: DEFAULT_SERVE_CRON,
        plan: planReconcile(r, policy, log),
        onResult: afterReconcile(w, r, policy, settings, log),
      },
      (b) => {
        busy = b;
      },
    );
    await untilAborted(stop.signal);
    return ExitCode.Done;
  } finally {
    const summary = await shutdown(held, log);
    stop.dispose();
    if (summary) log.info(`serve stopped after ${summary.runs} reconciliation run(s)`);
  }
}

export function registerServeCommand(program: Command, app: App): void {
  const cmd = program
    .command('serve')
    .description('the long-running form: webhook receiver and applier, scheduled reconciliation, /healthz, /metrics')
    .option('--listen <host:port>', 'address to listen on (default 127.0.0.1:8787; TLS belongs to a reverse proxy)')
    .option('--admin-listen <host:port|off>', 'status page, /status.json and /metrics (default 127.0.0.1:8788)')
    .option('--path <path>', 'path deliveries are POSTed to (default /webhooks)')
    .option('--cron <expr>', `reconciliation schedule (default schedule.cron, else "${DEFAULT_SERVE_CRON}")`)
    .option('--tz <zone>', 'time zone of the cron expression (default: the local zone)', parseTimeZoneFlag)
    .option(
      '--reconcile-every <hours>',
      'poll webhook-fed streams at most this often while deliveries are healthy (default 6)',
      hours,
    )
    .option('--no-catch-up', 'do not poll the webhook-fed streams at start (only when nothing changed while stopped)');
  addSelectionOptions(cmd);
  addBudgetOptions(cmd);
  cmd
    .addHelpText(
      'after',
      `
Needs EVSYNC_WEBHOOK_SECRET (a long random string, e.g. \`openssl rand -hex 32\`): every delivery must carry it in
the X-Evsync-Secret header (webhooks.secretHeader in the config); the database keeps only its hash. Set the service
up with \`evsync webhooks install --url <public url>\`.

While it runs, \`evsync status\` and \`evsync query\` from another shell are answered by it (a socket beside the
database), and the status page, /status.json and /metrics are on --admin-listen (loopback; any other address needs
EVSYNC_ADMIN_TOKEN, sent as "Authorization: Bearer <token>"). SIGINT/SIGTERM stop it cleanly; exit 0.

Examples:
  $ export EVSYNC_WEBHOOK_SECRET=$(openssl rand -hex 32)
  $ evsync serve --streams core --cron "*/15 * * * *"
  $ evsync serve --listen 127.0.0.1:9000 --reconcile-every 12
  $ evsync serve --admin-listen 127.0.0.1:9788        # the status page: open http://127.0.0.1:9788/`,
    )
    .action(action<ServeFlags>(app, serve));
}
