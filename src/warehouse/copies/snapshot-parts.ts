/**
 * The snapshot's Parquet parts (`<snapshot>.parts/<table>/<part>.<id>.parquet`, `<table>` a copied table's id:
 * `registrants`, or `_history.registrants` for its kept versions, table-parts.ts): the rows its views read. A part
 * file is written once under a new name and never changed; a publish that changes a part writes a new file and
 * retires the old one. A retired file stays for the grace period (`graceMs`), because a reader that opened the
 * previous snapshot reads the files it listed (DuckDB reads a view's file list when it runs the query), and is
 * removed by a later publish once the grace has passed. A part file no snapshot lists (a killed publish's) is
 * removed by the next publish: no reader can have it open.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from '../db/connection.js';
import { fsyncPath } from '../db/fsync.js';
import { literal } from '../db/sql.js';
import { ensureFolder } from './export-folder.js';
import { copiedTable, type TablePart } from './table-parts.js';

/** How long a replaced part stays for readers of an earlier snapshot: 15 minutes. */
export const SNAPSHOT_GRACE_MS = 15 * 60_000;

/** What a snapshot records of each part it reads (`_evsync.snapshot_parts`). */
export interface RecordedPart {
  /** The copied table's id (table-parts.ts CopiedTable): `registrants`, `_history.registrants`. */
  table: string;
  key: string;
  /** Relative to the parts folder, `/`-separated: `<table>/<key>.<id>.parquet`. */
  file: string;
  rows: number;
  fingerprint: string;
  /** The table's columns when the part was written (table-parts.ts columnsSignature). */
  columns: string;
  bytes: number;
}

/** A part replaced by a later snapshot (`_evsync.snapshot_retired`): kept until `retiredAt` + the grace. */
export interface RetiredPart {
  file: string;
  /** Epoch milliseconds. */
  retiredAt: number;
}

const PART_FILE_RE = /^[a-z0-9.]+\.[0-9a-f]{16}\.parquet(\.partial)?$/;

/** The parts folder of the snapshot at `target` (absolute). */
export function partsFolder(target: string): string {
  return `${target}.parts`;
}

/**
 * Writes one part of the copied table `table` (its id) under a new name (as `.partial`, synced, then renamed: a reader never opens half a
 * file), owner-only. Run inside the publish's transaction: every part reads the same point in time.
 */
export async function writePart(
  db: Db,
  folder: string,
  table: string,
  part: TablePart,
  columns: string,
): Promise<RecordedPart> {
  ensureFolder(join(folder, table));
  const rel = `${table}/${part.key}.${randomBytes(8).toString('hex')}.parquet`;
  const path = join(folder, rel);
  const partial = `${path}.partial`;
  // Small row groups: a row group is held (pinned) until written, and a daemon publishes under 128 MB beside its
  // applier (schemas/daemon-settings.ts).
  await db.run(
    `COPY (SELECT * FROM ${copiedTable(table).ref} WHERE ${part.where}) TO ${literal(partial)}
       (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 4096)`,
  );
  chmodSync(partial, 0o600);
  fsyncPath(partial, 'r+');
  renameSync(partial, path);
  return {
    table,
    key: part.key,
    file: rel,
    rows: part.rows,
    fingerprint: part.fingerprint,
    columns,
    bytes: statSync(path).size,
  };
}

/** Syncs the table folders parts were written into, so their names survive a crash with the catalogue. */
export function syncPartFolders(folder: string, tables: Iterable<string>): void {
  for (const table of new Set(tables)) fsyncPath(join(folder, table), 'r');
  fsyncPath(folder, 'r');
}

/**
 * Removes what no reader can still read: retired parts past the grace, and part files listed nowhere (a killed
 * publish's). Run once the new snapshot is in place (`listed`: its parts). Returns the retired parts still kept,
 * and how many files were removed.
 */
export function sweepParts(
  folder: string,
  listed: ReadonlySet<string>,
  retired: readonly RetiredPart[],
  graceMs: number,
  nowMs: number,
): { kept: RetiredPart[]; removed: number } {
  let removed = 0;
  const kept: RetiredPart[] = [];
  for (const r of retired) {
    if (r.retiredAt + graceMs <= nowMs) {
      if (removeFile(join(folder, r.file))) removed++;
    } else kept.push(r);
  }
  const known = new Set([...listed, ...kept.map((r) => r.file)]);
  let tables: string[];
  try {
    tables = readdirSync(folder);
  } catch {
    return { kept, removed };
  }
  for (const table of tables) {
    let names: string[];
    try {
      names = readdirSync(join(folder, table));
    } catch {
      continue; // not a folder
    }
    for (const name of names) {
      const rel = `${table}/${name}`;
      if (!PART_FILE_RE.test(name) || known.has(rel)) continue;
      if (removeFile(join(folder, rel))) removed++;
    }
  }
  return { kept, removed };
}

function removeFile(path: string): boolean {
  try {
    rmSync(path);
    return true;
  } catch {
    return false; // already gone
  }
}
