/** Errors the warehouse raises on purpose, so callers can tell them from DuckDB's own. */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

export class WarehouseError extends Error {
  override name = 'WarehouseError';
}

/** Longest program description put in a message (a `node -e <script>` command line can run to pages). */
const HOLDER_MAX = 120;

/**
 * What runs as `pid`, from its command line (`/proc/<pid>/cmdline`, Linux): the program's base name and its
 * arguments, e.g. `python3 report.py` or `node /usr/bin/evsync serve`; null where /proc is not there to ask.
 */
function describeProcess(pid: number, procRoot = '/proc'): string | null {
  let raw: string;
  try {
    raw = readFileSync(`${procRoot}/${pid}/cmdline`, 'utf8');
  } catch {
    return null;
  }
  const [program, ...args] = raw.split('\0').filter((a) => a !== '');
  if (!program) return null;
  const text = [basename(program), ...args].join(' ').replace(/\s+/g, ' ').trim();
  return text.length > HOLDER_MAX ? `${text.slice(0, HOLDER_MAX - 1)}…` : text;
}

/**
 * Another process holds the database file. DuckDB allows one writer process per file and no reader beside it (not
 * even a read-only one), so this names the holder instead of surfacing DuckDB's lock error with a stack trace, and
 * says how readers get at the data without taking the file: a snapshot (`--snapshot`) or Parquet.
 */
export class DatabaseInUseError extends WarehouseError {
  override name = 'DatabaseInUseError';
  /** The holder's command line, shortened (see describeProcess); null when it could not be read. */
  readonly holder: string | null;
  constructor(
    readonly path: string,
    readonly pid: number | null,
    holder?: string | null,
  ) {
    const who = holder === undefined ? (pid === null ? null : describeProcess(pid)) : holder;
    super(
      `database ${path} is in use by another process: ${who ?? 'a program'} (PID ${pid ?? 'unknown'}). DuckDB lets ` +
        `no other process open a file one process holds, not even to read it: readers (the duckdb CLI, Python, BI ` +
        `tools) should open a snapshot instead, which \`evsync sync --snapshot <file>\` or \`evsync serve --snapshot ` +
        `<file>\` publishes, or the Parquet of --parquet-out`,
    );
    this.holder = who;
  }
}

/** DuckDB's lock message: `Could not set lock on file "...": Conflicting lock is held in /usr/bin/node (PID 123)`. */
export function lockHolderPid(message: string): { locked: boolean; pid: number | null } {
  if (!/Could not set lock on file|Conflicting lock is held/i.test(message)) return { locked: false, pid: null };
  const m = /\(PID (\d+)\)/.exec(message) ?? /PID[:= ]+(\d+)/.exec(message);
  return { locked: true, pid: m ? Number(m[1]) : null };
}
