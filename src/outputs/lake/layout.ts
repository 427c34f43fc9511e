/**
 * Object keys of the lake. One Hive table location per table, partitioned by account, then by event:
 *
 *   <prefix>/<table>/account=<id>/event_id=<n>/<exportId>_<uuid>.parquet    event-scoped tables
 *   <prefix>/<table>/account=<id>/<exportId>_0.parquet                       account-scoped tables
 *   <prefix>/<table>/account=<id>/_evsync/manifest.json                      what is current (export-manifest.ts)
 *   <prefix>/history/<table>/account=<id>/...                                the table's history, laid out as the table
 *                                                                            (the rows of its history view:
 *                                                                            warehouse/copies/export-unchanged.ts)
 *   <prefix>/_evsync/leases/account=<id>.json                                who is writing this account (lease.ts)
 *
 * Why the table above the account (DESIGN.md sketched `account=<id>/<table>/...`): Hive partition discovery (Spark's
 * basePath, Trino's and Athena's partitioned_by with sync_partition_metadata / MSCK REPAIR, BigQuery's
 * hive_partition_uri_prefix) needs every folder under a table's location to be `key=value`; a table name between
 * two partition levels stops it. With this layout every engine reads `<prefix>/<table>/` as one table whose
 * `account` and `event_id` columns come from the path, so one query covers all accounts. Readers skip `_evsync`
 * (a leading `_` is hidden to Hive, Spark, Trino and Arrow; DuckDB and BigQuery globs end in `*.parquet`).
 */

/** An account id is a path segment and part of environment variable names: plain, short, lowercase. */
export const ACCOUNT_ID_RE = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export interface LakeLayout {
  /** Key prefix inside the bucket, without leading or trailing `/` ('' for the bucket root). */
  prefix: string;
  account: string;
}

function root(layout: LakeLayout): string {
  return layout.prefix === '' ? '' : `${layout.prefix}/`;
}

/** The account's part of one table: every key evsync writes for it starts with this (ends in `/`). */
export function tableRoot(layout: LakeLayout, table: string): string {
  return `${root(layout)}${table}/account=${layout.account}/`;
}

export function manifestKey(tableRootKey: string): string {
  return `${tableRootKey}_evsync/manifest.json`;
}

export function leaseKey(layout: LakeLayout): string {
  return `${root(layout)}_evsync/leases/account=${layout.account}.json`;
}
