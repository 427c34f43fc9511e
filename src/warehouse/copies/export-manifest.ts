/**
 * The export manifest: `<out>/<table>/_evsync/manifest.json`, evsync's proof that it created a table folder and of
 * every file it wrote there. Export only ever replaces or removes files this manifest lists; anything else in the
 * folder belongs to someone else. The lake (src/outputs/lake) keeps the same manifest per table and account in object storage.
 *
 * Format (version 1), every path relative to the table folder with `/` separators:
 *
 * ```json
 * {
 *   "format": "evsync-parquet-export",
 *   "version": 1,
 *   "table": "registrants",
 *   "createdAt": "2024-05-01T12:00:00.000Z",     // when evsync created the folder (or adopted it with --force)
 *   "updatedAt": "2024-05-02T08:00:00.000Z",     // the last export that changed it
 *   "exportId": "20240502T080000Z-1a2b3c4d",     // that export
 *   "runId": "20240502T075500Z-9f8e7d6c",        // the sync run it followed (sync --parquet-out), else null
 *   "partitionBy": ["event_id"],                 // Hive partition columns; [] for a table written whole
 *   "compression": "zstd",
 *   "includeDeleted": false,                     // whether rows with _deleted_at are in the files
 *   "rows": 3,                                   // sum of files[].rows
 *   "files": [{ "path": "event_id=10/20240502T080000Z-1a2b3c4d_<uuid>.parquet", "partition": { "event_id": "10" },
 *               "rows": 2, "bytes": 1234, "sha256": "<hex>", "exportId": "20240502T080000Z-1a2b3c4d",
 *               "source": "<columns digest>:<rows>|<latest _synced_at>|<sum>" }],  // optional: export-unchanged.ts
 *   "folders": ["event_id=10"],                  // partition folders evsync created
 *   "pending": [],                               // exports begun and not committed: files named <id>_* are theirs
 *   "obsolete": []                               // files replaced by a committed export, not yet removed
 * }
 * ```
 *
 * `pending` and `obsolete` make an interrupted export recoverable: the next one removes those files (they are
 * evsync's) before it checks the folder, so a crash never turns evsync's own files into "foreign" ones.
 */
import { randomBytes } from 'node:crypto';
import { lstatSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errnoCode } from '../db/fs-errors.js';

const MANIFEST_FORMAT = 'evsync-parquet-export';
const MANIFEST_VERSION = 1;
/** Folder of the manifest inside a table folder; `_` keeps Hive readers (Spark, Arrow, DuckDB globs) off it. */
export const MARKER_DIR = '_evsync';
export const MANIFEST_FILE = 'manifest.json';

export interface ManifestFile {
  path: string;
  /** Hive partition values as they appear in the folder names (`{"event_id": "10"}`); `{}` when unpartitioned. */
  partition: Record<string, string>;
  rows: number;
  bytes: number;
  sha256: string;
  exportId: string;
  /**
   * The fingerprint of the warehouse partition the file was written from (export-unchanged.ts), the same for every
   * file of a partition: the partition is not written again while the warehouse's is the same. Absent in manifests
   * from before it (their partitions are written once more).
   */
  source?: string;
}

export interface Manifest {
  format: typeof MANIFEST_FORMAT;
  version: typeof MANIFEST_VERSION;
  table: string;
  createdAt: string;
  updatedAt: string;
  exportId: string | null;
  runId: string | null;
  partitionBy: string[];
  compression: 'zstd';
  includeDeleted: boolean;
  rows: number;
  files: ManifestFile[];
  folders: string[];
  pending: string[];
  obsolete: string[];
}

export function manifestPath(tableDir: string): string {
  return join(tableDir, MARKER_DIR, MANIFEST_FILE);
}

