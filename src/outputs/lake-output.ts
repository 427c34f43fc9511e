/**
 * The lake as an output (`export --out s3://...`, `sync --parquet-out s3://...`, the daemon's publisher): the store
 * opened from the config's `lake` block, the account's id, the staging folder beside the database, and the lake's
 * errors said with `lake:`. The AWS SDK is loaded only when a store is opened (s3-store.ts).
 */
import { lakeStagingPathOf } from '../warehouse/copies/own-files.js';
import { outputError } from './errors.js';
import { exportToLake, type LakeExportResult } from './lake/export-lake.js';
import type { ObjectStore } from './lake/store.js';
import { leaseTtlMs, type OutputLog, type OutputSettings } from './settings.js';
import type { ExportTarget } from './target.js';
import { type OutputWriter, type ParquetSource, selectionOf, type WriteRequest, type Written } from './writer.js';

type S3Target = Extract<ExportTarget, { kind: 's3' }>;

const DEFAULT_PART_MIB = 16;
const DEFAULT_UPLOADS = 4;

/** How to reach the lake: the store and what every export into it is told. */
export interface LakeAccess {
  store: ObjectStore;
  account: string;
  /** Owner-only staging folder beside the database. */
  stagingDir: string;
  leaseTtlMs: number;
  uploadConcurrency: number;
  /** Recorded in the lease for whoever is refused, e.g. `evsync serve`. */
  command: string;
}

/** `.evsync.duckdb.lake-staging` beside `evsync.duckdb`: same disk, same owner, one per database. */
export function stagingDirFor(db: string): string {
  return lakeStagingPathOf(db);
}

/** The lake's store for `target`, with the lake's settings (endpoint, region, path style, profile, part size). */
export async function openLakeStoreFor(settings: OutputSettings, target: S3Target): Promise<ObjectStore> {
  const lake = settings.lake;
  const { openS3Store } = await import('./lake/s3-store.js');
  return openS3Store({
    bucket: target.bucket,
    endpoint: lake.endpoint,
    region: lake.region,
    forcePathStyle: lake.forcePathStyle,
    profile: lake.profile ?? (settings.env.AWS_PROFILE?.trim() || undefined),
    partSizeBytes: (lake.partSizeMiB ?? DEFAULT_PART_MIB) * 1024 * 1024,
    partConcurrency: 4,
    env: settings.env,
  });
}

/** A lake error as the user reads it: `lake: ...`, its verdict kept (refused: exit 2; the rest: exit 1). */
export function lakeError(err: unknown): Error {
  return outputError('lake', err);
}

/** Refuses before a sync spends credits when another writer holds this account's lease (taken for real later). */
export async function refuseIfLeaseHeld(settings: OutputSettings, target: S3Target): Promise<void> {
  const { leaseKey } = await import('./lake/layout.js');
  const { liveLease, leaseRefusal } = await import('./lake/lease.js');
  let store: ObjectStore | null = null;
  try {
    store = await openLakeStoreFor(settings, target);
    const key = leaseKey({ prefix: target.prefix, account: settings.account });
    const held = await liveLease(store, key, settings.now());
    if (held) throw leaseRefusal(store, key, held);
  } catch (err) {
    throw lakeError(err);
  } finally {
    store?.close();
  }
}

/** The lake reached from the config, for `command`; the caller closes `store` (the writer's release does). */
export async function openLake(settings: OutputSettings, target: S3Target, command: string): Promise<LakeAccess> {
  try {
    return {
      store: await openLakeStoreFor(settings, target),
      account: settings.account,
      stagingDir: stagingDirFor(settings.db),
      leaseTtlMs: leaseTtlMs(settings),
      uploadConcurrency: settings.lake.uploadConcurrency ?? DEFAULT_UPLOADS,
      command,
    };
  } catch (err) {
    throw lakeError(err);
  }
}

/** Writes into the lake under `prefix` through `access`; releasing closes its store. */
export function lakeWriter(
  prefix: string,
  access: LakeAccess,
  context: { now: OutputSettings['now']; log: OutputLog },
): OutputWriter {
  return {
    // A table new to the lake is written whole by every export (publish.ts): nothing to do at start.
    missingTables: () => [],
    async write(source: ParquetSource, request: WriteRequest): Promise<Written> {
      let uploaded = 0;
      const report = await exportToLake(source, {
        ...access,
        prefix,
        ...selectionOf(request),
        includeDeleted: request.includeDeleted === true,
        force: request.force === true,
        runId: request.runId ?? null,
        now: context.now,
        log: context.log,
        onUploaded: (key, bytes, parts) => {
          uploaded += 1;
          context.log('debug', `uploaded ${uploaded}: ${key} (${bytes} bytes${parts > 1 ? `, ${parts} parts` : ''})`);
        },
      });
      return { kind: 'lake', report };
    },
    async release() {
      access.store.close();
    },
  };
}

/** One line for people: what is current in the lake now. */
export function lakeSummary(url: string, r: LakeExportResult): string {
  const mb = (r.uploaded.bytes / 1024 / 1024).toFixed(1);
  const history = r.history.tables.length > 0 ? ` (and ${r.history.files} of their history under history/)` : '';
  return `exported ${r.tables.length} table(s) to ${url} (account=${r.account}): ${r.uploaded.files} file(s) uploaded (${mb} MiB), ${r.removed} replaced; ${r.files} Parquet file(s) current${history}: ${r.tables.join(', ') || 'none'}\n`;
}
