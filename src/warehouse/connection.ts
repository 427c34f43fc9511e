/**
 * Opening the database file and talking to it: owner-only permissions, a clear error when another process holds
 * the file, one connection per open warehouse with its operations run one at a time.
 */
import { chmodSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { DuckDBConnection, DuckDBInstance, type DuckDBPreparedStatement, type DuckDBValue } from '@duckdb/node-api';
import { DatabaseInUseError, lockHolderPid } from './errors.js';

export type SqlParam = string | number | bigint | boolean | null;
export type ScalarJson = string | number | boolean | null;
export type ResultRow = Record<string, ScalarJson>;
export interface QueryResult {
  columns: string[];
  rows: ResultRow[];
}

/**
 * DuckDB settings for every warehouse instance.
 * - The load path stages each page as a uniquely named JSON file read once: caching those files' contents
 *   (DuckDB's external file cache, on by default) would only hold memory.
 * - `memory_limit` bounds what DuckDB's buffer manager holds: blocks of the tables it has read or written stay
 *   cached until the limit evicts them, so without one the process grew with the table it loaded (DuckDB's default
 *   is 80% of RAM). Operators that need more spill to `<database>.tmp`. See OpenOptions.memoryLimit.
 * - Data committed through the WAL is held in memory until a checkpoint. Stream tables have no key index, so a
 *   checkpoint costs what changed since the last one (not the whole index, as before): checkpoint every 64 MB of
 *   WAL. Merges of 100k+ rows skip the WAL altogether (DuckDB writes their row groups to the file at once).
 */
const INSTANCE_OPTIONS: Record<string, string> = {
  enable_external_file_cache: 'false',
  checkpoint_threshold: '64MB',
};
export const DEFAULT_MEMORY_LIMIT = '160MB';

/**
 * How the database file is attached. A stream table has a column per field (registrants: 260, most of them the
 * custom fields of other events, null), and DuckDB appends each column into blocks of the database's block size:
 * with the default 256 KB blocks, appending even 20k rows held ~200 MB (IN_MEMORY_TABLE), a row group (122,880
 * rows) ~470 MB. A new file gets 16 KB blocks (fixed for the file's life) and every attach 32k-row row groups:
 * measured ~40-70 MB for the same appends, at the same CPU cost. Files made by earlier versions keep their block
 * size (DuckDB refuses another) and get the smaller row groups.
 */
const NEW_FILE_OPTIONS = 'BLOCK_SIZE 16384, ROW_GROUP_SIZE 32768';
const FILE_OPTIONS = 'ROW_GROUP_SIZE 32768';

interface SharedInstance {
  instance: DuckDBInstance;
  refs: number;
  readOnly: boolean;
  /** The attached file's catalog, made the default of every connection (null for an in-memory database). */
  catalog: string | null;
}

// One DuckDB instance per file per process: DuckDB refuses a second instance on a file this process already holds,
// and two warehouses on one file (the engine and a query) must see each other's commits.
const instances = new Map<string, SharedInstance>();
const opening = new Map<string, Promise<SharedInstance>>();

// The database file, its WAL (deleted at each checkpoint and created again on the next write) and any spill files
// hold personal data. DuckDB creates them with the process umask, so while a warehouse is open the umask keeps
// group and other bits off; it is restored when the last warehouse closes.
let umaskHolders = 0;
let savedUmask: number | null = null;

function tightenUmask(): void {
  umaskHolders++;
  if (umaskHolders > 1) return;
  try {
    const previous = process.umask(0o077);
    savedUmask = previous;
    process.umask(previous | 0o077);
  } catch {
    // Worker threads cannot change the umask: the explicit chmod after open still covers the database file.
    savedUmask = null;
  }
}

function restoreUmask(): void {
  umaskHolders = Math.max(0, umaskHolders - 1);
  if (umaskHolders > 0 || savedUmask === null) return;
  try {
    process.umask(savedUmask);
  } catch {
    // see tightenUmask
  }
  savedUmask = null;
}

/** Owner read/write only on the database file and its WAL, whatever created them. */
export function restrictPermissions(path: string): void {
  for (const file of [path, `${path}.wal`]) {
    if (existsSync(file)) chmodSync(file, 0o600);
  }
}

function isMemory(path: string): boolean {
  return path === ':memory:' || path === '';
}

/** Attaches the file to an instance; returns its catalog name (the file's name without extension, as DuckDB infers). */
async function attach(instance: DuckDBInstance, path: string, readOnly: boolean): Promise<string> {
  const connection = await DuckDBConnection.create(instance);
  try {
    const options = readOnly ? 'READ_ONLY' : existsSync(path) ? FILE_OPTIONS : NEW_FILE_OPTIONS;
    const file = `'${path.replaceAll("'", "''")}'`;
    try {
      await connection.run(`ATTACH ${file} (${options})`);
    } catch (err) {
      // A file named like a built-in catalog (memory.duckdb, temp.duckdb) needs an alias of its own.
      if (!(err instanceof Error && /already exists|reserved/i.test(err.message))) throw err;
      await connection.run(`ATTACH ${file} AS evsync_warehouse (${options})`);
    }
    const r = await connection.runAndReadAll(`SELECT database_name FROM duckdb_databases() WHERE path = $1`, [path]);
    const name = r.getRowsJS()[0]?.[0];
    if (typeof name !== 'string') throw new Error(`database ${path}: attached, but its catalog was not found`);
    return name;
  } finally {
    connection.closeSync();
  }
}

async function acquire(path: string, readOnly: boolean, memoryLimit: string): Promise<SharedInstance> {
  const existing = instances.get(path) ?? (await opening.get(path));
  if (existing) {
    if (existing.readOnly && !readOnly) {
      throw new Error(
        `database ${path} is already open read-only in this process; close it before opening it for writing`,
      );
    }
    existing.refs++;
    return existing;
  }
  const promise = (async () => {
    // The instance itself is in memory; the file is attached to it with options only ATTACH takes.
    // An in-memory instance would spill to `.tmp` in the working directory: spills hold table data, so they go
    // beside the database file (as DuckDB does for a file it opens itself), where the umask keeps them private.
    const options = {
      ...INSTANCE_OPTIONS,
      ...(readOnly ? {} : { memory_limit: memoryLimit }),
      ...(isMemory(path) ? {} : { temp_directory: `${path}.tmp` }),
    };
    let instance: DuckDBInstance | null = null;
    try {
      instance = await DuckDBInstance.create(':memory:', options);
      const catalog = isMemory(path) ? null : await attach(instance, path, readOnly);
      const shared = { instance, refs: 1, readOnly, catalog };
      if (!isMemory(path)) instances.set(path, shared);
      return shared;
    } catch (err) {
      instance?.closeSync();
      const message = err instanceof Error ? err.message : String(err);
      const lock = lockHolderPid(message);
      if (lock.locked) throw new DatabaseInUseError(path, lock.pid);
      throw err;
    } finally {
      opening.delete(path);
    }
  })();
  if (!isMemory(path)) opening.set(path, promise);
  return promise;
}

function toParam(value: unknown, index: number): DuckDBValue {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'bigint':
      return value;
    case 'number':
      // Integers bind as BIGINT (ids), the rest as DOUBLE.
      return Number.isSafeInteger(value) ? BigInt(value) : value;
    default:
      if (value instanceof Date) return value.toISOString().replace('T', ' ').replace('Z', '');
      throw new TypeError(`query parameter ${index + 1}: unsupported type ${typeof value}`);
  }
}

