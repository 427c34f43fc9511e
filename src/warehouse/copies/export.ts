/**
 * Parquet export: `<out>/<table>/event_id=<id>/*.parquet` (Hive layout) for tables with event_id,
 * `<out>/<table>/*.parquet` otherwise; zstd. Current rows only unless `includeDeleted`. Beside each stream that keeps
 * a history, its history: `<out>/history/<table>/...`, partitioned alike, the rows of the `history.<table>` view
 * (every version, deletes included; export-unchanged.ts, export-history.ts), written again only where they changed.
 *
 * evsync writes only what it owns (export-folder.ts): every table folder is checked before anything is written,
 * and each is marked by its manifest (export-manifest.ts). Files are never overwritten and no folder is ever
 * removed with its contents: an export writes new files under new names (`<exportId>_<uuid>.parquet`, written as
 * `.partial` and renamed once complete, so a reader never opens half a file), commits them to the manifest, then
 * removes the files they replace. A reader sees a partition doubled at most between the commit and the removal.
 * With `partitions`, only the listed event partitions are replaced; the others stay as they are (with
 * `newTablesWhole`, a table folder new to the output is written whole, as in the lake). Everything written is
 * owner-only (0600 files, 0700 folders): the files hold personal data.
 *
 * Which warehouse and account the whole folder belongs to (its owner record) and who writes it now (its lease) are
 * judged before this runs, by src/outputs/lake/folder-claim.ts, which the CLI and the daemon call around every export.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, closeSync, lstatSync, openSync, readSync, renameSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { type Db, holdOwnerOnlyUmask } from '../db/connection.js';
import { ident, literal } from '../db/sql.js';
import { listStreamTables, readTableColumns } from '../load/ddl.js';
import type { ExportOptions, ExportResult } from '../types.js';
import {
  ExportRefusedError,
  ensureFolder,
  folderError,
  inspectTableFolder,
  prepareTableFolder,
  removeFolderIfEmpty,
  removeOwnFile,
  type TableFolder,
  URL_SCHEME_RE,
} from './export-folder.js';
import { dropHistoryRows, materializeHistory } from './export-history.js';
import { type Manifest, type ManifestFile, writeManifest } from './export-manifest.js';
import {
  historyOutputId,
  historyOutputStream,
  historyOutputs,
  includesDeleted,
  NULL_PARTITION,
  PARTITION_COLUMN,
  type PartFingerprints,
  partFingerprints,
  partitionKey,
  partitionsToWrite,
} from './export-unchanged.js';

const TABLE_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
/**
 * Rows per Parquet row group: DuckDB holds a row group in memory (pinned) until it is written, and registrants' rows
 * are wide (their custom fields). A daemon publishes beside its applier under 128 MB (schemas/daemon-settings.ts):
 * with 32k-row groups some publishes ran out of it, with 4k none did, and serve's peak RSS on `large` stayed under
 * 400 MB (bench/publish-large.ts); an event's partition is still a few groups.
 */
const EXPORT_ROW_GROUP = 4_096;