export function emptyManifest(table: string, now: Date): Manifest {
  return {
    format: MANIFEST_FORMAT,
    version: MANIFEST_VERSION,
    table,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
    exportId: null,
    runId: null,
    partitionBy: [],
    compression: 'zstd',
    includeDeleted: false,
    rows: 0,
    files: [],
    folders: [],
    pending: [],
    obsolete: [],
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
/** Relative, inside the folder, no `.` or `..` segment: a manifest must never send a removal outside its folder. */
function isSafeRelativePath(p: string): boolean {
  return p !== '' && !p.includes('\0') && p.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..');
}

function isManifestFile(v: unknown): v is ManifestFile {
  return (
    isObject(v) &&
    typeof v.path === 'string' &&
    isSafeRelativePath(v.path) &&
    isObject(v.partition) &&
    Object.values(v.partition).every((x) => typeof x === 'string') &&
    typeof v.rows === 'number' &&
    typeof v.bytes === 'number' &&
    typeof v.sha256 === 'string' &&
    typeof v.exportId === 'string' &&
    (v.source === undefined || typeof v.source === 'string')
  );
}

/** The manifest's problem, or null when `v` is a manifest of `table` that evsync can trust. */
function manifestProblem(v: unknown, table: string): string | null {
  if (!isObject(v)) return 'not a JSON object';
  if (v.format !== MANIFEST_FORMAT) return `"format" is not "${MANIFEST_FORMAT}"`;
  if (v.version !== MANIFEST_VERSION) {
    return `${typeof v.version === 'number' ? `version ${v.version}` : 'an unknown version'} (this evsync reads ${MANIFEST_VERSION})`;
  }
  if (v.table !== table) return `it is the manifest of another table, not ${table}`;
  if (!Array.isArray(v.files) || !v.files.every(isManifestFile)) return '"files" is not a list of files';
  for (const key of ['folders', 'pending', 'obsolete', 'partitionBy'] as const) {
    if (!isStringArray(v[key])) return `"${key}" is not a list of strings`;
  }
  if (![...(v.folders as string[]), ...(v.obsolete as string[])].every(isSafeRelativePath)) {
    return 'a path leaves the table folder';
  }
  if (!(v.pending as string[]).every((id) => /^[\w-]+$/.test(id))) return '"pending" holds an unexpected id';
  return null;
}

type ManifestRead = { ok: true; manifest: Manifest } | { ok: false; problem: string };

export function readManifest(tableDir: string, table: string): ManifestRead {
  const path = manifestPath(tableDir);
  let text: string;
  try {
    // Only a regular file is evsync's: a symbolic link would have evsync read (and quote) whatever it points at.
    if (!lstatSync(path).isFile()) return { ok: false, problem: 'not a regular file (a symbolic link?)' };
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return { ok: false, problem: `cannot be read (${errnoCode(err) || 'unknown error'})` };
  }
  return parseManifest(text, table);
}

/** The same checks on a manifest's text, wherever it was read from (a file, an object in the lake). */
export function parseManifest(text: string, table: string): ManifestRead {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // JSON.parse quotes the text around the error: never echo a file's contents in a message.
    return { ok: false, problem: 'not valid JSON' };
  }
  const problem = manifestProblem(parsed, table);
  return problem ? { ok: false, problem } : { ok: true, manifest: parsed as Manifest };
}

/** The manifest as written: files sorted by path, `rows` their sum. */
export function manifestText(manifest: Manifest): string {
  const sorted = { ...manifest, files: [...manifest.files].sort((a, b) => a.path.localeCompare(b.path)) };
  sorted.rows = sorted.files.reduce((n, f) => n + f.rows, 0);
  return `${JSON.stringify(sorted, null, 2)}\n`;
}

/** Temporary names of manifest writes in flight: `manifest.json.<hex>.tmp` (evsync's, removed on recovery). */
export const MANIFEST_TEMP = /^manifest\.json\.[0-9a-f]{16}\.tmp$/;

/** Writes the manifest atomically (temporary file, then rename), owner-only. */
export function writeManifest(tableDir: string, manifest: Manifest): void {
  const target = manifestPath(tableDir);
  const temp = join(tableDir, MARKER_DIR, `${MANIFEST_FILE}.${randomBytes(8).toString('hex')}.tmp`);
  try {
    writeFileSync(temp, manifestText(manifest), { mode: 0o600, flag: 'wx' });
    renameSync(temp, target);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}
