/**
 * The one daemon behind `evsync serve` and `evsync schedule` (schedule is serve without the webhook receiver): one
 * lifecycle for both, composed from a command's context out of the daemon's parts (src/daemon: the reconcile loop,
 * heartbeat, socket, queries, admin server, publisher) and the command line's own (the scheduler, the status
 * document and page, the publish flags). The commands themselves only declare their flags and call `runDaemon`.
 * - It opens the warehouse for writing once and holds it, and so DuckDB's lock, until it exits: no `query`,
 *   `status` or other reader acting through it can make it let go, and a second writer (`sync`, `export`,
 *   `backfill`, another daemon) is refused naming this process.
 * - Readers are never blocked: `status` and `query` from another shell are answered through its socket; queries run
 *   on a copy of the warehouse, on an instance of their own, bounded and cancellable (src/daemon/queries.ts).
 * - The scheduled runs follow the library's protocol (src/daemon/reconcile-loop.ts): the catch-up at start, the
 *   webhook-fed streams when due, the same engine and rules as `sync`.
 * - Its heartbeat in the warehouse says, at the next start, how long nothing listened.
 * - SIGINT/SIGTERM stop it in order (src/daemon/lifecycle.ts): deliveries refused (503, the service retries),
 *   queries cancelled, the run in flight finishes its page and saves state, then the database closes. Exit 0, or 3
 *   when a run was cut short.
 */
import type { Command } from 'commander';
import { DAEMON_DEFAULTS } from '../../schemas/daemon-settings.js';
import { ENGINE_DEFAULTS } from '../../schemas/engine-options.js';
import type { ApiClient } from '../api/index.js';
import type { Heartbeat } from '../daemon/heartbeat.js';
import { type DaemonParts, noParts, shutdown, startReceiver, untilAborted } from '../daemon/lifecycle.js';
import type { QueryService } from '../daemon/queries.js';
import { queryMetricsText } from '../daemon/query-metrics.js';
import { DEFAULT_QUERY_BOUNDS, DEFAULT_QUERY_QUEUE, DEFAULT_QUERY_WORKERS } from '../daemon/query-settings.js';
import type { ReconcileLoop } from '../daemon/reconcile-loop.js';
import { type DaemonSocket, startDaemonSocket } from '../daemon/socket.js';
import { holderName } from '../daemon/socket-protocol.js';
import type { SyncOptions } from '../sync/index.js';
import { queryCopyPathOf } from '../warehouse/copies/own-files.js';
import type { Warehouse } from '../warehouse/index.js';
import { ADMIN_TOKEN_ENV, adminSettings, startAdminServer } from './admin-server.js';
import { type Ctx, connection, createClient, openWarehouse, stopSignal } from './context.js';
import {
  checkPublishFlags,
  type DaemonPublisher,
  type PublishFlags,
  type PublishTargets,
  publishMetricsText,
  startDaemonPublisher,
} from './daemon-publish.js';
import { ExitCode, errorMessage } from './errors.js';
import { nonNegativeInt, positiveInt } from './options.js';
import { formatDuration, toJson } from './output/format.js';
import type { Logger } from './output/logger.js';
import { type RateLimitWait, waitLine } from './run-report.js';
import { type ScheduleFlags, scheduleRuns } from './scheduler.js';
import { recordCadence } from './status/cadence.js';
import { type DaemonStatus, type LiveStatus, type StatusReport, statusDocument } from './status/document.js';
import { creditMetricsText } from './status-page/credit-metrics.js';
import { liveReading, recordedReading, type WindowReading } from './status-page/sections.js';
import { type Cadence, waitingState } from './status-page/state.js';
import { syncOptionsFrom } from './sync-options.js';
import { type WebhookSettings, webhookSecret, webhookSettings } from './webhook-settings.js';

export interface DaemonFlags extends ScheduleFlags, PublishFlags {
  listen?: string;
  path?: string;
  reconcileEvery?: number;
  catchUp?: boolean;
  queryTimeout?: number;
  queryMaxRows?: number;
  queryWorkers?: number;
  queryQueue?: number;
  adminListen?: string;
}

interface DaemonKind {
  /** `serve` (with the webhook receiver) or `schedule` (polling only). */
  name: 'serve' | 'schedule';
  /** Cron expression when neither --cron nor schedule.cron is given (undefined: a usage error). */
  defaultCron?: string;
}

