/** Errors the warehouse raises on purpose, so callers can tell them from DuckDB's own. */
export class WarehouseError extends Error {
  override name = 'WarehouseError';
}

/**
 * Another process holds the database file. DuckDB allows one writer process per file and no reader beside it, so
 * this names the holder instead of surfacing DuckDB's lock error with a stack trace.
 */
export class DatabaseInUseError extends WarehouseError {
  override name = 'DatabaseInUseError';
  constructor(
    readonly path: string,
    readonly pid: number | null,
  ) {
    super(`database ${path} is in use by another evsync process (PID ${pid ?? 'unknown'})`);
  }
}

/** DuckDB's lock message: `Could not set lock on file "...": Conflicting lock is held in /usr/bin/node (PID 123)`. */
export function lockHolderPid(message: string): { locked: boolean; pid: number | null } {
  if (!/Could not set lock on file|Conflicting lock is held/i.test(message)) return { locked: false, pid: null };
  const m = /\(PID (\d+)\)/.exec(message) ?? /PID[:= ]+(\d+)/.exec(message);
  return { locked: true, pid: m ? Number(m[1]) : null };
}