/** Nested values (lists, structs) as JSON text, so every row value is a scalar. */
function scalar(value: unknown): ScalarJson {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return JSON.stringify(value);
}

export class Db {
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  // Statements run once per page (merge, cursor, seen ids) are parsed and planned once, not per page.
  private readonly prepared = new Map<string, DuckDBPreparedStatement>();

  private constructor(
    readonly path: string,
    readonly readOnly: boolean,
    private readonly connection: DuckDBConnection,
    private readonly shared: SharedInstance,
    /** This open created the process's instance on the file (no other warehouse of this process has it open). */
    readonly firstOpen: boolean,
  ) {}

  /** `memoryLimit` applies when this open creates the process's instance on the file (writing). */
  static async open(path: string, readOnly: boolean, memoryLimit = DEFAULT_MEMORY_LIMIT): Promise<Db> {
    const full = isMemory(path) ? ':memory:' : resolve(path);
    if (!readOnly && !isMemory(full)) tightenUmask();
    let shared: SharedInstance;
    try {
      shared = await acquire(full, readOnly, memoryLimit);
    } catch (err) {
      if (!readOnly && !isMemory(full)) restoreUmask();
      if (err instanceof DatabaseInUseError) throw new DatabaseInUseError(path, err.pid);
      throw err;
    }
    if (!readOnly && !isMemory(full)) restrictPermissions(full);
    const connection = await DuckDBConnection.create(shared.instance);
    if (shared.catalog !== null) await connection.run(`USE "${shared.catalog.replaceAll('"', '""')}"`);
    return new Db(full, readOnly, connection, shared, shared.refs === 1);
  }

