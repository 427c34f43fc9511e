/**
 * Where a snapshot (snapshot.ts) may be written, judged without DuckDB (the CLI checks `--snapshot` before a run
 * spends a credit, and before it loads DuckDB). Whether an existing DuckDB file is a snapshot evsync published is
 * checked when publishing.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** DuckDB's database files carry `DUCK` at byte 8. */
function isDuckDbFile(path: string): boolean {
  const header = Buffer.alloc(12);
  const fd = openSync(path, 'r');
  try {
    return readSync(fd, header, 0, 12, 0) === 12 && header.toString('latin1', 8, 12) === 'DUCK';
  } finally {
    closeSync(fd);
  }
}

/**
 * Why a snapshot must not be written at `target` (null when it may): never the warehouse itself, never over a folder
 * or over a file that is no DuckDB database (a snapshot replaces only a snapshot). Cheap: for checks before a run.
 */
export function snapshotTargetProblem(target: string, warehouse: string): string | null {
  const full = resolve(target);
  if (full === resolve(warehouse)) return `${target} is the warehouse itself; name another file`;
  const st = statSync(full, { throwIfNoEntry: false });
  if (st?.isDirectory())
    return `${target} is a folder; name a file in it (e.g. ${join(target, 'evsync-snapshot.duckdb')})`;
  if (st && !st.isFile()) return `${target} exists and is not a file`;
  if (!statSync(dirname(full), { throwIfNoEntry: false })?.isDirectory()) {
    return `folder ${dirname(full)} does not exist`;
  }
  if (st && st.size > 0 && !isDuckDbFile(full)) {
    return `${target} exists and is not a DuckDB database; evsync replaces only a snapshot it published there (move the file away or name another)`;
  }
  return null;
}