/** `--admin-listen`, `--query-timeout` and `--query-max-rows`: the ways in for people and their bounds. */
export function addQueryBoundOptions(cmd: Command): void {
  cmd
    .option(
      '--admin-listen <host:port|off>',
      `the status page, /status.json and /metrics (default ${DAEMON_DEFAULTS.adminListen}; another address needs ${ADMIN_TOKEN_ENV})`,
    )
    .option(
      '--query-timeout <seconds>',
      `longest a query through the daemon may take, waiting included (default ${DEFAULT_QUERY_BOUNDS.timeoutMs / 1000})`,
      positiveInt('a whole number > 0'),
    )
    .option(
      '--query-max-rows <n>',
      `most rows a query through the daemon may return (default ${DEFAULT_QUERY_BOUNDS.maxRows.toLocaleString('en-US')}; results over ${DEFAULT_QUERY_BOUNDS.maxBytes / 1048576} MB are refused too)`,
      positiveInt('a whole number > 0'),
    )
    .option(
      '--query-workers <n>',
      `processes that run queries through the daemon, one query each at a time (default ${DEFAULT_QUERY_WORKERS})`,
      positiveInt('a whole number > 0'),
    )
    .option(
      '--query-queue <n>',
      `queries that may wait for a worker; past that a query is told at once to retry (default ${DEFAULT_QUERY_QUEUE})`,
      nonNegativeInt('a whole number >= 0'),
    );
}

/** What the daemon holds (src/daemon/lifecycle.ts), and the schedule freshness is judged against. */
interface Held extends DaemonParts<DaemonPublisher> {
  /** Known once the scheduler started. */
  cadence: Cadence | null;
}

/** Says where the daemon listens (and, with --json, as one line a supervisor can read). */
function announce(ctx: Ctx, kind: DaemonKind, held: Held, loop: ReconcileLoop): void {
  const { captured, polled } = loop.policy;
  const r = held.capture;
  const socket = held.socket as DaemonSocket;
  if (r) {
    ctx.log.info(
      `listening on ${r.url} (deliveries), ${r.origin}/healthz; ${captured.length} stream(s) fed by webhooks (${captured.join(', ') || 'none'}), ${polled.length} polled`,
    );
  } else ctx.log.info(`${kind.name}: ${polled.length} stream(s) polled on the schedule`);
  if (held.admin) ctx.log.info(`status page on ${held.admin.origin}/ (also /status.json, /metrics)`);
  ctx.log.info(`status and query from another shell are answered here (socket ${socket.path})`);
  // `schedule --json` prints one line per run and nothing else; serve's first line says where it listens.
  if (ctx.json && r) {
    const admin = held.admin ? { admin: held.admin.origin, metrics: `${held.admin.origin}/metrics` } : {};
    ctx.out.write(`${toJson({ listening: r.url, healthz: `${r.origin}/healthz`, ...admin, socket: socket.path })}\n`);
  }
}

/** How long nothing listened, from the previous daemon's heartbeat. */
function reportSilence(log: Logger, heartbeat: Heartbeat, catchUp: boolean): void {
  const silent = heartbeat.silentMs;
  if (silent === null) return;
  const what = catchUp
    ? 'the catch-up polls every selected stream, past events included'
    : '--no-catch-up: changes sent meanwhile may be missing until the next reconciliation';
  log.info(
    `the previous daemon's last heartbeat was ${formatDuration(silent)} ago (${heartbeat.previous?.toISOString()}): ${what}`,
  );
}

/** Waiting for the credit window: said as `sync` says it, for the daemon's life. */
function logWaits(client: ApiClient, log: Logger): () => void {
  const onWait = (w: RateLimitWait) => log.info(waitLine(w));
  client.on('wait', onWait);
  return () => client.off('wait', onWait);
}

/** The window as the daemon's client last heard it, else as the newest reading recorded here (one source for all). */
async function currentReading(kind: DaemonKind, held: Held): Promise<WindowReading | null> {
  const live = liveReading(held.client?.ledger.reading() ?? null, holderName(kind.name, process.pid));
  return live ?? recordedReading(await (held.warehouse as Warehouse).runs.lastLedger());
}

/** What the daemon knows now that the warehouse does not: the window, what waits for it, its schedule. */
function daemonLive(ctx: Ctx, kind: DaemonKind, held: Held, loop: ReconcileLoop): LiveStatus {
  const nowMs = ctx.now();
  const who = `${holderName(kind.name, process.pid)}, its ${loop.pending ? 'catch-up' : 'scheduled run'}`;
  const wait = held.capture?.applier.waitState(nowMs);
  return {
    reading: liveReading(held.client?.ledger.reading() ?? null, holderName(kind.name, process.pid)),
    waiting: waitingState(held.client?.ledger.waiting() ?? null, who, nowMs),
    deliveriesWaiting: wait?.waiting
      ? { pending: wait.pending, oldestSeconds: wait.oldestPendingSeconds, until: wait.resetAt?.toISOString() ?? null }
      : null,
    cadence: held.cadence,
  };
}

