/**
 * Paths as the file system resolves them: an output's folder is owned by the warehouse's real path, and collisions
 * between outputs and the warehouse are judged on real paths, so a symbolic link hides neither.
 */
import { realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/** `path` with every symbolic link resolved, along the deepest part of it that exists (the rest appended). */
export function realPathOf(path: string): string {
  const missing: string[] = [];
  let head = resolve(path);
  for (;;) {
    try {
      return join(realpathSync(head), ...missing);
    } catch {
      const parent = dirname(head);
      // Nothing resolves (not even the root): compare the path as written.
      if (parent === head) return resolve(path);
      missing.unshift(basename(head));
      head = parent;
    }
  }
}
