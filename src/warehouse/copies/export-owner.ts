/**
 * The owner record of a local Parquet folder: `<out>/_evsync/owner.json` (the `_` keeps Parquet globs and Hive
 * discovery off it, as for the table manifests of export-manifest.ts). A folder belongs to one warehouse and one
 * account, as a lake prefix does (one `account=<id>` partition, one lease per account): two warehouses writing one
 * folder replaced each other's partitions and manifests. The record names the warehouse by its real path and the
 * account by base URL and client id (never a secret); src/outputs/lake/folder-claim.ts writes it at the first export and
 * refuses any other writer.
 *
 * Format (version 1):
 *
 * ```json
 * {
 *   "format": "evsync-parquet-owner",
 *   "version": 1,
 *   "warehouse": "/data/evsync.duckdb",                                          // real path
 *   "account": { "baseUrl": "https://api.example.com/api/v1", "clientId": "c-1" }, // null: not bound yet
 *   "claimedAt": "2024-05-01T12:00:00.000Z",
 *   "claimedBy": "evsync export",
 *   "adopted": false                         // true: the folder was written by an evsync from before this record
 * }
 * ```
 *
 * This module reads and writes the record, and reads what an older evsync left (table folders with manifests and no
 * record), nothing else.
 */
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  type Dirent,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { errnoCode } from '../db/fs-errors.js';
import type { AccountBinding, ExportOrigins } from '../state/account.js';
import { MARKER_DIR, readManifest } from './export-manifest.js';

export const OWNER_FORMAT = 'evsync-parquet-owner';
const OWNER_FILE = 'owner.json';

export interface FolderOwner {
  format: typeof OWNER_FORMAT;
  version: 1;
  warehouse: string;
  account: AccountBinding | null;
  claimedAt: string;
  claimedBy: string;
  adopted: boolean;
}

export function ownerPath(out: string): string {
  return join(out, MARKER_DIR, OWNER_FILE);
}

type OwnerRead = { state: 'none' } | { state: 'owned'; owner: FolderOwner } | { state: 'bad'; problem: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function isAccount(v: unknown): v is AccountBinding {
  return isObject(v) && typeof v.baseUrl === 'string' && typeof v.clientId === 'string';
}

function ownerProblem(v: unknown): string | null {
  if (!isObject(v)) return 'not a JSON object';
  if (v.format !== OWNER_FORMAT) return `"format" is not "${OWNER_FORMAT}"`;
  if (v.version !== 1) return 'an unknown version (this evsync reads 1)';
  if (typeof v.warehouse !== 'string' || v.warehouse === '') return '"warehouse" is not a path';
  if (v.account !== null && !isAccount(v.account)) return '"account" is neither null nor a base URL and client id';
  if (typeof v.claimedAt !== 'string' || typeof v.claimedBy !== 'string' || typeof v.adopted !== 'boolean') {
    return '"claimedAt", "claimedBy" or "adopted" is missing';
  }
  return null;
}

/** The folder's owner record, if any. Only a regular file is read (a link could make evsync quote another file). */
export function readOwner(out: string): OwnerRead {
  const path = ownerPath(out);
  let text: string;
  try {
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (!st) return { state: 'none' };
    if (!st.isFile()) return { state: 'bad', problem: 'not a regular file (a symbolic link?)' };
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return { state: 'bad', problem: `cannot be read (${errnoCode(err) || 'unknown error'})` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // JSON.parse quotes the text around the error: never echo a file's contents in a message.
    return { state: 'bad', problem: 'not valid JSON' };
  }
  const problem = ownerProblem(parsed);
  return problem ? { state: 'bad', problem } : { state: 'owned', owner: parsed as FolderOwner };
}

/** `<out>/_evsync`, owner-only, created if missing (the caller checked it is no link). */
export function ensureMarkerDir(out: string): void {
  const dir = join(out, MARKER_DIR);
  if (lstatSync(dir, { throwIfNoEntry: false })) return;
  mkdirSync(dir, { mode: 0o700 });
  chmodSync(dir, 0o700);
}

/** Writes the record atomically (temporary file, then rename), owner-only. */
export function writeOwner(out: string, owner: FolderOwner): void {
  ensureMarkerDir(out);
  const target = ownerPath(out);
  const temp = `${target}.${randomBytes(8).toString('hex')}.tmp`;
  try {
    writeFileSync(temp, `${JSON.stringify(owner, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    renameSync(temp, target);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}

/** What an export folder's table manifests say it came from (an evsync before the owner record wrote it). */
interface EarlierExport extends ExportOrigins {
  tables: string[];
}

/**
 * The table folders of `out` that hold an evsync manifest, and the runs and events those manifests name; null when
 * none does (a new or empty folder). Links are not followed, and a manifest evsync cannot read is left to export,
 * which refuses it when it comes to that table.
 */
export function earlierExport(out: string): EarlierExport | null {
  let entries: Dirent[];
  try {
    entries = readdirSync(out, { withFileTypes: true });
  } catch {
    return null;
  }
  const found: EarlierExport = { tables: [], runIds: [], eventIds: [] };
  for (const entry of entries) {
    if (!entry.isDirectory() || entry.name === MARKER_DIR) continue;
    const read = readManifest(join(out, entry.name), entry.name);
    if (!read.ok) continue;
    found.tables.push(entry.name);
    if (read.manifest.runId !== null) found.runIds.push(read.manifest.runId);
    for (const file of read.manifest.files) {
      const id = file.partition.event_id;
      if (id !== undefined && /^-?\d+$/.test(id)) found.eventIds.push(Number(id));
    }
  }
  if (found.tables.length === 0) return null;
  return { ...found, runIds: [...new Set(found.runIds)], eventIds: [...new Set(found.eventIds)].sort((a, b) => a - b) };
}
