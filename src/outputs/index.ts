/**
 * The readers' outputs: the warehouse's tables published as Parquet for other tools, to a local folder or to the
 * lake on S3-compatible storage, one output chosen once from what names it (output.ts), written through one writer
 * by `export`, `sync --parquet-out` and the daemon's publisher, with one shape of a touched partition
 * (partition.ts). lake/ holds the lake (store, lease, manifests, upload) and the folder's ownership; the SQL that
 * writes the files stays in src/warehouse.
 *
 * For library users: `exportToLake(warehouse, { store: await openS3Store({...}), prefix, account, ... })`.
 * Importing this loads no AWS SDK module; openS3Store loads it when called.
 */
export { LakeError, type LakeVerdict } from './lake/errors.js';
export { exportToLake, type LakeExportOptions, type LakeExportResult } from './lake/export-lake.js';
export {
  checkFolder,
  claimFolder,
  FolderClaim,
  type FolderClaimOptions,
  type FolderWriter,
} from './lake/folder-claim.js';
export { ACCOUNT_ID_RE, leaseKey, manifestKey, tableRoot } from './lake/layout.js';
export { Lease, type LeaseBody } from './lake/lease.js';
export { openS3Store, type S3Settings } from './lake/s3-store.js';
export type { ObjectStore } from './lake/store.js';
export { type ExportTarget, parseTarget } from './target.js';
