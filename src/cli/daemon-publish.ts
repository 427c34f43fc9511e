/**
 * What the daemon (`serve`, `schedule`) publishes for readers while it holds the warehouse: `--parquet-out` (a
 * folder or the lake) and `--snapshot` (a read-only DuckDB copy any DuckDB client opens), refreshed every
 * `--publish-every` seconds with what changed (src/daemon/publisher.ts). The applier's writes are told to the
 * publisher once committed; a run's are told by the warehouse as they are merged (each work item's pages when the
 * item completes, the daemon's runs merging item by item) or marked deleted, so a long run reaches readers as it goes.
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { DAEMON_DEFAULTS } from '../../schemas/daemon-settings.js';
import type { ApiClient } from '../api/index.js';
import type { Publisher, PublishStats } from '../daemon/publisher.js';
import type { Output } from '../outputs/output.js';
import type { Partition } from '../outputs/partition.js';
import type { Warehouse } from '../warehouse/index.js';
import type { Ctx } from './context.js';
import { UsageError } from './errors.js';
import { readOutputFlags } from './output-paths.js';
import { addSnapshotGraceOption, graceMsOf, type SnapshotGraceFlags } from './snapshot-grace.js';

export interface PublishFlags extends SnapshotGraceFlags {
  parquetOut?: string;
  snapshot?: string;
  publishEvery?: number;
}

/** Default cadence: a minute, so a burst of deliveries makes one publish, not one per delivery. */
const DEFAULT_PUBLISH_EVERY_SECONDS = DAEMON_DEFAULTS.publisher.everySeconds;

function seconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 1) throw new Error('expected a number of seconds >= 1');
  return n;
}

export function addPublishOptions(cmd: Command): void {
  cmd
    .option(
      '--parquet-out <dir|s3://bucket/prefix>',
      'keep Parquet of the tables fresh there (the partitions that changed, every --publish-every); a local folder is this warehouse’s alone (<dir>/_evsync/owner.json) and held by the daemon while it runs',
    )
    .option(
      '--snapshot <file>',
      'keep a read-only DuckDB catalogue there for other tools (views over Parquet parts in <file>.parts, only the changed parts written; replaced atomically; never inside --parquet-out, never a file of the warehouse)',
    )
    .option(
      '--publish-every <seconds>',
      `how often changes are published to --parquet-out and --snapshot (default ${DEFAULT_PUBLISH_EVERY_SECONDS})`,
      seconds,
    );
  addSnapshotGraceOption(cmd);
}

/** What the daemon publishes, read from its flags once. */
export interface PublishTargets {
  output: Output | null;
  snapshot: string | null;
  everyMs: number;
  /** `--snapshot-grace` in milliseconds, when given. */
  snapshotGraceMs: number | undefined;
}

/** The targets, read and checked once, before anything opens (a usage error spends nothing). */
export function checkPublishFlags(ctx: Ctx, flags: PublishFlags): PublishTargets {
  if (flags.publishEvery !== undefined && flags.parquetOut === undefined && flags.snapshot === undefined) {
    throw new UsageError('--publish-every: give --parquet-out or --snapshot (or both): there is nothing to publish');
  }
  const { output, snapshot } = readOutputFlags(ctx, {
    flag: '--parquet-out',
    target: flags.parquetOut,
    snapshot: flags.snapshot,
  });
  return {
    output,
    snapshot,
    everyMs: (flags.publishEvery ?? DEFAULT_PUBLISH_EVERY_SECONDS) * 1000,
    snapshotGraceMs: graceMsOf(flags),
  };
}

export interface DaemonPublisher {
  /** The applier committed a write to this partition. */
  touched(partition: Partition): void;
  stats(): PublishStats;
  stop(): Promise<void>;
}

/** The publisher's figures as Prometheus text (gauges and counters since the daemon started). */
export function publishMetricsText(p: PublishStats): string {
  const line = (name: string, type: 'gauge' | 'counter', help: string, value: number | null) =>
    `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name} ${value ?? 0}\n`;
  return [
    line('evsync_publish_total', 'counter', 'Publishes to --parquet-out/--snapshot completed.', p.publishes),
    line('evsync_publish_failures_total', 'counter', 'Publishes that failed.', p.failures),
    line(
      'evsync_publish_pending_partitions',
      'gauge',
      'Partitions changed and not yet published.',
      p.pendingPartitions,
    ),
    line('evsync_publish_running', 'gauge', '1 while a publish runs.', p.running ? 1 : 0),
    line(
      'evsync_publish_last_duration_seconds',
      'gauge',
      'Wall time of the last publish.',
      (p.lastDurationMs ?? 0) / 1000,
    ),
    line(
      'evsync_publish_last_cpu_seconds',
      'gauge',
      'CPU time of the process during the last publish.',
      (p.lastCpuMs ?? 0) / 1000,
    ),
    line('evsync_publish_last_bytes', 'gauge', 'Bytes the last publish wrote (Parquet and snapshot).', p.lastBytes),
    line('evsync_publish_cpu_seconds_total', 'counter', 'CPU time spent publishing.', p.totalCpuMs / 1000),
    line('evsync_publish_bytes_total', 'counter', 'Bytes written by publishes.', p.totalBytes),
  ].join('');
}

/**
 * Starts publishing (null when neither --parquet-out nor --snapshot is given). A local --parquet-out is the daemon's
 * for its whole life: its owner record checked (another warehouse's: exit 2, before anything listens) and its lease
 * taken at start, renewed on the publish cadence, given back at stop.
 */
export async function startDaemonPublisher(
  ctx: Ctx,
  targets: PublishTargets,
  warehouse: Warehouse,
  client: ApiClient,
  command: string,
): Promise<DaemonPublisher | null> {
  const { output, snapshot, everyMs, snapshotGraceMs } = targets;
  if (output === null && snapshot === null) return null;
  const { startPublisher } = await import('../daemon/publisher.js');
  const writer = output === null ? null : await output.hold(warehouse, { command, client }, everyMs);
  let publisher: Publisher;
  try {
    publisher = await startPublisher({
      warehouse,
      // Still this daemon's before each export into a folder; its owner recorded after the first.
      ...(writer ? { writer } : {}),
      ...(snapshot ? { snapshot } : {}),
      ...(snapshotGraceMs === undefined ? {} : { snapshotGraceMs }),
      everyMs,
      // A snapshot readers have never had is published whole at once, not at the first change.
      publishAllAtStart: snapshot !== null && !existsSync(snapshot),
      log: (level, message) => ctx.log[level](message),
      now: ctx.now,
      // A run's merges and delete marks, as they commit (the warehouse is open with `publishing`).
      followChanges: true,
    });
  } catch (err) {
    await writer?.release();
    throw err;
  }
  return {
    touched: (p) => publisher.touched(p.table, p.eventId === null ? 'all' : [p.eventId]),
    stats: () => publisher.stats(),
    async stop() {
      try {
        await publisher.stop();
      } finally {
        await writer?.release();
      }
    },
  };
}
