/**
 * `src/warehouse/copies/`: copies of the warehouse for readers, and where they may go: Parquet exports (export*.ts),
 * the snapshot, the daemon's query copy, the files the warehouse keeps beside itself (own-files.ts), and the side
 * connection the publisher copies on (side.ts).
 *
 * The folders an export writes into, and the rule that keeps it from harming the user's files: evsync writes only
 * into table folders it created (marked by `_evsync/manifest.json`, see export-manifest.ts) and removes only files
 * its manifest lists. A folder without a manifest, or holding files the manifest does not list, is refused unless
 * `force`, and even then nothing evsync did not write is ever removed or overwritten.
 *
 * Folders are created one level at a time: Node's recursive mkdir loops forever (at full CPU) where mkdir(2)
 * answers ENOENT for a path whose parent exists, as everywhere under /proc.
 */
import {
  chmodSync,
  type Dirent,
  lstatSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  rmdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { WarehouseError } from '../db/errors.js';
import { errnoCode, errnoReason } from '../db/fs-errors.js';
import {
  emptyManifest,
  MANIFEST_FILE,
  MANIFEST_TEMP,
  MARKER_DIR,
  type Manifest,
  manifestPath,
  readManifest,
  writeManifest,
} from './export-manifest.js';

/**
 * An export refused before writing anything: a folder evsync does not own, or an output path no folder can be
 * created at. The user's to fix (another --out, move the files away, or --force): the CLI exits 2.
 */
export class ExportRefusedError extends WarehouseError {
  override name = 'ExportRefusedError';
  constructor(
    message: string,
    /** The folder or file the refusal is about. */
    readonly path: string,
  ) {
    super(message);
  }
}

/**
 * `name:` with two or more characters before the colon: a URL scheme (`s3:`, `gs:`, `https:`), never a folder this
 * module creates. One letter is a Windows drive (`C:\out`). The outputs (src/outputs/target.ts) read the same rule.
 */
export const URL_SCHEME_RE = /^([A-Za-z][A-Za-z0-9+.-]+):/;

/** Codes that mean "not here": the user must choose another place. Anything else (ENOSPC, EIO) is a failure. */
const REFUSING_CODES = new Set(['EROFS', 'EACCES', 'EPERM', 'ENOTDIR', 'ENOENT', 'EEXIST', 'ELOOP', 'ENAMETOOLONG']);

/** How an export says the codes whose plain meaning does not fit a folder it is creating. */
const FOLDER_WORDING = { ENOENT: 'the file system does not allow a new folder there (ENOENT)' };

function reason(code: string): string {
  return errnoReason(code, FOLDER_WORDING) ?? (code || 'unknown error');
}

/** An fs error on `path` said plainly; a refusal when the place itself is unusable. */
export function folderError(what: string, path: string, err: unknown): Error {
  const code = errnoCode(err);
  const message = `export: cannot ${what} ${path}: ${reason(code)}`;
  return REFUSING_CODES.has(code) ? new ExportRefusedError(message, path) : new Error(message, { cause: err });
}

/** Owner-only, whatever the umask let through. */
function ownerOnlyFolder(path: string): void {
  chmodSync(path, 0o700);
}

/**
 * `mkdir -p` that cannot spin: finds the deepest existing ancestor, checks it is a folder, then creates each
 * missing level (0700). Returns the folders it created, outermost first.
 */
export function ensureFolder(path: string): string[] {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    let stats: ReturnType<typeof statSync> | undefined;
    try {
      stats = statSync(current, { throwIfNoEntry: false });
    } catch (err) {
      // Under a file: keep walking up to name the file itself.
      if (errnoCode(err) !== 'ENOTDIR') throw folderError('create folder', path, err);
    }
    if (stats) {
      if (!stats.isDirectory()) {
        throw new ExportRefusedError(
          `export: cannot create folder ${path}: ${current} is a file, not a folder (ENOTDIR)`,
          current,
        );
      }
      break;
    }
    missing.unshift(current);
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const dir of missing) {
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (err) {
      // Created meanwhile by someone else: fine if it is a folder (not ours then, but we only write beneath it).
      if (errnoCode(err) === 'EEXIST' && statSync(dir).isDirectory()) continue;
      throw folderError('create folder', dir, err);
    }
    ownerOnlyFolder(dir);
  }
  return missing;
}

