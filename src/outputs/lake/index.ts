/**
 * The lake on S3-compatible storage, and a local folder's ownership by the same lease: staging, upload, one manifest
 * per table and account, the account's lease (export-lake.ts, publish.ts, lease.ts), a folder's owner record and
 * lease (folder-claim.ts). For library users: `exportToLake(warehouse, { store: await openS3Store({...}), prefix,
 * account, ... })`. Importing this loads no AWS SDK module; openS3Store loads it when called.
 */
export { LakeError, type LakeVerdict } from './errors.js';
export { exportToLake, type LakeExportOptions, type LakeExportResult } from './export-lake.js';
export {
  checkFolder,
  claimFolder,
  FolderClaim,
  type FolderClaimOptions,
  type FolderWriter,
} from './folder-claim.js';
export { ACCOUNT_ID_RE, leaseKey, manifestKey, tableRoot } from './layout.js';
export { Lease, type LeaseBody } from './lease.js';
export { openS3Store, type S3Settings } from './s3-store.js';
export type { ObjectStore } from './store.js';
