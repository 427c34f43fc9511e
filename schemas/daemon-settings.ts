/**
 * The daemon's and its publisher's defaults (`evsync serve`, `evsync schedule`), declared once and checked against
 * their schema when this module loads (a wrong default fails at once): the receiver's address and limits, the
 * reconcile cadence, the heartbeat, the queries through the daemon, the admin address, the publish cadence. The
 * components apply them, the commands' `--help` reads them from here, and the README's option tables say the same.
 */
import { z } from 'zod';
import { nonNegativeInt, nonNegativeNumber, positiveInt } from './numbers.js';

const listen = z.string().regex(/^(\[[^\]]+\]|[^:\s]*):\d{1,5}$/);
const path = z.string().regex(/^\/[^\s?#]*$/);
const positiveNumber = z.number().positive();
const memoryLimit = z.string().regex(/^\d+(KB|MB|GB)$/);

const daemonSettingsSchema = z.strictObject({
  /** `serve`'s schedule when neither --cron nor schedule.cron is given (`schedule` has none: it needs one). */
  serveCron: z.string().min(1),
  /** Webhook-fed streams are polled at most this often while deliveries are healthy (`--reconcile-every`). */
  reconcileEveryHours: nonNegativeNumber(),
  /** The share of each rate-limit window the catch-up leaves to the ticks and the applier's re-reads. */
  catchUpLeaves: z.number().min(0).max(1),
  /** How often the daemon writes its heartbeat to `_evsync.meta`, in milliseconds. */
  heartbeatMs: positiveInt(),
  /** The status page, /status.json and /metrics (`--admin-listen`). */
  adminListen: listen,
  /** The webhook receiver, and the management API `webhooks install` calls (`webhooks` in the config file). */
  webhooks: z.strictObject({
    /** `--listen`: TLS belongs to a reverse proxy in front. */
    listen,
    /** `--path`: where deliveries are POSTed. */
    path,
    /** The header carrying the shared secret. */
    secretHeader: z.string().min(1),
    /** The largest delivery body accepted, in bytes. */
    maxBodyBytes: positiveInt(),
    /** The webhook group `webhooks install` creates. */
    groupName: z.string().min(1),
    /** Journaled deliveries (they hold personal data) are removed this many days after they were settled. */
    journalRetentionDays: nonNegativeNumber(),
    /** The management API's paths, which the spec does not show. */
    paths: z.strictObject({ webhooks: path, groups: path }),
  }),
  /** Queries through the daemon (src/daemon/queries.ts). */
  queries: z.strictObject({
    /** Worker processes (`--query-workers`): one per core of a 2-core machine. */
    workers: positiveInt(),
    /** Queries that may wait for a worker (`--query-queue`): a dashboard of twenty tiles fits, with room. */
    queue: nonNegativeInt(),
    /** Longest a query may take from its arrival, in milliseconds (`--query-timeout`, in seconds). */
    timeoutMs: positiveInt(),
    /** Most rows a result may have (`--query-max-rows`). */
    maxRows: positiveInt(),
    /**
     * The largest result, as JSON text (counted in characters, as the query service counts a result and as the
     * client reads the answer off the socket): the service's byte bound and the client's read bound both follow it,
     * so the client never stops reading an answer the service allowed.
     */
    maxResultChars: positiveInt(),
    /** How long a cancelled query gets to stop through DuckDB's interrupt before its worker process is ended. */
    killGraceMs: positiveInt(),
    /** DuckDB's memory limit in a worker (there is no spill: a query that needs more fails, alone). */
    memoryLimit,
  }),
  /** The publisher of Parquet and the snapshot for readers (src/daemon/publisher.ts). */
  publisher: z.strictObject({
    /** How often changes are published to --parquet-out and --snapshot (`--publish-every`), in seconds. */
    everySeconds: positiveNumber,
    /**
     * DuckDB's memory for a daemon that publishes. A publish runs beside the applier and the runs on the same
     * instance, one partition (or snapshot part) per COPY on one thread. On `large` (bench/publish-large.ts, reader
     * freshness at --publish-every 5): at 100MB most publishes failed beside the applier's writes ("Out of Memory ...
     * failed to pin block"); at 160MB none failed but serve peaked at 476 MB of RSS; at 128MB, with small Parquet row
     * groups (export.ts, snapshot-parts.ts), none failed and serve peaked at 394-404 MB. It was 400MB while the
     * snapshot copied whole tables.
     */
    memoryLimit,
  }),
});

type DaemonSettings = z.output<typeof daemonSettingsSchema>;

export const DAEMON_DEFAULTS: DaemonSettings = daemonSettingsSchema.parse({
  serveCron: '*/15 * * * *',
  reconcileEveryHours: 6,
  catchUpLeaves: 0.25,
  heartbeatMs: 30_000,
  adminListen: '127.0.0.1:8788',
  webhooks: {
    listen: '127.0.0.1:8787',
    path: '/webhooks',
    secretHeader: 'X-Evsync-Secret',
    maxBodyBytes: 1024 * 1024,
    groupName: 'evsync',
    journalRetentionDays: 7,
    paths: { webhooks: '/webhooks', groups: '/webhook-groups' },
  },
  queries: {
    workers: 2,
    queue: 32,
    timeoutMs: 5 * 60_000,
    maxRows: 1_000_000,
    maxResultChars: 64 * 1024 * 1024,
    killGraceMs: 500,
    memoryLimit: '512MB',
  },
  publisher: { everySeconds: 60, memoryLimit: '128MB' },
});
