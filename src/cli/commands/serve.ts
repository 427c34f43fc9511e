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
import type { RunningCapture } from '../../sync/capture/index.js';
import type { SyncResult } from '../../sync/index.js';
import type { Warehouse } from '../../warehouse/index.js';
import { type App, action, type Ctx, connection, createClient, openWarehouse, stopSignal } from '../context.js';
import { type DaemonSocket, startDaemonSocket } from '../daemon.js';
import { ExitCode, errorMessage } from '../errors.js';
import { addBudgetOptions, addSelectionOptions, parseTimeZoneFlag } from '../options.js';
import { toJson } from '../output/format.js';
import { webhookSecret, webhookSettings } from '../webhook-settings.js';
import { type ScheduleFlags, type Scheduler, startScheduler } from './schedule.js';
import { collectStatus } from './status.js';
import { syncOptionsFrom } from './sync.js';

interface ServeFlags extends ScheduleFlags {
  listen?: string;
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

async function serve(ctx: Ctx, flags: ServeFlags): Promise<number> {
  const conn = connection(ctx);
  const secret = webhookSecret(ctx);
  const settings = webhookSettings(ctx, flags);
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
  let warehouse: Warehouse | null = null;
  let client: ApiClient | null = null;
  let running: RunningCapture | null = null;
  let socket: DaemonSocket | null = null;
  let scheduler: Scheduler | null = null;
  try {
    warehouse = await openWarehouse(ctx);
    const w = warehouse;
    client = await createClient(ctx, conn, flags);
    const c = client;
    running = await startCapture({
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
    });
    const r = running;
    socket = await startDaemonSocket(ctx.config.db, async (request) => {
      if (request.op === 'status') {
        return {
          ...(await collectStatus(w, ctx.config.db, request.runs)),
          servedBy: `evsync serve (PID ${process.pid})`,
        };
      }
      return w.capture.readQuery(request.sql, request.form, { allowRead: request.allowRead });
    });
    log.info(
      `listening on ${r.url} (deliveries), ${r.origin}/healthz, ${r.origin}/metrics; ${policy.captured.length} stream(s) fed by webhooks (${policy.captured.join(', ') || 'none'}), ${policy.polled.length} polled`,
    );
    if (ctx.json)
      ctx.out.write(
        `${toJson({ listening: r.url, healthz: `${r.origin}/healthz`, metrics: `${r.origin}/metrics`, socket: socket.path })}\n`,
      );

    const onResult = async (result: SyncResult, startedAt: Date): Promise<void> => {
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
    scheduler = await startScheduler(
      ctx,
      { ...flags, runNow: flags.catchUp !== false || flags.runNow === true },
      stop.signal,
      {
        warehouse: w,
        client: c,
        label: 'reconcile',
        defaultCron: DEFAULT_SERVE_CRON,
        plan: () => {
          const unhealthy = r.applier.failuresSinceReconcile > 0;
          const list = policy.next(unhealthy);
          if (list === null) log.debug('reconcile skipped: every selected stream is fed by webhooks, none due');
          return list === null ? null : { streams: list.join(',') };
        },
        onResult,
      },
      (b) => {
        busy = b;
      },
    );
    await new Promise<void>((resolve) => {
      if (stop.signal.aborted) resolve();
      else stop.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    return ExitCode.Done;
  } finally {
    // Deliveries first (503: the service retries them), then the run in flight, then the database.
    running?.receiver.close();
    const summary = await scheduler?.stop().catch(() => null);
    await running?.close().catch((err: unknown) => log.warn(`closing the receiver: ${errorMessage(err)}`));
    await socket?.close().catch(() => undefined);
    await client?.close().catch(() => undefined);
    await warehouse?.close().catch(() => undefined);
    stop.dispose();
    if (summary) log.info(`serve stopped after ${summary.runs} reconciliation run(s)`);
  }
}

export function registerServeCommand(program: Command, app: App): void {
  const cmd = program
    .command('serve')
    .description('the long-running form: webhook receiver and applier, scheduled reconciliation, /healthz, /metrics')
    .option('--listen <host:port>', 'address to listen on (default 127.0.0.1:8787; TLS belongs to a reverse proxy)')
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
database). SIGINT/SIGTERM stop it cleanly; exit 0.

Examples:
  $ export EVSYNC_WEBHOOK_SECRET=$(openssl rand -hex 32)
  $ evsync serve --streams core --cron "*/15 * * * *"
  $ evsync serve --listen 127.0.0.1:9000 --reconcile-every 12`,
    )
    .action(action<ServeFlags>(app, serve));
}
