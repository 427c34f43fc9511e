/**
 * `exportToLake`: the warehouse's tables, each with its history beside it (`history/<table>`, layout.ts), into the
 * lake for one account, under that account's lease. Every table's
 * part of the lake is judged before anything is written (a refusal leaves the whole lake as it was), then the
 * tables are published one by one (publish.ts), each staged, uploaded and committed before the next is staged, so
 * the staging folder holds one table at a time.
 */

import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Now, systemNow } from '../../../schemas/clock.js';
import type { Manifest } from '../../warehouse/copies/export-manifest.js';
import { historyOutputId, historyOutputStream } from '../../warehouse/copies/export-unchanged.js';
import type { PartitionSelection } from '../../warehouse/index.js';
import { LakeError } from './errors.js';
import { ACCOUNT_ID_RE, leaseKey, tableRoot } from './layout.js';
import { Lease } from './lease.js';
import { type ParquetSource, type PublishContext, publishTable, type TablePublished } from './publish.js';
import { inspectRemoteTable, type RemoteTable } from './remote-table.js';
import type { ObjectStore } from './store.js';

const TABLE_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Marks a staging folder as evsync's, so clearing what a killed run left never removes anything else. */
const STAGING_MARK = '.evsync-lake-staging';

export interface LakeExportOptions {
  store: ObjectStore;
  /** Key prefix in the bucket ('' for the root). */
  prefix: string;
  account: string;
  /** Local folder for staging (beside the database); created owner-only, emptied before and after. */
  stagingDir: string;
  tables?: string[];
  /** Replace only these event partitions (tables new to the lake are written whole). */
  partitions?: PartitionSelection[];
  includeDeleted?: boolean;
  force?: boolean;
  runId?: string | null;
  /** How long the lease keeps other writers out without renewal. */
  leaseTtlMs: number;
  /** The clock of the lease and the manifests (default the machine's). */
  now?: Now;
  /** Recorded in the lease for whoever is refused (`evsync export`). */
  command: string;
  uploadConcurrency: number;
  log?: (level: 'info' | 'warn' | 'debug', message: string) => void;
  onUploaded?: (key: string, bytes: number, parts: number) => void;
}

export interface LakeExportResult {
  account: string;
  /** The stream tables exported. */
  tables: string[];
  /** Rows and files current in the lake per table (this account), as the manifests list them. */
  rows: Record<string, number>;
  files: number;
  /** The histories exported beside them (`history/<table>`: layout.ts), their rows (versions) and files. */
  history: { tables: string[]; rows: Record<string, number>; files: number };
  /** Per table, the export that rewrote it (absent: nothing to rewrite). */
  exportIds: Record<string, string>;
  uploaded: { files: number; bytes: number; parts: number };
  removed: number;
  warnings: string[];
  /** Where the time went: DuckDB staging the files, uploading them, and the rest (lease, listing, manifests). */
  ms: { stage: number; upload: number; other: number };
}

function prepareStaging(dir: string): void {
  if (existsSync(dir)) {
    if (!existsSync(join(dir, STAGING_MARK))) {
      throw new LakeError(`${dir} exists and is not evsync's staging folder; move it away`, 'refused');
    }
    // What a killed run left: every entry is a table folder evsync staged.
    for (const entry of readdirSync(dir)) if (entry !== STAGING_MARK) rmSync(join(dir, entry), { recursive: true });
    return;
  }
  mkdirSync(dir, { mode: 0o700 });
  chmodSync(dir, 0o700);
  writeFileSync(join(dir, STAGING_MARK), 'evsync stages lake uploads here; removed when they are done\n', {
    mode: 0o600,
  });
}

type LakeLog = NonNullable<LakeExportOptions['log']>;

/** The tables to export (all, the named ones, or those with partitions to replace); an unknown name is refused. */
async function tablesToExport(
  warehouse: ParquetSource,
  opts: LakeExportOptions,
): Promise<{ tables: string[]; partitions: Map<string, number[]> }> {
  const existing = await warehouse.listTables();
  const partitions = new Map<string, number[]>();
  for (const selection of opts.partitions ?? []) {
    partitions.set(selection.table, [...(partitions.get(selection.table) ?? []), ...selection.eventIds]);
  }
  const tables = opts.tables ?? (opts.partitions ? [...partitions.keys()] : existing);
  const unknown = tables.filter((table) => {
    const stream = historyOutputStream(table) ?? table;
    return !existing.includes(stream) || !TABLE_NAME_RE.test(stream);
  });
  if (unknown.length > 0) {
    throw new LakeError(
      `no such table: ${unknown.join(', ')} (tables: ${existing.join(', ') || 'none yet'})`,
      'refused',
    );
  }
  return { tables, partitions };
}

