/**
 * Bytes a step wrote to some folders, measured from the file system rather than taken from what the code reports:
 * a listing of every file under them (inode, size and mtime per path) before and after, and the sizes of the files
 * that are new, or were replaced (another inode) or rewritten in place (size or mtime differs), added up. A file
 * written and removed again within the step (a temporary one) is not counted; a file renamed over another counts
 * whole.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

interface FileState {
  ino: number;
  size: number;
  mtimeNs: bigint;
}

export type Listing = Map<string, FileState>;

function walk(path: string, into: Listing): void {
  // Missing (not written yet, or removed while listed): nothing to list.
  const s = lstatSync(path, { bigint: true, throwIfNoEntry: false });
  if (s === undefined) return;
  if (s.isDirectory()) {
    for (const name of readdirSync(path)) walk(join(path, name), into);
  } else if (s.isFile()) {
    into.set(path, { ino: Number(s.ino), size: Number(s.size), mtimeNs: s.mtimeNs });
  }
}

/** Every file under `paths` (files or folders; missing ones are empty). */
export function listFiles(paths: readonly string[]): Listing {
  const into: Listing = new Map();
  for (const p of paths) walk(p, into);
  return into;
}

export interface WrittenDelta {
  /** Sizes of the files created or replaced, added up. */
  bytes: number;
  /** How many files that is. */
  files: number;
  /** The files created or replaced (paths as listed), for a reader checking what a publish wrote. */
  paths: string[];
  /** Files gone since `before`. */
  removed: number;
  /** Every file now, added up: what a reader of the folders finds. */
  totalBytes: number;
}

export function writtenBetween(before: Listing, after: Listing): WrittenDelta {
  let bytes = 0;
  const paths: string[] = [];
  let totalBytes = 0;
  for (const [path, now] of after) {
    totalBytes += now.size;
    const was = before.get(path);
    const same = was !== undefined && was.ino === now.ino && was.size === now.size && was.mtimeNs === now.mtimeNs;
    if (same) continue;
    bytes += now.size;
    paths.push(path);
  }
  let removed = 0;
  for (const path of before.keys()) if (!after.has(path)) removed += 1;
  return { bytes, files: paths.length, paths, removed, totalBytes };
}
