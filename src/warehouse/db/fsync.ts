/**
 * Durability of a file or a folder's entries: a file written and renamed into place survives a crash only once its
 * bytes and the folder holding its name are on disk.
 */
import { closeSync, fsyncSync, openSync } from 'node:fs';

/** fsync(2) of `path`: 'r+' for a file written, 'r' for a folder (its entries). */
export function fsyncPath(path: string, flags: 'r' | 'r+'): void {
  const fd = openSync(path, flags);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