/** Every entry under `dir` (relative paths, `/` separators), folders before their contents; symlinks not followed. */
function walk(dir: string, prefix = ''): { path: string; entry: Dirent }[] {
  const out: { path: string; entry: Dirent }[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    out.push({ path: rel, entry });
    if (entry.isDirectory()) out.push(...walk(join(dir, entry.name), rel));
  }
  return out;
}

/** Files an interrupted export of `id` may have left: `<id>_...` and DuckDB's own `tmp_<id>_...`. */
function belongsToPending(name: string, pending: readonly string[]): boolean {
  return pending.some((id) => name.startsWith(`${id}_`) || name.startsWith(`tmp_${id}_`));
}

function isMarkerEntry(path: string): boolean {
  if (path === MARKER_DIR || path === `${MARKER_DIR}/${MANIFEST_FILE}`) return true;
  return path.startsWith(`${MARKER_DIR}/`) && MANIFEST_TEMP.test(path.slice(MARKER_DIR.length + 1));
}

/** Files (and symlinks, sockets...) in the folder that evsync's manifest does not account for. */
function foreignEntries(dir: string, manifest: Manifest | null): string[] {
  const listed = new Set([...(manifest?.files.map((f) => f.path) ?? []), ...(manifest?.obsolete ?? [])]);
  const pending = manifest?.pending ?? [];
  const foreign: string[] = [];
  for (const { path, entry } of walk(dir)) {
    if (entry.isDirectory()) continue;
    if (manifest && isMarkerEntry(path)) continue;
    if (entry.isFile() && (listed.has(path) || belongsToPending(entry.name, pending))) continue;
    foreign.push(path);
  }
  return foreign;
}

export type TableFolder =
  | { state: 'missing'; dir: string }
  | { state: 'owned'; dir: string; manifest: Manifest; foreign: string[] }
  | { state: 'adopt'; dir: string; foreign: string[] };

function listFew(paths: readonly string[]): string {
  const shown = paths.slice(0, 3).join(', ');
  return paths.length > 3 ? `${shown} and ${paths.length - 3} more` : shown;
}

/**
 * Decides, without writing anything, whether an export may write into `dir`: a missing folder (evsync creates it),
 * one with a valid manifest and no foreign file, or (with `force`) one it adopts. Throws ExportRefusedError otherwise.
 */
export function inspectTableFolder(dir: string, table: string, force: boolean): TableFolder {
  let stats: ReturnType<typeof lstatSync> | undefined;
  try {
    stats = lstatSync(dir, { throwIfNoEntry: false });
  } catch (err) {
    throw folderError('use folder', dir, err);
  }
  if (!stats) return { state: 'missing', dir };
  if (!stats.isDirectory()) {
    throw new ExportRefusedError(
      `export: ${dir} is a ${stats.isSymbolicLink() ? 'symbolic link' : 'file'}, not a folder evsync created; evsync will not write there (choose another --out or move it away)`,
      dir,
    );
  }
  const link = linkedFolders(dir)[0];
  if (link !== undefined) {
    throw new ExportRefusedError(
      `export: ${join(dir, link)} is a symbolic link to a folder; evsync never writes or removes through one (it could lead outside --out), --force or not: move it away`,
      join(dir, link),
    );
  }
  const marker = lstatSync(manifestPath(dir), { throwIfNoEntry: false });
  if (marker && !marker.isFile()) {
    throw new ExportRefusedError(
      `export: ${manifestPath(dir)} is not a regular file (a symbolic link?), so not evsync's manifest; evsync will not read or write it, --force or not: move it away`,
      manifestPath(dir),
    );
  }
  if (!marker) {
    const foreign = foreignEntries(dir, null);
    if (!force) {
      throw new ExportRefusedError(
        `export: ${dir} was not created by evsync (no ${MARKER_DIR}/${MANIFEST_FILE}) and ${
          foreign.length ? `holds ${listFew(foreign)}` : 'is an empty folder someone else made'
        }; evsync writes only into folders it created. Move it away or choose another --out; --force writes beside what is there (evsync never removes a file it did not write)`,
        dir,
      );
    }
    const markerDir = lstatSync(join(dir, MARKER_DIR), { throwIfNoEntry: false });
    if (markerDir && !markerDir.isDirectory()) {
      throw new ExportRefusedError(`export: ${join(dir, MARKER_DIR)} is not evsync's folder; move it away`, dir);
    }
    return { state: 'adopt', dir, foreign };
  }
  const read = readManifest(dir, table);
  if (!read.ok) {
    // Never overwrite a file evsync cannot prove it wrote, --force or not.
    throw new ExportRefusedError(
      `export: ${manifestPath(dir)} is not an evsync export manifest for ${table} (${read.problem}); evsync will not write into ${dir}`,
      manifestPath(dir),
    );
  }
  const foreign = foreignEntries(dir, read.manifest);
  if (foreign.length && !force) {
    throw new ExportRefusedError(
      `export: ${dir} holds ${foreign.length === 1 ? 'a file' : `${foreign.length} files`} evsync did not write: ${listFew(
        foreign,
      )}; evsync replaces only its own files. Move ${foreign.length === 1 ? 'it' : 'them'} away, or pass --force to write beside ${foreign.length === 1 ? 'it' : 'them'} (never removed)`,
      join(dir, foreign[0] ?? ''),
    );
  }
  return { state: 'owned', dir, manifest: read.manifest, foreign };
}

