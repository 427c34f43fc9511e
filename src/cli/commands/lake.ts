/**
 * The CLI's side of the lake, shared by `export --out s3://...` and `sync/backfill --parquet-out s3://...`: settings
 * from the config's `lake` block, the account id, the staging folder beside the database, and the mapping of lake
 * errors to exit codes (refused: 2; lease held or store failure: 1). The lake modules and the AWS SDK are imported
 * only here and only when an s3:// target is used.
 */

import type { PublisherLake } from '../../daemon/publisher.js';
import type { LakeExportResult } from '../../lake/export-lake.js';
import type { ObjectStore } from '../../lake/store.js';
import type { ExportTarget } from '../../lake/target.js';
import type { PartitionSelection, Warehouse } from '../../warehouse/index.js';
import { lakeStagingPathOf } from '../../warehouse/own-files.js';
import type { Ctx } from '../context.js';
import { CliError, ExitCode, errorMessage, UsageError } from '../errors.js';

type S3Target = Extract<ExportTarget, { kind: 's3' }>;

const DEFAULT_LEASE_SECONDS = 900;
const DEFAULT_PART_MIB = 16;
const DEFAULT_UPLOADS = 4;

/** How long a lease (the lake's, a local folder's) keeps other writers out without renewal: `lake.leaseSeconds`. */
export function leaseTtlMs(ctx: Ctx): number {
  return (ctx.config.values.lake?.leaseSeconds ?? DEFAULT_LEASE_SECONDS) * 1000;
}

/** The account's id in the lake: the selected one of `accounts`, else `lake.account`, else `default`. */
export function lakeAccount(ctx: Ctx): string {
  return ctx.config.account ?? ctx.config.values.lake?.account ?? 'default';
}

/** `.evsync.duckdb.lake-staging` beside `evsync.duckdb`: same disk, same owner, one per database. */
export function stagingDirFor(db: string): string {
  return lakeStagingPathOf(db);
}

export async function openLakeStore(ctx: Ctx, target: S3Target): Promise<ObjectStore> {
  const lake = ctx.config.values.lake ?? {};
  const { openS3Store } = await import('../../lake/s3-store.js');
  return openS3Store({
    bucket: target.bucket,
    endpoint: lake.endpoint,
    region: lake.region,
    forcePathStyle: lake.forcePathStyle,
    profile: lake.profile ?? (ctx.config.env.AWS_PROFILE?.trim() || undefined),
    partSizeBytes: (lake.partSizeMiB ?? DEFAULT_PART_MIB) * 1024 * 1024,
    partConcurrency: 4,
    env: ctx.config.env,
  });
}

/** A lake error as the CLI reports it: refusals are the user's to fix (exit 2), the rest fail the run (exit 1). */
export function lakeCliError(err: unknown): Error {
  if (err instanceof Error && err.name === 'LakeError') {
    const verdict = (err as Error & { verdict?: unknown }).verdict;
    if (verdict === 'refused') return new UsageError(`lake: ${err.message}`);
    return new CliError(`lake: ${err.message}`, ExitCode.Failure);
  }
  return err instanceof Error ? err : new Error(errorMessage(err));
}

export interface LakeRun {
  tables?: string[];
  partitions?: PartitionSelection[];
  includeDeleted?: boolean;
  force?: boolean;
  runId?: string | null;
  command: string;
}

/** Refuses before a sync spends credits when another writer holds this account's lease (taken for real later). */
export async function refuseIfLeaseHeld(ctx: Ctx, target: S3Target): Promise<void> {
  const { leaseKey } = await import('../../lake/layout.js');
  const { liveLease, leaseRefusal } = await import('../../lake/lease.js');
  let store: ObjectStore | null = null;
  try {
    store = await openLakeStore(ctx, target);
    const key = leaseKey({ prefix: target.prefix, account: lakeAccount(ctx) });
    const held = await liveLease(store, key, ctx.now());
    if (held) throw leaseRefusal(store, key, held);
  } catch (err) {
    throw lakeCliError(err);
  } finally {
    store?.close();
  }
}

export async function exportToLakeTarget(
  ctx: Ctx,
  warehouse: Warehouse,
  target: S3Target,
  run: LakeRun,
): Promise<LakeExportResult> {
  const lake = ctx.config.values.lake ?? {};
  const { exportToLake } = await import('../../lake/export-lake.js');
  let store: ObjectStore | null = null;
  try {
    store = await openLakeStore(ctx, target);
    let uploaded = 0;
    return await exportToLake(warehouse, {
      store,
      prefix: target.prefix,
      account: lakeAccount(ctx),
      stagingDir: stagingDirFor(ctx.config.db),
      ...(run.tables ? { tables: run.tables } : {}),
      ...(run.partitions ? { partitions: run.partitions } : {}),
      includeDeleted: run.includeDeleted === true,
      force: run.force === true,
      runId: run.runId ?? null,
      leaseTtlMs: leaseTtlMs(ctx),
      now: ctx.now,
      command: run.command,
      uploadConcurrency: lake.uploadConcurrency ?? DEFAULT_UPLOADS,
      log: (level, message) => ctx.log[level](message),
      onUploaded: (key, bytes, parts) => {
        uploaded += 1;
        ctx.log.debug(`uploaded ${uploaded}: ${key} (${bytes} bytes${parts > 1 ? `, ${parts} parts` : ''})`);
      },
    });
  } catch (err) {
    throw lakeCliError(err);
  } finally {
    store?.close();
  }
}

/**
 * The lake as the daemon's publisher reaches it (src/daemon/publisher.ts), from the same config as `export`: the
 * caller closes `store` once the publisher has stopped.
 */
export async function publisherLakeFor(ctx: Ctx, target: S3Target, command: string): Promise<PublisherLake> {
  const lake = ctx.config.values.lake ?? {};
  try {
    return {
      store: await openLakeStore(ctx, target),
      account: lakeAccount(ctx),
      stagingDir: stagingDirFor(ctx.config.db),
      leaseTtlMs: leaseTtlMs(ctx),
      uploadConcurrency: lake.uploadConcurrency ?? DEFAULT_UPLOADS,
      command,
    };
  } catch (err) {
    throw lakeCliError(err);
  }
}

/** One line for people: what is current in the lake now. */
export function lakeSummary(url: string, r: LakeExportResult): string {
  const mb = (r.uploaded.bytes / 1024 / 1024).toFixed(1);
  return `exported ${r.tables.length} table(s) to ${url} (account=${r.account}): ${r.uploaded.files} file(s) uploaded (${mb} MiB), ${r.removed} replaced; ${r.files} Parquet file(s) current: ${r.tables.join(', ') || 'none'}\n`;
}