/** The status document with the daemon's live state: what the socket, the page and `/status.json` answer. */
function daemonStatus(ctx: Ctx, kind: DaemonKind, held: Held, loop: ReconcileLoop) {
  return async (runs: number): Promise<StatusReport> => {
    const live = daemonLive(ctx, kind, held, loop);
    const report = await statusDocument(ctx, held.warehouse as Warehouse, runs, live);
    const daemon: DaemonStatus = {
      lastHeartbeat: report.daemon?.lastHeartbeat ?? null,
      catchUpPendingSince: loop.pending ? (report.daemon?.catchUpPendingSince ?? null) : null,
      command: kind.name,
      pid: process.pid,
      queriesRunning: held.queries?.active ?? 0,
      ...(held.queries ? { queries: held.queries.load } : {}),
      ...(held.publisher ? { publish: held.publisher.stats() } : {}),
    };
    return { ...report, servedBy: holderName(kind.name, process.pid), daemon };
  };
}

/** `/metrics`: change capture's (serve), the credit window (as the page shows it), the publisher's, the queries. */
async function metricsText(ctx: Ctx, kind: DaemonKind, held: Held): Promise<string> {
  const { captureMetricsText } = await import('../sync/capture/server.js');
  const waiting = waitingState(held.client?.ledger.waiting() ?? null, holderName(kind.name, process.pid), ctx.now());
  const parts = [
    held.capture ? await captureMetricsText(held.capture, held.warehouse as Warehouse) : '',
    creditMetricsText(await currentReading(kind, held), waiting),
    held.publisher ? publishMetricsText(held.publisher.stats()) : '',
    queryMetricsText(held.queries),
  ];
  return parts.join('');
}

/** The socket's answers: status from the warehouse the daemon holds, queries through the bounded query service. */
function startSocket(ctx: Ctx, status: (runs: number) => Promise<StatusReport>, queries: QueryService) {
  return startDaemonSocket(ctx.config.db, async (request, clientGone) =>
    request.op === 'status' ? status(request.runs) : queries.query(request, clientGone),
  );
}

/** DuckDB's memory for a daemon that publishes (why: schemas/daemon-settings.ts). */
const PUBLISHING_MEMORY_LIMIT = DAEMON_DEFAULTS.publisher.memoryLimit;

function publishing(flags: DaemonFlags): boolean {
  return flags.parquetOut !== undefined || flags.snapshot !== undefined;
}

/** What the daemon is started with, read and checked before anything opens (a usage error costs nothing). */
interface DaemonSetup {
  receiving: boolean;
  publish: PublishTargets;
  secret: string;
  settings: WebhookSettings;
  options: SyncOptions;
  /** Without webhooks there is nothing to catch up on: every run polls what it would have. */
  catchUp: boolean;
}

async function daemonSetup(ctx: Ctx, flags: DaemonFlags, kind: DaemonKind): Promise<DaemonSetup> {
  const receiving = kind.name === 'serve';
  const secret = receiving ? webhookSecret(ctx) : '';
  // webhookSettings refuses an address that does not parse (a usage error), before anything starts.
  const settings = webhookSettings(ctx, flags);
  const options = syncOptionsFrom(ctx, flags, 'incremental');
  const publish = checkPublishFlags(ctx, flags);
  adminSettings(ctx, flags.adminListen); // checked now: a refused address spends nothing
  return { receiving, publish, secret, settings, options, catchUp: receiving && flags.catchUp !== false };
}

/**
 * How long the catch-up waits after the receiver started listening. A run polls up to its signpost, the server's
 * time minus `lagSeconds`: started at once, it would leave the last seconds before the start unpolled (changes made
 * while nothing listened, with their deliveries given up), to be found only at the next reconciliation, hours later.
 * Started once the receiver has listened longer than the lag, its signpost falls after the start: everything
 * before is polled, everything after is delivered.
 */
function catchUpDelayMs(setup: DaemonSetup, ctx: Ctx): number {
  const lag = setup.options.lagSeconds ?? ENGINE_DEFAULTS.lagSeconds;
  const ms = (lag + 1) * 1000;
  ctx.log.info(`catch-up in ${formatDuration(ms)}: once the receiver has listened longer than the ${lag} s lag`);
  return ms;
}

