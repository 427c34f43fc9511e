/**
 * The readers' outputs: the warehouse's tables published as Parquet for other tools, to a local folder or to the
 * lake on S3-compatible storage, one output chosen once from what names it (output.ts), written through one writer
 * by `export`, `sync --parquet-out` and the daemon's publisher, with one shape of a touched partition
 * (partition.ts). lake/ holds the lake (store, lease, manifests, upload) and the folder's ownership; the SQL that
 * writes the files stays in src/warehouse.
 *
 * For library users: the lake (lake/index.ts) and `parseTarget`. Importing this loads no AWS SDK module.
 */
export * from './lake/index.js';
export { type ExportTarget, parseTarget } from './target.js';
