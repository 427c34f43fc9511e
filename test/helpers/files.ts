/** What tests of written copies compare: every file under a folder with what changes when it is written again. */
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Every file under `dir` (paths relative to it) with its inode, mtime and size: a file written again differs. */
export function filesUnder(dir: string): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      const st = statSync(path);
      if (st.isDirectory()) walk(path);
      else found.set(relative(dir, path), `${st.ino}:${st.mtimeMs}:${st.size}`);
    }
  };
  walk(dir);
  return found;
}