/** The account's lease; taking over one a dead writer left is said, since its leftovers are finished now. */
async function acquireLease(opts: LakeExportOptions, key: string, log: LakeLog): Promise<Lease> {
  const lease = await Lease.acquire(opts.store, key, {
    account: opts.account,
    ttlMs: opts.leaseTtlMs,
    command: opts.command,
    now: opts.now ?? systemNow,
  });
  const replaced = lease.replaced;
  if (replaced) {
    log(
      'warn',
      `took over the lake lease of ${replaced.command} on ${replaced.holder.host} (PID ${replaced.holder.pid}), which had ${
        Date.parse(replaced.expiresAt) <= (opts.now ?? systemNow)() ? `expired at ${replaced.expiresAt}` : 'exited'
      }; finishing what it left`,
    );
  }
  return lease;
}

function emptyResult(account: string): LakeExportResult {
  return {
    account,
    tables: [],
    rows: {},
    files: 0,
    history: { tables: [], rows: {}, files: 0 },
    exportIds: {},
    uploaded: { files: 0, bytes: 0, parts: 0 },
    removed: 0,
    warnings: [],
    ms: { stage: 0, upload: 0, other: 0 },
  };
}

/** Adds one published table to the export's totals (and warns of objects under it evsync did not write). */
function addPublished(result: LakeExportResult, remote: RemoteTable, done: TablePublished, store: ObjectStore): void {
  const table = done.table;
  const manifest: Manifest = done.manifest;
  const into = historyOutputStream(table) === null ? result : result.history;
  into.tables.push(table);
  into.rows[table] = manifest.files.reduce((rows, file) => rows + file.rows, 0);
  into.files += manifest.files.length;
  if (done.exportId) result.exportIds[table] = done.exportId;
  result.uploaded.files += done.uploaded.files;
  result.uploaded.bytes += done.uploaded.bytes;
  result.uploaded.parts += done.uploaded.parts;
  result.removed += done.removed;
  result.ms.stage += done.ms.stage;
  result.ms.upload += done.ms.upload;
  if (remote.state !== 'missing' && remote.foreign.length > 0) {
    result.warnings.push(
      `${store.describe(remote.root)}: ${remote.foreign.length} object(s) evsync did not write were left as they are (readers globbing *.parquet there read them too)`,
    );
  }
}

/** Judges every table's part of the lake, then publishes them one by one through the staging folder. */
async function publishTables(
  warehouse: ParquetSource,
  opts: LakeExportOptions,
  lease: Lease,
  tables: string[],
  partitions: Map<string, number[]>,
  log: LakeLog,
): Promise<LakeExportResult> {
  const layout = { prefix: opts.prefix, account: opts.account };
  const remotes: { table: string; remote: RemoteTable }[] = [];
  // Each stream's history beside it (`history/<stream>`; publishTable skips a stream that keeps none).
  const withHistories = [
    ...new Set(tables.flatMap((t) => (historyOutputStream(t) === null ? [t, historyOutputId(t)] : [t]))),
  ];
  for (const table of withHistories) {
    const remote = await inspectRemoteTable(opts.store, tableRoot(layout, table), table, opts.force === true);
    remotes.push({ table, remote });
  }
  prepareStaging(opts.stagingDir);
  const result = emptyResult(opts.account);
  const publishing: PublishContext = {
    warehouse,
    store: opts.store,
    lease,
    stagingDir: opts.stagingDir,
    includeDeleted: opts.includeDeleted === true,
    runId: opts.runId ?? null,
    uploadConcurrency: opts.uploadConcurrency,
    onUploaded: opts.onUploaded,
    now: opts.now ?? systemNow,
  };
  try {
    for (const { table, remote } of remotes) {
      // A history is asked for the partitions its stream is.
      const asked = partitions.has(table) ? table : (historyOutputStream(table) ?? table);
      const only = partitions.has(asked) ? (partitions.get(asked) ?? []) : null;
      const done = await publishTable(publishing, table, remote, only);
      if (!done) continue;
      addPublished(result, remote, done, opts.store);
      log('debug', `lake: ${table}: ${done.uploaded.files} file(s) uploaded, ${done.removed} replaced`);
    }
  } finally {
    rmSync(opts.stagingDir, { recursive: true, force: true });
  }
  return result;
}

export async function exportToLake(warehouse: ParquetSource, opts: LakeExportOptions): Promise<LakeExportResult> {
  if (!ACCOUNT_ID_RE.test(opts.account)) {
    throw new LakeError(`account id ${JSON.stringify(opts.account)}: expected 1-63 of a-z, 0-9, _ and -`, 'refused');
  }
  const log: LakeLog = opts.log ?? (() => {});
  const started = performance.now();
  const { tables, partitions } = await tablesToExport(warehouse, opts);
  const lease = await acquireLease(opts, leaseKey({ prefix: opts.prefix, account: opts.account }), log);
  try {
    const result = await publishTables(warehouse, opts, lease, tables, partitions, log);
    result.ms.other = performance.now() - started - result.ms.stage - result.ms.upload;
    return result;
  } finally {
    // A failed release must not hide why the export stopped; the lease then frees at its expiry.
    await lease.release().catch((err: unknown) => {
      log(
        'warn',
        `could not give back the lake lease (it frees at ${lease.expiresAt}): ${err instanceof Error ? err.message : String(err)}`,
      );
    });
  }
}
