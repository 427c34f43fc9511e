/**
 * One table to the lake, in the order that keeps readers whole:
 *
 *   1. stage: DuckDB writes the Parquet files into a local staging folder (the local exporter, so the files, names,
 *      row counts and hashes are the same as `export --out <dir>`);
 *   2. write-ahead: the manifest records the export as pending (its objects are evsync's even if this dies now);
 *   3. upload the new files under new names (nothing a reader uses is touched);
 *   4. commit: one PUT of the manifest makes them current and lists the replaced objects as obsolete;
 *   5. remove the replaced objects, then record that they are gone.
 *
 * Killed anywhere, the previous manifest or the new one is current and every object either names lists exists;
 * the next export removes the leftovers (recoverRemote) before writing.
 */

import { rmSync } from 'node:fs';
import { join } from 'node:path';
import pLimit from 'p-limit';
import type { Now } from '../../../schemas/clock.js';
import type { Manifest, ManifestFile } from '../../warehouse/copies/export-manifest.js';
import { readManifest } from '../../warehouse/copies/export-manifest.js';
import {
  historyOutputStream,
  includesDeleted,
  PARTITION_COLUMN,
  type PartFingerprints,
  partitionsToWrite,
} from '../../warehouse/copies/export-unchanged.js';
import type { Warehouse } from '../../warehouse/index.js';
import type { Lease } from './lease.js';
import { putManifest, type RemoteTable, recoverRemote } from './remote-table.js';
import type { ObjectStore } from './store.js';

/**
 * What the lake reads the warehouse through: the warehouse itself (export, sync --parquet-out) or a side connection
 * of it (the daemon's publisher, which must not wait behind the warehouse's queue).
 */
export type ParquetSource = Pick<Warehouse, 'listTables' | 'exportParquet' | 'partFingerprints'>;

export interface PublishContext {
  warehouse: ParquetSource;
  store: ObjectStore;
  lease: Lease;
  /** Owner-only folder beside the database; this table's files are staged in a fresh folder under it. */
  stagingDir: string;
  includeDeleted: boolean;
  runId: string | null;
  uploadConcurrency: number;
  /** The clock the manifests' times are read from. */
  now: Now;
  /** After each object is uploaded (key, bytes, parts), in upload order: progress lines and tests' kill points. */
  onUploaded?: ((key: string, bytes: number, parts: number) => void) | undefined;
}

export interface TablePublished {
  table: string;
  manifest: Manifest;
  /** This table's export id, or null when nothing needed rewriting. */
  exportId: string | null;
  uploaded: { files: number; bytes: number; parts: number };
  removed: number;
  /** Milliseconds spent staging (DuckDB writing the files locally) and uploading them. */
  ms: { stage: number; upload: number };
}

/**
 * Event partitions to replace: null for the whole table, [] for nothing. Of those asked for (or of all, for a table
 * asked whole), a partition whose objects were written from the rows the warehouse holds now (their recorded
 * source, export-unchanged.ts) and are all still in the lake is left out: nothing staged, nothing uploaded.
 *
 * The sources are read here, before the staging export copies (which reads them again for the files it writes): a
 * write landing between is one whose partition is said touched after it commits, so the next publish sees it.
 */
async function partitionsToReplace(
  remote: RemoteTable,
  manifest: Manifest,
  only: number[] | null,
  live: () => Promise<PartFingerprints | null>,
  includeDeleted: boolean,
): Promise<number[] | null> {
  // A table new to the lake gets every partition, not just those a run touched; a change of includeDeleted
  // rewrites it whole so files with and without deleted rows never mix.
  if (remote.state !== 'owned' || manifest.includeDeleted !== includeDeleted) return null;
  const sizes = new Map(remote.objects.map((o) => [o.key.slice(remote.root.length), o.size]));
  const asked = manifest.partitionBy.includes(PARTITION_COLUMN) ? only : null;
  return partitionsToWrite(manifest.files, await live(), asked, (file) => sizes.get(file.path) === file.bytes);
}

/** What step 1 left in the staging folder: the new files and how the table is partitioned. */
interface StagedTable {
  table: string;
  /** This table's folder under the staging folder. */
  folder: string;
  exportId: string;
  files: ManifestFile[];
  partitionBy: string[];
  ms: number;
}

/** Step 1: DuckDB writes the table's Parquet files (the partitions in `only`, or all) into the staging folder. */
async function stageTable(
  ctx: PublishContext,
  table: string,
  folder: string,
  only: number[] | null,
): Promise<StagedTable> {
  const started = performance.now();
  const staged = await ctx.warehouse.exportParquet({
    out: ctx.stagingDir,
    tables: [table],
    ...(only !== null ? { partitions: [{ table, eventIds: only }] } : {}),
    includeDeleted: ctx.includeDeleted,
    runId: ctx.runId,
    // A stream's history is a table of the lake of its own (`history/<stream>`), staged and committed apart.
    history: false,
  });
  const local = readManifest(folder, table);
  if (!local.ok) throw new Error(`staging ${folder}: ${local.problem}`);
  return {
    table,
    folder,
    exportId: staged.exportId,
    files: local.manifest.files,
    partitionBy: local.manifest.partitionBy,
    ms: performance.now() - started,
  };
}