/** The run loop's view of the daemon: whether a run is in flight, and whether the stop cut one short. */
interface RunState {
  busy: boolean;
  cutShort: boolean;
}

/** Opens the warehouse and the client, then the receiver (serve) and the reconcile loop that polls beside it. */
async function openCore(
  ctx: Ctx,
  flags: DaemonFlags,
  kind: DaemonKind,
  setup: DaemonSetup,
  held: Held,
): Promise<ReconcileLoop> {
  const { ReconcileLoop } = await import('../daemon/reconcile-loop.js');
  const warehouse = await openWarehouse(
    ctx,
    publishing(flags) ? { memoryLimit: PUBLISHING_MEMORY_LIMIT, publishing: true } : {},
  );
  held.warehouse = warehouse;
  const client = await createClient(ctx, connection(ctx), flags);
  held.client = client;
  // As `sync` refuses it, before anything listens: a daemon on another account's warehouse would take deliveries it
  // cannot apply and fail every reconcile of its life. No call is made (exit 2).
  const { checkAccount } = await import('../sync/account.js');
  await checkAccount(client, warehouse, { bind: false });
  held.stopWaitLog = logWaits(client, ctx.log);
  const { CreditRecorder, DAEMON_CREDIT_LABEL } = await import('../sync/credit-recorder.js');
  held.credits = new CreditRecorder({
    ledger: client.ledger,
    warehouse,
    now: ctx.now,
    idleLabel: DAEMON_CREDIT_LABEL,
    onError: (err) => ctx.log.debug(`credit reading not recorded: ${errorMessage(err)}`),
  });
  // Before the receiver: every write it commits is owed to the readers.
  held.publisher = await startDaemonPublisher(ctx, setup.publish, warehouse, client, `evsync ${kind.name}`);
  const { settings, options } = setup;
  const loop = new ReconcileLoop({
    warehouse,
    streams: options.streams ?? 'core',
    webhooks: setup.receiving,
    everyHours: settings.reconcileEveryHours,
    catchUp: setup.catchUp,
    retentionDays: settings.retentionDays,
    log: (level, message) => ctx.log[level](message),
    now: ctx.now,
  });
  if (setup.receiving) {
    const publisher = held.publisher;
    held.capture = await startReceiver({
      warehouse,
      client,
      options,
      captured: loop.policy.captured,
      settings,
      secret: setup.secret,
      publisher,
      log: (level, message) => ctx.log[level](message),
    });
    loop.attach(held.capture);
  }
  return loop;
}

