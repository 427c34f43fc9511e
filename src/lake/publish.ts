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
import type { Manifest, ManifestFile } from '../warehouse/export-manifest.js';
import { readManifest } from '../warehouse/export-manifest.js';
import type { Warehouse } from '../warehouse/index.js';
import type { Lease } from './lease.js';
import { putManifest, type RemoteTable, recoverRemote } from './remote-table.js';
import type { ObjectStore } from './store.js';

const PARTITION_COLUMN = 'event_id';

/**
 * What the lake reads the warehouse through: the warehouse itself (export, sync --parquet-out) or a side connection
 * of it (the daemon's publisher, which must not wait behind the warehouse's queue).
 */
export type ParquetSource = Pick<Warehouse, 'listTables' | 'exportParquet'>;

export interface PublishContext {
  warehouse: ParquetSource;
  store: ObjectStore;
  lease: Lease;
  /** Owner-only folder beside the database; this table's files are staged in a fresh folder under it. */
  stagingDir: string;
  includeDeleted: boolean;
  runId: string | null;
  uploadConcurrency: number;
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

/** Event partitions to replace: null for the whole table. */
function partitionsToReplace(remote: RemoteTable, manifest: Manifest, only: number[] | null, includeDeleted: boolean) {
  // A table new to the lake gets every partition, not just those a run touched; a change of includeDeleted
  // rewrites it whole so files with and without deleted rows never mix.
  if (only === null || remote.state !== 'owned' || manifest.includeDeleted !== includeDeleted) return null;
  return only;
}

export async function publishTable(
  ctx: PublishContext,
  table: string,
  remote: RemoteTable,
  requestedOnly: number[] | null,
): Promise<TablePublished> {
  const { store, lease } = ctx;
  let manifest = await recoverRemote(store, remote, table);
  const only = partitionsToReplace(remote, manifest, requestedOnly, ctx.includeDeleted);
  const nothing = {
    table,
    manifest,
    exportId: null,
    uploaded: { files: 0, bytes: 0, parts: 0 },
    removed: 0,
    ms: { stage: 0, upload: 0 },
  };
  if (only !== null && only.length === 0) return nothing;

  const staging = join(ctx.stagingDir, table);
  rmSync(staging, { recursive: true, force: true });
  try {
    const stageStart = performance.now();
    const staged = await ctx.warehouse.exportParquet({
      out: ctx.stagingDir,
      tables: [table],
      ...(only !== null ? { partitions: [{ table, eventIds: only }] } : {}),
      includeDeleted: ctx.includeDeleted,
      runId: ctx.runId,
    });
    const local = readManifest(staging, table);
    if (!local.ok) throw new Error(`staging ${staging}: ${local.problem}`);
    const exportId = staged.exportId;
    const stageMs = performance.now() - stageStart;
    const written: ManifestFile[] = local.manifest.files;
    const partitioned = local.manifest.partitionBy.includes(PARTITION_COLUMN);

    manifest = { ...manifest, pending: [...manifest.pending, exportId] };
    await putManifest(store, remote.root, manifest);

    const uploaded = { files: 0, bytes: 0, parts: 0 };
    const limit = pLimit(ctx.uploadConcurrency);
    const uploadStart = performance.now();
    await Promise.all(
      written.map((f) =>
        limit(async () => {
          const key = `${remote.root}${f.path}`;
          const parts = await store.upload(key, join(staging, f.path), f.bytes);
          uploaded.files += 1;
          uploaded.bytes += f.bytes;
          uploaded.parts += parts;
          ctx.onUploaded?.(key, f.bytes, parts);
          await lease.renewIfDue();
        }),
      ),
    );

    const uploadMs = performance.now() - uploadStart;
    await lease.assertHeld();
    const replaced = (f: ManifestFile) =>
      only === null ||
      !partitioned ||
      (f.partition[PARTITION_COLUMN] !== undefined && only.includes(Number(f.partition[PARTITION_COLUMN])));
    const obsolete = manifest.files.filter(replaced).map((f) => f.path);
    manifest = {
      ...manifest,
      updatedAt: new Date().toISOString(),
      exportId,
      runId: ctx.runId,
      partitionBy: local.manifest.partitionBy,
      includeDeleted: ctx.includeDeleted,
      files: [...manifest.files.filter((f) => !replaced(f)), ...written],
      // Object stores have no folders: nothing to record or remove.
      folders: [],
      pending: manifest.pending.filter((id) => id !== exportId),
      obsolete,
    };
    await putManifest(store, remote.root, manifest);

    if (obsolete.length > 0) {
      await store.remove(obsolete.map((rel) => `${remote.root}${rel}`));
      manifest = { ...manifest, obsolete: [] };
      await putManifest(store, remote.root, manifest);
    }
    return { table, manifest, exportId, uploaded, removed: obsolete.length, ms: { stage: stageMs, upload: uploadMs } };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