/** Sortable and unique: `20240501T120000Z-1a2b3c4d`. Safe in DuckDB's FILENAME_PATTERN and in file names. */
function newExportId(now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${randomBytes(4).toString('hex')}`;
}

function partitionMap(partitions: ExportOptions['partitions']): Map<string, number[]> | null {
  if (!partitions) return null;
  const map = new Map<string, number[]>();
  const entries: [string, readonly number[]][] = Array.isArray(partitions)
    ? partitions.map((p) => [p.table, p.eventIds])
    : Object.entries(partitions);
  for (const [table, ids] of entries) {
    for (const id of ids) {
      if (!Number.isSafeInteger(id)) throw new Error(`export: partition event_id ${id} of ${table} is not an integer`);
    }
    map.set(table, [...new Set([...(map.get(table) ?? []), ...ids])]);
  }
  return map;
}

/** A file one COPY wrote: its rows and its Hive partition values (`{}` for a table written whole). */
interface CopyStat {
  filename: string;
  count: number;
  partition: Record<string, string>;
}

/** One buffer for every file's hash: a whole file read at once (up to megabytes each) left RSS raised for long. */
const HASH_CHUNK = Buffer.alloc(1 << 20);

function sha256(path: string): string {
  const hash = createHash('sha256');
  const fd = openSync(path, 'r');
  try {
    for (let n = readSync(fd, HASH_CHUNK); n > 0; n = readSync(fd, HASH_CHUNK)) hash.update(HASH_CHUNK.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

/**
 * Renames a completed `.partial` file to its final `.parquet` name, owner-only, and describes it for the manifest,
 * with the source of its partition as read before the COPY (`sources`).
 */
function finishFile(dir: string, stat: CopyStat, exportId: string, sources: PartFingerprints | null): ManifestFile {
  const finalPath = stat.filename.replace(/\.partial$/, '.parquet');
  chmodSync(stat.filename, 0o600);
  renameSync(stat.filename, finalPath);
  const source = sources?.get(partitionKey(stat));
  return {
    path: relative(dir, finalPath).split(sep).join('/'),
    partition: stat.partition,
    rows: stat.count,
    bytes: statSync(finalPath).size,
    sha256: sha256(finalPath),
    exportId,
    ...(source !== undefined ? { source } : {}),
  };
}

interface TableJob {
  /** The output id: a stream table, or `history/<stream>` (its history, export-unchanged.ts). */
  table: string;
  /** The stream history/<stream> is of; null for a stream's own output. */
  history: string | null;
  /** Whether its files hold deleted rows (export-unchanged.ts includesDeleted). */
  includeDeleted: boolean;
  folder: TableFolder;
  partitioned: boolean;
  /** Event partitions to replace; null: the whole table. */
  only: number[] | null;
  /** The table's partitions' sources, read before anything is written (export-unchanged.ts); null: unknown. */
  sources: PartFingerprints | null;
}

/** The table whole, into one file. */
async function copyWhole(
  db: Db,
  from: string,
  dir: string,
  includeDeleted: boolean,
  exportId: string,
): Promise<CopyStat[]> {
  const where = includeDeleted ? '' : `WHERE "_deleted_at" IS NULL`;
  const file = join(dir, `${exportId}_0.partial`);
  const result = await db.query(
    `COPY (SELECT * FROM ${from} ${where}) TO ${literal(file)}
       (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${EXPORT_ROW_GROUP})`,
  );
  return [{ filename: file, count: copiedRows(result.rows), partition: {} }];
}

/** The row count a COPY answers with (its one column). */
function copiedRows(rows: readonly Record<string, unknown>[]): number {
  return Number(Object.values(rows[0] ?? {})[0] ?? 0);
}

/**
 * The event partitions `only` (null: every event the relation `t` has), one COPY each into its Hive folder
 * (`event_id=<id>/`, the column in the folder name, not in the file, as DuckDB's PARTITION_BY writes it). One COPY
 * per partition instead of one PARTITION_BY over the table: DuckDB keeps a writer open per partition for the whole
 * COPY, and on `large` (52 events, 1M registrants) that ran out of the 160 MB a command gives it (issue 35); one
 * partition at a time holds one writer. A partition with no row left gets no file (its old files are removed).
 */
async function copyPartitions(
  db: Db,
  t: string,
  dir: string,
  only: readonly number[] | null,
  includeDeleted: boolean,
  exportId: string,
): Promise<CopyStat[]> {
  const live = includeDeleted ? 'true' : `"_deleted_at" IS NULL`;
  const ids: readonly (number | null)[] =
    only ??
    (await db.query(`SELECT DISTINCT "${PARTITION_COLUMN}" AS id FROM ${t} WHERE ${live} ORDER BY 1`)).rows.map((r) =>
      r.id === null || r.id === undefined ? null : Number(r.id),
    );
  const stats: CopyStat[] = [];
  for (const id of ids) {
    const value = id === null ? NULL_PARTITION : String(id);
    const folder = join(dir, `${PARTITION_COLUMN}=${value}`);
    // The folders this made (none when it was there): removed again if the partition has no row.
    const made = ensureFolder(folder).length > 0;
    const file = join(folder, `${exportId}_${randomBytes(8).toString('hex')}.partial`);
    const match = id === null ? `"${PARTITION_COLUMN}" IS NULL` : `"${PARTITION_COLUMN}" = ${id}`;
    // No RETURN_STATS (per-column statistics held for the answer): the COPY's own answer is its row count.
    const result = await db.query(
      `COPY (SELECT * EXCLUDE ("${PARTITION_COLUMN}") FROM ${t} WHERE ${live} AND ${match}) TO ${literal(file)}
         (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${EXPORT_ROW_GROUP})`,
    );
    const count = copiedRows(result.rows);
    if (count === 0) {
      rmSync(file, { force: true });
      if (made) rmdirSync(folder);
      continue;
    }
    stats.push({ filename: file, count, partition: { [PARTITION_COLUMN]: value } });
  }
  return stats;
}

async function writeTable(
  db: Db,
  job: TableJob,
  opts: ExportOptions,
  exportId: string,
): Promise<{ manifest: Manifest; bytes: number }> {
  const now = new Date(db.now());
  // `<out>/history/`, the histories' folder: a plain folder holding theirs (each a table folder with its manifest).
  if (job.history !== null && job.folder.state === 'missing') ensureFolder(dirname(job.folder.dir));
  let manifest = prepareTableFolder(job.folder, job.table, now);
  const dir = job.folder.dir;
  const includeDeleted = job.includeDeleted;
  // Files written with and without deleted rows must not mix: a change of that choice rewrites the whole table. (A
  // folder with no file yet mixes nothing: the lake's staging writes only the partitions it will replace.)
  const mixes = manifest.files.length > 0 && manifest.includeDeleted !== includeDeleted;
  const only = job.only !== null && !mixes ? job.only : null;

  // Write-ahead: files named after a pending export are evsync's, even if this process dies before the commit.
  manifest = { ...manifest, pending: [...manifest.pending, exportId] };
  writeManifest(dir, manifest);

  // A history's rows are the view's, whose windows run over each record's versions: computed once, for the
  // partitions written, into a temporary table the partitions are copied from (export-history.ts).
  const from = job.history === null ? `main.${ident(job.table)}` : await materializeHistory(db, job.history, only);
  let stats: CopyStat[];
  try {
    stats = job.partitioned
      ? await copyPartitions(db, from, dir, only, includeDeleted, exportId)
      : await copyWhole(db, from, dir, includeDeleted, exportId);
  } finally {
    if (job.history !== null) await dropHistoryRows(db, from);
  }
  const written = stats.map((s) => finishFile(dir, s, exportId, job.sources));

  const replaced = (f: ManifestFile) =>
    only === null ||
    (f.partition[PARTITION_COLUMN] !== undefined && only.includes(Number(f.partition[PARTITION_COLUMN])));
  const kept = manifest.files.filter((f) => !replaced(f));
  const obsolete = manifest.files.filter(replaced).map((f) => f.path);
  const newFolders = written.map((f) => f.path.split('/').slice(0, -1).join('/')).filter((p) => p !== '');
  for (const folder of new Set(newFolders)) chmodSync(join(dir, folder), 0o700);

  // The commit: from here the new files are the table; the replaced ones are listed for removal.
  manifest = {
    ...manifest,
    updatedAt: new Date(db.now()).toISOString(),
    exportId,
    runId: opts.runId ?? null,
    partitionBy: job.partitioned ? [PARTITION_COLUMN] : [],
    includeDeleted,
    files: [...kept, ...written],
    folders: [...new Set([...manifest.folders, ...newFolders])].sort(),
    pending: manifest.pending.filter((id) => id !== exportId),
    obsolete,
  };
  writeManifest(dir, manifest);

  for (const rel of obsolete) removeOwnFile(dir, rel);
  const live = new Set(manifest.files.map((f) => f.path.split('/').slice(0, -1).join('/')));
  // An event whose rows are all gone loses its folder, if evsync made it and nothing else is in it.
  const folders = manifest.folders.filter((f) => live.has(f) || !removeFolderIfEmpty(dir, f));
  manifest = { ...manifest, obsolete: [], folders };
  writeManifest(dir, manifest);
  return { manifest, bytes: written.reduce((n, f) => n + f.bytes, 0) };
}

/** A file the manifest lists, still in the folder as written (a file removed or replaced by hand is written again). */
function stillThere(dir: string, file: ManifestFile): boolean {
  const st = lstatSync(join(dir, file.path), { throwIfNoEntry: false });
  return st?.isFile() === true && st.size === file.bytes;
}

/**
 * Of the partitions asked for (`listed`; null: the table whole), those whose rows changed since the folder's files
 * were written from them ([]: nothing to write, not even the manifest). Only in a folder evsync owns whose files
 * hold the same rows (with or without deleted ones) as this export's would: anywhere else, `listed` as asked.
 */
function unchangedLeftOut(
  folder: TableFolder,
  listed: number[] | null,
  sources: PartFingerprints | null,
  includeDeleted: boolean,
): number[] | null {
  // (A history output with no history kept any more, sources null: written as asked, its files stay as they were.)
  if (folder.state !== 'owned' || folder.manifest.includeDeleted !== includeDeleted) return listed;
  const asked = folder.manifest.partitionBy.includes(PARTITION_COLUMN) ? listed : null;
  return partitionsToWrite(folder.manifest.files, sources, asked, (f) => stillThere(folder.dir, f));
}

/** One table's job, its folder judged (a refusal throws before anything is written); null: no such table. */
async function planTable(
  db: Db,
  dir: string,
  table: string,
  partitions: Map<string, number[]> | null,
  opts: ExportOptions,
): Promise<TableJob | null> {
  const history = historyOutputStream(table);
  const stream = history ?? table;
  // Names come from the database, but they also become folder names: keep them plain.
  if (!TABLE_NAME_RE.test(stream)) throw new Error(`export: table name ${stream} is not a plain identifier`);
  const columns = await readTableColumns(db, stream);
  if (!columns) return null;
  const partitioned = columns.has(PARTITION_COLUMN);
  const folder = inspectTableFolder(dir, table, opts.force === true);
  const includeDeleted = includesDeleted(table, opts.includeDeleted === true);
  // With newTablesWhole, a table new to the output gets every partition, not just those listed (as in the
  // lake): a reader of the folder must never find events missing from it. (The lake's own staging is always
  // a new folder, so this is not the default.) A history is asked for the partitions its stream is.
  const listed = partitioned ? (partitions?.get(table) ?? (history ? partitions?.get(stream) : null) ?? null) : null;
  // Read before any COPY of this export (see partFingerprints).
  const sources = await partFingerprints(db, table, includeDeleted);
  // A history the warehouse no longer keeps (turned off) is left as it was.
  if (history !== null && sources === null) return null;
  const only =
    opts.newTablesWhole === true && folder.state !== 'owned'
      ? null
      : unchangedLeftOut(folder, listed, sources, includeDeleted);
  return { table, history, includeDeleted, folder, partitioned, only, sources };
}

/** Writes the job's partitions; with none to write, its files stay as they are (no folder created, no byte). */
async function exportTable(
  db: Db,
  job: TableJob,
  opts: ExportOptions,
  exportId: string,
): Promise<{ manifest: Manifest | null; bytes: number }> {
  if (job.only === null || job.only.length > 0) return writeTable(db, job, opts, exportId);
  if (job.folder.state !== 'owned') return { manifest: null, bytes: 0 };
  // What an interrupted export left is still finished (its files are evsync's); without leftovers, nothing written.
  return { manifest: prepareTableFolder(job.folder, job.table, new Date(db.now())), bytes: 0 };
}

export async function exportParquet(db: Db, opts: ExportOptions): Promise<ExportResult> {
  if (typeof opts.out !== 'string' || opts.out.trim() === '') {
    // resolve('') is the current folder: an empty path must never mean "write here".
    throw new ExportRefusedError('export: no output folder given (an empty path would mean the current folder)', '');
  }
  // `s3://...` or any URL: never a local folder named `s3:` (object storage is written by exportToLake, src/outputs/lake).
  if (URL_SCHEME_RE.test(opts.out)) {
    throw new ExportRefusedError(
      `export: ${opts.out} is a URL, not a local folder; for s3:// use exportToLake (for a folder named like this, write ./${opts.out})`,
      opts.out,
    );
  }
  const out = resolve(opts.out);
  const existing = await listStreamTables(db);
  const histories = await historyOutputs(db, existing);
  const partitions = partitionMap(opts.partitions);
  const asked = opts.tables ?? (partitions ? [...partitions.keys()] : existing);
  const unknown = asked.filter((t) => !existing.includes(t) && !histories.includes(t));
  if (unknown.length) {
    throw new Error(`export: no such table: ${unknown.join(', ')} (tables: ${existing.join(', ') || 'none yet'})`);
  }
  // Each stream's history beside it (export-unchanged.ts), unless told not to (the lake stages them apart).
  const requested =
    opts.history === false
      ? asked
      : [...new Set(asked.flatMap((t) => (histories.includes(historyOutputId(t)) ? [t, historyOutputId(t)] : [t])))];
  const exportId = newExportId(new Date(db.now()));
  const release = holdOwnerOnlyUmask();
  try {
    ensureFolder(out);
    // Every folder is judged before anything is written: a refusal leaves the whole output as it was.
    const jobs: TableJob[] = [];
    for (const table of requested) {
      const job = await planTable(db, join(out, table), table, partitions, opts);
      if (job) jobs.push(job);
    }
    const tables: string[] = [];
    const rows: Record<string, number> = {};
    const history: NonNullable<ExportResult['history']> = { tables: [], rows: {}, files: 0 };
    const warnings: string[] = [];
    let files = 0;
    let bytesWritten = 0;
    for (const job of jobs) {
      let manifest: Manifest | null = null;
      try {
        const done = await exportTable(db, job, opts, exportId);
        manifest = done.manifest;
        bytesWritten += done.bytes;
      } catch (err) {
        if (err instanceof ExportRefusedError || !(err instanceof Error) || !('code' in err)) throw err;
        throw folderError('write into', job.folder.dir, err);
      }
      if (job.folder.state !== 'missing' && job.folder.foreign.length) {
        const parquet = job.folder.foreign.filter((f) => f.endsWith('.parquet')).length;
        warnings.push(
          `${job.folder.dir}: ${job.folder.foreign.length} file(s) evsync did not write were left as they are${
            parquet ? ` (${parquet} .parquet: readers of ${job.table}/**/*.parquet will read them too)` : ''
          }`,
        );
      }
      const into = job.history === null ? { tables, rows } : history;
      into.tables.push(job.table);
      into.rows[job.table] = manifest?.files.reduce((n, f) => n + f.rows, 0) ?? 0;
      if (job.history === null) files += manifest?.files.length ?? 0;
      else history.files += manifest?.files.length ?? 0;
    }
    return { files, tables, exportId, rows, warnings, bytesWritten, history };
  } finally {
    release();
  }
}