/** Step 3: the new files under new names, `uploadConcurrency` at a time, the lease renewed as they go. */
async function uploadStaged(
  ctx: PublishContext,
  root: string,
  staged: StagedTable,
): Promise<TablePublished['uploaded']> {
  const uploaded = { files: 0, bytes: 0, parts: 0 };
  const limit = pLimit(ctx.uploadConcurrency);
  await Promise.all(
    staged.files.map((file) =>
      limit(async () => {
        const key = `${root}${file.path}`;
        const parts = await ctx.store.upload(key, join(staged.folder, file.path), file.bytes);
        uploaded.files += 1;
        uploaded.bytes += file.bytes;
        uploaded.parts += parts;
        ctx.onUploaded?.(key, file.bytes, parts);
        await ctx.lease.renewIfDue();
      }),
    ),
  );
  return uploaded;
}

/**
 * Step 4: the manifest that makes the new files current: the replaced ones (the partitions in `only`, or every
 * file) leave `files` for `obsolete`.
 */
function committedManifest(
  ctx: PublishContext,
  manifest: Manifest,
  staged: StagedTable,
  only: number[] | null,
): Manifest {
  const partitioned = staged.partitionBy.includes(PARTITION_COLUMN);
  const replaced = (file: ManifestFile) =>
    only === null ||
    !partitioned ||
    (file.partition[PARTITION_COLUMN] !== undefined && only.includes(Number(file.partition[PARTITION_COLUMN])));
  return {
    ...manifest,
    updatedAt: new Date(ctx.now()).toISOString(),
    exportId: staged.exportId,
    runId: ctx.runId,
    partitionBy: staged.partitionBy,
    includeDeleted: includesDeleted(staged.table, ctx.includeDeleted),
    files: [...manifest.files.filter((file) => !replaced(file)), ...staged.files],
    // Object stores have no folders: nothing to record or remove.
    folders: [],
    pending: manifest.pending.filter((id) => id !== staged.exportId),
    obsolete: manifest.files.filter(replaced).map((file) => file.path),
  };
}

/**
 * Publishes one table of the lake: a stream's (`registrants`) or a stream's history (`history/registrants`,
 * export-unchanged.ts). Null when `table` is the history of a stream that keeps none (nothing read or written).
 */
export async function publishTable(
  ctx: PublishContext,
  table: string,
  remote: RemoteTable,
  requestedOnly: number[] | null,
): Promise<TablePublished | null> {
  const { store, lease } = ctx;
  const includeDeleted = includesDeleted(table, ctx.includeDeleted);
  let sources: Promise<PartFingerprints | null> | null = null;
  const live = () => {
    sources ??= ctx.warehouse.partFingerprints(table, includeDeleted);
    return sources;
  };
  if (historyOutputStream(table) !== null && (await live()) === null) return null;
  let manifest = await recoverRemote(store, remote, table, new Date(ctx.now()));
  const only = await partitionsToReplace(remote, manifest, requestedOnly, live, includeDeleted);
  if (only !== null && only.length === 0) {
    const nothing = { files: 0, bytes: 0, parts: 0 };
    return { table, manifest, exportId: null, uploaded: nothing, removed: 0, ms: { stage: 0, upload: 0 } };
  }

  const folder = join(ctx.stagingDir, table);
  rmSync(folder, { recursive: true, force: true });
  try {
    const staged = await stageTable(ctx, table, folder, only);
    // Step 2, write-ahead: the export's objects are evsync's from here on, even if this process dies.
    manifest = { ...manifest, pending: [...manifest.pending, staged.exportId] };
    await putManifest(store, remote.root, manifest);

    const uploadStart = performance.now();
    const uploaded = await uploadStaged(ctx, remote.root, staged);
    const uploadMs = performance.now() - uploadStart;
    await lease.assertHeld();
    manifest = committedManifest(ctx, manifest, staged, only);
    await putManifest(store, remote.root, manifest);

    // Step 5: the replaced objects go, then the manifest says they are gone.
    const obsolete = manifest.obsolete;
    if (obsolete.length > 0) {
      await store.remove(obsolete.map((rel) => `${remote.root}${rel}`));
      manifest = { ...manifest, obsolete: [] };
      await putManifest(store, remote.root, manifest);
    }
    const ms = { stage: staged.ms, upload: uploadMs };
    return { table, manifest, exportId: staged.exportId, uploaded, removed: obsolete.length, ms };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