/**
 * Whether `path` really lies inside `dir`: its folder's real path (every symbolic link on the way resolved) is
 * `dir`'s real path or below it. `lstat` alone only declines a link at the last step, not a linked folder before it.
 */
function reallyInside(dir: string, path: string): boolean {
  try {
    const root = realpathSync(dir);
    const parent = realpathSync(dirname(path));
    return parent === root || parent.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
  } catch {
    return false;
  }
}

/**
 * Removes a file the manifest lists (never a folder, never through a symlink, never outside `dir` whatever the
 * manifest says), tolerating one already gone.
 */
export function removeOwnFile(dir: string, rel: string): void {
  const path = join(dir, rel);
  if (!reallyInside(dir, path)) return;
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st?.isFile()) return;
  rmSync(path);
}

/** Symbolic links under `dir` that lead to a folder: a write or a removal through one could land outside --out. */
function linkedFolders(dir: string): string[] {
  return walk(dir)
    .filter(
      ({ path, entry }) =>
        entry.isSymbolicLink() && statSync(join(dir, path), { throwIfNoEntry: false })?.isDirectory(),
    )
    .map(({ path }) => path);
}

/** Removes a folder evsync created if it is empty now; a folder holding anything stays. */
export function removeFolderIfEmpty(dir: string, rel: string): boolean {
  if (!reallyInside(dir, join(dir, rel))) return false;
  try {
    rmdirSync(join(dir, rel));
    return true;
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return true;
    return false;
  }
}

/** Removes what an interrupted export left (its pending files, replaced files not yet removed). */
function recover(dir: string, manifest: Manifest): Manifest {
  if (manifest.pending.length === 0 && manifest.obsolete.length === 0) return manifest;
  for (const { path, entry } of walk(dir)) {
    if (entry.isFile() && belongsToPending(entry.name, manifest.pending)) removeOwnFile(dir, path);
  }
  for (const rel of manifest.obsolete) removeOwnFile(dir, rel);
  const next = { ...manifest, pending: [], obsolete: [] };
  writeManifest(dir, next);
  return next;
}

/** Makes the folder ready to write: created (with its manifest), adopted, or recovered. Returns its manifest. */
export function prepareTableFolder(folder: TableFolder, table: string, now: Date): Manifest {
  const { dir } = folder;
  if (folder.state === 'owned') return recover(dir, folder.manifest);
  try {
    if (folder.state === 'missing') {
      mkdirSync(dir, { mode: 0o700 });
      ownerOnlyFolder(dir);
    }
    if (!lstatSync(join(dir, MARKER_DIR), { throwIfNoEntry: false })) {
      mkdirSync(join(dir, MARKER_DIR), { mode: 0o700 });
      ownerOnlyFolder(join(dir, MARKER_DIR));
    }
  } catch (err) {
    throw folderError('create folder', dir, err);
  }
  const manifest = emptyManifest(table, now);
  writeManifest(dir, manifest);
  return manifest;
}