  /**
   * Runs `work` after every operation queued before it. A DuckDB connection has one transaction at a time, and
   * the engine's walks run concurrently: without this, one walk's BEGIN could swallow another's statements.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error(`warehouse ${this.path} is closed`));
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Runs a statement; returns the number of rows it changed. */
  async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    const result = await this.connection.run(sql, params.length ? params.map(toParam) : undefined);
    return Number(result.rowsChanged);
  }

  /** Runs a query and returns its rows as JSON-safe scalars (BIGINT, DECIMAL and TIMESTAMP as strings). */
  async query(sql: string, params: readonly unknown[] = []): Promise<QueryResult> {
    const reader = await this.connection.runAndReadAll(sql, params.length ? params.map(toParam) : undefined);
    const columns = reader.columnNames();
    const rows = reader.getRowObjectsJson().map((row) => {
      const out: ResultRow = {};
      for (const [k, v] of Object.entries(row)) out[k] = scalar(v);
      return out;
    });
    return { columns, rows };
  }

  private async statement(sql: string, params: readonly unknown[]): Promise<DuckDBPreparedStatement> {
    let stmt = this.prepared.get(sql);
    if (!stmt) {
      stmt = await this.connection.prepare(sql);
      // Bounded: the SQL texts come from a handful of templates per table and column set.
      if (this.prepared.size >= 200) this.forgetPrepared();
      this.prepared.set(sql, stmt);
    }
    stmt.bind(params.map(toParam));
    return stmt;
  }

  /** `run` through a cached prepared statement (for statements repeated per page). */
  async runPrepared(sql: string, params: readonly unknown[]): Promise<number> {
    const result = await (await this.statement(sql, params)).run();
    return Number(result.rowsChanged);
  }

  /** The first column of every result row, through a cached prepared statement. */
  async firstColumnPrepared(sql: string, params: readonly unknown[]): Promise<unknown[]> {
    const reader = await (await this.statement(sql, params)).runAndReadAll();
    return reader.getColumnsJS()[0] ?? [];
  }

  /** Drops cached statements (after DDL: their plans may refer to the old table shape). */
  forgetPrepared(): void {
    for (const stmt of this.prepared.values()) stmt.destroySync();
    this.prepared.clear();
  }

  /** `work` inside BEGIN ... COMMIT; rolled back if it throws. Call from inside `exclusive`. */
  async transaction<T>(work: () => Promise<T>): Promise<T> {
    await this.connection.run('BEGIN TRANSACTION');
    let result: T;
    try {
      result = await work();
    } catch (err) {
      try {
        await this.connection.run('ROLLBACK');
      } catch {
        // A failed statement may already have aborted the transaction; the original error is the one to report.
      }
      throw err;
    }
    await this.connection.run('COMMIT');
    return result;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Refuse new work first, then let what is queued finish.
    this.closed = true;
    await this.queue;
    this.forgetPrepared();
    this.connection.closeSync();
    this.shared.refs--;
    if (this.shared.refs <= 0) {
      if (instances.get(this.path) === this.shared) instances.delete(this.path);
      this.shared.instance.closeSync();
      if (!this.readOnly && !isMemory(this.path)) restrictPermissions(this.path);
    }
    if (!this.readOnly && !isMemory(this.path)) restoreUmask();
  }
}