/** The readers' way in: the bounded query service and the socket that answers status and query. */
async function openReaders(ctx: Ctx, flags: DaemonFlags, kind: DaemonKind, held: Held, loop: ReconcileLoop) {
  const { QueryService } = await import('../daemon/queries.js');
  const warehouse = held.warehouse as Warehouse;
  held.queries = new QueryService({
    warehouse,
    copyPath: queryCopyPathOf(ctx.config.db),
    bounds: {
      ...(flags.queryTimeout ? { timeoutMs: flags.queryTimeout * 1000 } : {}),
      ...(flags.queryMaxRows ? { maxRows: flags.queryMaxRows } : {}),
    },
    ...(flags.queryWorkers ? { workers: flags.queryWorkers } : {}),
    ...(flags.queryQueue !== undefined ? { queueLength: flags.queryQueue } : {}),
    now: ctx.now,
  });
  const status = daemonStatus(ctx, kind, held, loop);
  held.socket = await startSocket(ctx, status, held.queries);
  const admin = adminSettings(ctx, flags.adminListen);
  if (admin) {
    const options = {
      status: () => status(10),
      metrics: () => metricsText(ctx, kind, held),
      log: (level: 'debug' | 'info' | 'warn', message: string) => ctx.log[level](message),
    };
    try {
      held.admin = await startAdminServer({ ...admin, ...options });
    } catch (err) {
      // The default port taken (another daemon on this machine): a free loopback port instead, said at start. An
      // address the user gave is theirs to fix.
      if (flags.adminListen !== undefined || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      held.admin = await startAdminServer({ ...admin, listen: '127.0.0.1:0', ...options });
      ctx.log.warn(`${admin.listen} is in use: the status page is on ${held.admin.origin}/ instead`);
    }
  }
}

/** What the catch-up owed at start will cost and how long it takes at the reported limit (a dry plan: no call). */
async function sayCatchUpCost(ctx: Ctx, setup: DaemonSetup, held: Held, loop: ReconcileLoop): Promise<void> {
  const planned = loop.plan();
  if (!planned) return;
  try {
    const { estimateCatchUp, estimateLine } = await import('../daemon/catch-up-estimate.js');
    const options = { ...setup.options, ...planned };
    ctx.log.info(estimateLine(await estimateCatchUp(held.client as ApiClient, held.warehouse as Warehouse, options)));
  } catch (err) {
    // A figure for the user, not a condition of the catch-up: it runs whatever the estimate met.
    ctx.log.debug(`catch-up estimate: ${errorMessage(err)}`);
  }
}

/** The heartbeat, the catch-up owed since the last one, and the cron loop of runs. */
async function startRuns(
  ctx: Ctx,
  flags: DaemonFlags,
  kind: DaemonKind,
  setup: DaemonSetup,
  held: Held,
  loop: ReconcileLoop,
  run: { state: RunState; signal: AbortSignal },
): Promise<void> {
  const { Heartbeat } = await import('../daemon/heartbeat.js');
  const warehouse = held.warehouse as Warehouse;
  held.heartbeat = await Heartbeat.start(warehouse, {
    now: ctx.now,
    onError: (err) => ctx.log.warn(`heartbeat: ${errorMessage(err)}`),
  });
  await loop.start(held.heartbeat.previous);
  reportSilence(ctx.log, held.heartbeat, setup.catchUp);
  if (loop.pending) await sayCatchUpCost(ctx, setup, held, loop);
  announce(ctx, kind, held, loop);
  held.scheduler = await scheduleRuns(
    ctx,
    { ...flags, runNow: setup.catchUp || flags.runNow === true },
    run.signal,
    {
      warehouse,
      client: held.client as ApiClient,
      label: setup.receiving ? 'reconcile' : 'run',
      ...(setup.catchUp ? { firstRunDelayMs: catchUpDelayMs(setup, ctx) } : {}),
      ...(kind.defaultCron ? { defaultCron: kind.defaultCron } : {}),
      // Every run records the credit window with the daemon's recorder (which goes on between runs).
      plan: () => loop.tick().map((next) => ({ ...next, ...(held.credits ? { creditRecorder: held.credits } : {}) })),
      onResult: async (result, startedAt, planned) => {
        run.state.cutShort = result.status === 'partial' && run.signal.aborted;
        await loop.after(result, startedAt, planned);
      },
    },
    (busy) => {
      run.state.busy = busy;
    },
  );
  await noteCadence(ctx, kind, setup, held, loop);
}

/** The schedule the streams are judged against: kept for the status document, and in the warehouse for later. */
async function noteCadence(ctx: Ctx, kind: DaemonKind, setup: DaemonSetup, held: Held, loop: ReconcileLoop) {
  const streams = loop.cadenceStreams();
  const pollSeconds = held.scheduler?.everySeconds ?? null;
  const reconcileSeconds = setup.receiving ? Math.round(setup.settings.reconcileEveryHours * 3600) : null;
  const source = holderName(kind.name, process.pid);
  held.cadence = { pollSeconds, reconcileSeconds, ...streams, source, running: true };
  const startedAt = new Date(ctx.now()).toISOString();
  const command = `evsync ${kind.name}`;
  await recordCadence(held.warehouse as Warehouse, { command, startedAt, pollSeconds, reconcileSeconds, ...streams });
}

/** Runs the daemon until SIGINT/SIGTERM (or the caller's stop signal). */
export async function runDaemon(ctx: Ctx, flags: DaemonFlags, kind: DaemonKind): Promise<number> {
  const setup = await daemonSetup(ctx, flags, kind);
  const state: RunState = { busy: false, cutShort: false };
  const stop = stopSignal(ctx, (why) =>
    ctx.log.warn(`${why}: stopping${state.busy ? ' after the page in flight (state is saved)' : ''}…`),
  );
  const held: Held = { ...noParts(), cadence: null };
  try {
    const loop = await openCore(ctx, flags, kind, setup, held);
    await openReaders(ctx, flags, kind, held, loop);
    await startRuns(ctx, flags, kind, setup, held, loop, { state, signal: stop.signal });
    await untilAborted(stop.signal);
  } finally {
    const summary = await shutdown(held, ctx.log);
    stop.dispose();
    if (summary) ctx.log.info(`${kind.name} stopped after ${summary.runs} run(s), ${summary.skipped} tick(s) skipped`);
    if (state.cutShort)
      ctx.log.warn('the run in flight was cut short: its state is saved and the next start resumes it');
  }
  // Known only once the run in flight has returned (shutdown waits for it).
  return state.cutShort ? ExitCode.Partial : ExitCode.Done;
}
