/**
 * `src/warehouse/db/`: the DuckDB connection: opening the file, SQL text helpers, the warehouse's errors, and the
 * reading of SQL a person types (statement-check.ts, sql-tokens.ts, json-values.ts).
 *
 * Opening the database file and talking to it: owner-only permissions, a clear error when another process holds
 * the file, one connection per open warehouse with its operations run one at a time.
 */

import { chmodSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  DuckDBConnection,
  DuckDBInstance,
  type DuckDBPreparedStatement,
  type DuckDBValue,
  type Json,
  StatementType,
} from '@duckdb/node-api';
import { utcText } from '../../../connectors/service.js';
import { type Now, systemNow } from '../../../schemas/clock.js';
import { DatabaseInUseError, lockHolderPid, WarehouseError } from './errors.js';
import { exactJsonConverter, exactTextConverter, type ValueForm } from './json-values.js';
import { ident } from './sql.js';
import { refusalMessage, type StatementRules, statementRefusal } from './statement-check.js';

export type ScalarJson = string | number | boolean | null;
export type ResultRow = Record<string, ScalarJson>;
export interface QueryResult {
  columns: string[];
  rows: ResultRow[];
}

/** A result for output: column types as DuckDB prints them, values as real JSON (see json-values.ts). */
export interface JsonQueryResult {
  columns: { name: string; type: string }[];
  rows: Record<string, Json>[];
}

/** SQL that `readQuery` will not run: it could write, or change the sandbox. */
export class QueryRefusedError extends WarehouseError {
  override name = 'QueryRefusedError';
}

/** A query stopped before it finished: its time limit passed, the client went away, or the process is stopping. */
export class QueryCancelledError extends WarehouseError {
  override name = 'QueryCancelledError';
}

/** A result larger than the caller's bound (rows or bytes): stopped reading instead of holding it all in memory. */
export class QueryTooLargeError extends WarehouseError {
  override name = 'QueryTooLargeError';
}

/** Bounds on one `readQuery`: rows and JSON bytes of the result, and a signal that interrupts it. */
export interface QueryLimits {
  /** Most rows the last statement may return (0 or absent: no bound). */
  maxRows?: number;
  /**
   * Which row bound this is and how to change it, said among the refusal's remedies (between "add a LIMIT or an
   * aggregate" and "write it with `evsync export`"): the caller knows which of several bounds binds. Default
   * `raise --max-rows`, the one-shot `evsync query`'s own bound.
   */
  maxRowsHint?: string;
  /** Most bytes of the result as JSON text (0 or absent: no bound). */
  maxBytes?: number;
  /** As `maxRowsHint`, for the byte bound; default none (the one-shot `evsync query` sets no byte bound). */
  maxBytesHint?: string;
  /** Aborting it interrupts the statement running (DuckDB's own interrupt) and rejects with QueryCancelledError. */
  signal?: AbortSignal;
}

/** Statement types `readQuery` lets DuckDB run: SELECT (with DESCRIBE, SHOW, SUMMARIZE, FROM-first, PIVOT). */
const READING_STATEMENTS = new Set<StatementType>([StatementType.SELECT]);

const STATEMENT_NAMES: Partial<Record<StatementType, string>> = {
  [StatementType.INSERT]: 'INSERT',
  [StatementType.UPDATE]: 'UPDATE',
  [StatementType.DELETE]: 'DELETE',
  [StatementType.CREATE]: 'CREATE',
  [StatementType.ALTER]: 'ALTER',
  [StatementType.DROP]: 'DROP',
  [StatementType.COPY]: 'COPY',
  [StatementType.EXPORT]: 'EXPORT',
  [StatementType.ATTACH]: 'ATTACH',
  [StatementType.DETACH]: 'DETACH',
  [StatementType.LOAD]: 'INSTALL/LOAD',
  [StatementType.SET]: 'SET/RESET/USE',
  [StatementType.VARIABLE_SET]: 'SET VARIABLE',
  [StatementType.PRAGMA]: 'PRAGMA',
  [StatementType.CALL]: 'CALL',
  [StatementType.TRANSACTION]: 'BEGIN/COMMIT',
  [StatementType.VACUUM]: 'VACUUM',
  [StatementType.EXPLAIN]: 'EXPLAIN',
  [StatementType.COPY_DATABASE]: 'COPY FROM DATABASE',
};

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
 * - The allocator returns freed memory to the system once a bulk deallocation passes 32 MB (DuckDB's default: 512 MB):
 *   on the replay bench the process ended smaller at the same CPU.
 */
const INSTANCE_OPTIONS: Record<string, string> = {
  enable_external_file_cache: 'false',
  checkpoint_threshold: '64MB',
  allocator_bulk_deallocation_flush_threshold: '32MB',
};
export const DEFAULT_MEMORY_LIMIT = '160MB';
/**
 * The limit while pages load (Warehouse switches to it and back): on the replay bench (bench/replay-child.ts,
 * bench/results/replay.json) DuckDB's share of the process's memory shrank with it (jemalloc and the merge's temp
 * tables hold more than the buffer manager counts). Not for everything: the long custom-field view over `history`
 * ran out of it.
 */
export const LOAD_MEMORY_LIMIT = '100MB';

/** `limit` in bytes (DuckDB's `160MB`, `1GiB`, ...), or null when it is not a plain size. */
export function memoryLimitBytes(limit: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(KB|KiB|MB|MiB|GB|GiB)\s*$/i.exec(limit);
  if (!m) return null;
  const unit = (m[2] as string).toLowerCase();
  const scale = { kb: 1e3, kib: 1024, mb: 1e6, mib: 1_048_576, gb: 1e9, gib: 1_073_741_824 }[unit] as number;
  return Number(m[1]) * scale;
}

/**
 * How the database file is attached. Each block of a table's column is a segment, and DuckDB keeps every segment's
 * description (statistics, compression state) in memory outside its buffer manager once the table has been read or
 * appended to: with 16 KB blocks the process's memory grew with the table it loaded. DuckDB's default 256 KB blocks
 * make a sixteenth of the segments, and memory stays nearly flat as the table grows (bench/results/replay.json, RSS
 * growth). (16 KB blocks were chosen when a stream table had a column per custom field: appending allocates a block
 * per column. Custom fields are now one column.) Every attach gets 32k-row row groups. Files made by earlier
 * versions keep their block size (DuckDB refuses another): they are attached with `EXISTING_FILE_OPTIONS`.
 */
export const EXISTING_FILE_OPTIONS = 'ROW_GROUP_SIZE 32768';
export const NEW_FILE_OPTIONS = `BLOCK_SIZE 262144, ${EXISTING_FILE_OPTIONS}`;

/**
 * The layout of the copies made beside a running warehouse (the readers' snapshot, the query copy): small blocks
 * and row groups. Such a copy is written by the writer's instance under its memory limit, and with 256 KB blocks
 * `COPY FROM DATABASE` of a `medium` warehouse ran out of the writer's limit; with these it fits.
 */
export const COPY_FILE_OPTIONS = `BLOCK_SIZE 16384, ${EXISTING_FILE_OPTIONS}`;

/**
 * A sandboxed instance (for SQL the user types): read-only, no file system access except `allowRead`, no spill
 * files, and its configuration locked so no `SET` can undo any of that. Measured on 1.5.5:
 * - `enable_external_access=false` refuses COPY TO (even over the warehouse file itself), ATTACH, INSTALL/LOAD,
 *   EXPORT DATABASE and every read_* of a file outside `allowed_directories`;
 * - `allowed_directories` cannot be given as an instance option (a list: "Failed to set config") and cannot be set
 *   once external access is off, so it is SET first, on the fresh instance, before any user SQL runs;
 * - DuckDB adds its temp directory (`<db>.tmp/`) to the allowed ones: `temp_directory=''` removes it (no spilling);
 * - without `lock_configuration`, `SET profiling_output`/`PRAGMA enable_profiling` still run (and break later
 *   queries), as does `SET threads`; locked, every SET/RESET/PRAGMA setting is refused.
 * An allowed directory admits writes too (COPY TO), and DuckDB checks it as a text prefix (`dir/../x` passes):
 * the statement check in `readQuery` is what keeps COPY and friends out when `allowRead` is given.
 */
export interface Sandbox {
  /** Folders whose files SQL may read (absolute paths). */
  allowRead: readonly string[];
}

interface SharedInstance {
  instance: DuckDBInstance;
  refs: number;
  readOnly: boolean;
  /** The sandbox it was opened with, as a comparable key; null when not sandboxed. */
  sandbox: string | null;
  /** The attached file's catalog, made the default of every connection (null for an in-memory database). */
  catalog: string | null;
  /** File copies under way (see Db.holdCheckpoints), and what resolves when the last ends. */
  checkpointHolds: number;
  holdsEnded: Promise<void> | null;
  endHolds: (() => void) | null;
  /** See Db.memo: one per instance, since every connection of it sees the same committed rows. */
  memo: Map<string, number>;
}

const NO_HOLDS = { checkpointHolds: 0, holdsEnded: null, endHolds: null } as const;

/** While a file copy holds checkpoints off: DuckDB checkpoints when the WAL passes this (INSTANCE_OPTIONS: 64MB). */
const HELD_CHECKPOINT_THRESHOLD = '1000000GB';

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

/**
 * Holds the owner-only umask (as an open writable warehouse does) until the returned function is called: files and
 * folders DuckDB creates meanwhile (Parquet exports) are never readable by others, not even while being written.
 */
export function holdOwnerOnlyUmask(): () => void {
  tightenUmask();
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    restoreUmask();
  };
}

/** Owner read/write only on the database file and its WAL, whatever created them. */
function restrictPermissions(path: string): void {
  for (const file of [path, `${path}.wal`]) {
    if (existsSync(file)) chmodSync(file, 0o600);
  }
}

function isMemory(path: string): boolean {
  return path === ':memory:' || path === '';
}

function sandboxKey(sandbox: Sandbox | undefined): string | null {
  return sandbox ? JSON.stringify([...sandbox.allowRead].sort()) : null;
}

/** DuckDB lists are SQL literals: `['/a/', '/b/']`. */
function sqlList(items: readonly string[]): string {
  return `[${items.map((i) => `'${i.replaceAll("'", "''")}'`).join(', ')}]`;
}

/** Applies the sandbox to a fresh instance (see `Sandbox`), then checks DuckDB really holds it. */
async function applySandbox(instance: DuckDBInstance, sandbox: Sandbox): Promise<void> {
  const connection = await DuckDBConnection.create(instance);
  try {
    await connection.run(`SET temp_directory = ''`);
    // A trailing slash: DuckDB matches allowed directories as prefixes, so `/data` would also admit `/data-other`.
    const dirs = sandbox.allowRead.map((d) => (d.endsWith('/') ? d : `${d}/`));
    if (dirs.length) await connection.run(`SET allowed_directories = ${sqlList(dirs)}`);
    await connection.run('SET enable_external_access = false');
    await connection.run('SET lock_configuration = true');
    const reader = await connection.runAndReadAll(
      `SELECT name, value FROM duckdb_settings() WHERE name IN ('enable_external_access', 'lock_configuration')`,
    );
    const settings = Object.fromEntries(reader.getRowObjectsJson().map((r) => [String(r.name), String(r.value)]));
    if (settings.enable_external_access !== 'false' || settings.lock_configuration !== 'true') {
      throw new Error(`the SQL sandbox did not take effect (${JSON.stringify(settings)})`);
    }
  } finally {
    connection.closeSync();
  }
}

/** Attaches the file to an instance; returns its catalog name (the file's name without extension, as DuckDB infers). */
async function attach(instance: DuckDBInstance, path: string, readOnly: boolean): Promise<string> {
  const connection = await DuckDBConnection.create(instance);
  try {
    const options = readOnly ? 'READ_ONLY' : existsSync(path) ? EXISTING_FILE_OPTIONS : NEW_FILE_OPTIONS;
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

async function acquire(
  path: string,
  readOnly: boolean,
  memoryLimit: string,
  sandbox?: Sandbox,
): Promise<SharedInstance> {
  const key = sandboxKey(sandbox);
  const existing = instances.get(path) ?? (await opening.get(path));
  if (existing) {
    if (existing.readOnly && !readOnly) {
      throw new Error(
        `database ${path} is already open read-only in this process; close it before opening it for writing`,
      );
    }
    // One instance per file: sharing it would hand a sandboxed caller an open one, or the reverse.
    if (existing.sandbox !== key) {
      throw new Error(
        `database ${path} is already open in this process ${existing.sandbox === null ? 'without' : 'with another'} SQL sandbox; close it first`,
      );
    }
    existing.refs++;
    return existing;
  }
  const promise = (async () => {
    // The instance itself is in memory; the file is attached to it with options only ATTACH takes.
    // An in-memory instance would spill to `.tmp` in the working directory: spills hold table data, so they go
    // beside the database file (as DuckDB does for a file it opens itself), where the umask keeps them private.
    const attachReadOnly = readOnly || sandbox !== undefined;
    const options = {
      ...INSTANCE_OPTIONS,
      ...(attachReadOnly ? {} : { memory_limit: memoryLimit }),
      ...(isMemory(path) ? {} : { temp_directory: `${path}.tmp` }),
    };
    let instance: DuckDBInstance | null = null;
    try {
      instance = await DuckDBInstance.create(':memory:', options);
      const catalog = isMemory(path) ? null : await attach(instance, path, attachReadOnly);
      // The sandbox goes on after the file is attached (ATTACH is one of the things it then refuses).
      if (sandbox) await applySandbox(instance, sandbox);
      const shared: SharedInstance = {
        instance,
        refs: 1,
        readOnly: attachReadOnly,
        catalog,
        sandbox: key,
        ...NO_HOLDS,
        memo: new Map(),
      };
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

/** What to do about a result past a bound: the same remedies for both bounds, with the caller's word on the bound. */
function remedies(hint: string | undefined): string {
  return `add a LIMIT or an aggregate, ${hint ? `${hint}, ` : ''}or write it with \`evsync export\` (Parquet) instead`;
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
      if (value instanceof Date) return utcText(value, 'ms');
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
  private changes = 0;
  // Statements run once per page (merge, cursor, seen ids) are parsed and planned once, not per page.
  private readonly prepared = new Map<string, DuckDBPreparedStatement>();

  private constructor(
    readonly path: string,
    readonly readOnly: boolean,
    private readonly connection: DuckDBConnection,
    private readonly shared: SharedInstance,
    /** This open created the process's instance on the file (no other warehouse of this process has it open). */
    readonly firstOpen: boolean,
    /** The clock of every time this connection writes (synced, recorded, started and finished at). */
    readonly now: Now = systemNow,
  ) {}

  /** Opened with a sandbox (see `Sandbox`), and whether it lets SQL reach any folder. */
  get sandbox(): { allowsFiles: boolean } | null {
    if (this.shared.sandbox === null) return null;
    return { allowsFiles: this.shared.sandbox !== '[]' };
  }

  /** `memoryLimit` applies when this open creates the process's instance on the file (writing). */
  static async open(
    path: string,
    readOnly: boolean,
    opts: { memoryLimit?: string | undefined; sandbox?: Sandbox | undefined; now?: Now | undefined } = {},
  ): Promise<Db> {
    const { sandbox, memoryLimit = DEFAULT_MEMORY_LIMIT } = opts;
    const full = isMemory(path) ? ':memory:' : resolve(path);
    if (sandbox) readOnly = true;
    if (!readOnly && !isMemory(full)) tightenUmask();
    let shared: SharedInstance;
    try {
      shared = await acquire(full, readOnly, memoryLimit, sandbox);
    } catch (err) {
      if (!readOnly && !isMemory(full)) restoreUmask();
      if (err instanceof DatabaseInUseError) throw new DatabaseInUseError(path, err.pid, err.holder);
      throw err;
    }
    if (!readOnly && !isMemory(full)) restrictPermissions(full);
    const connection = await DuckDBConnection.create(shared.instance);
    if (shared.catalog !== null) await connection.run(`USE ${ident(shared.catalog)}`);
    return new Db(full, readOnly, connection, shared, shared.refs === 1, opts.now ?? systemNow);
  }

  /**
   * A sandboxed, read-only Db on an instance of its own, never shared (see `acquire`), on a copy of a warehouse
   * (a snapshot): for SQL typed through the daemon that holds the warehouse itself. Never open the live file this
   * way from the process holding it: DuckDB's lock is a POSIX record lock, and closing any descriptor of a file
   * drops every lock the process holds on it, so the daemon would lose its writer lock (measured: after one such
   * query a second `evsync sync` opened the file). `threads` and `memoryLimit` keep a heavy query from taking the
   * cores and memory the daemon's own work needs; there is no spill (the sandbox has no temp directory).
   */
  static async openSnapshotReader(
    path: string,
    sandbox: Sandbox,
    opts: { threads?: number; memoryLimit?: string } = {},
  ): Promise<Db> {
    const full = resolve(path);
    const instance = await DuckDBInstance.create(full, {
      ...INSTANCE_OPTIONS,
      access_mode: 'READ_ONLY',
      ...(opts.threads ? { threads: String(opts.threads) } : {}),
      ...(opts.memoryLimit ? { memory_limit: opts.memoryLimit } : {}),
    });
    try {
      await applySandbox(instance, sandbox);
    } catch (err) {
      instance.closeSync();
      throw err;
    }
    // Opened on the file itself (not attached): its default catalog is the file's, no USE needed.
    const shared: SharedInstance = {
      instance,
      refs: 1,
      readOnly: true,
      sandbox: sandboxKey(sandbox),
      catalog: null,
      ...NO_HOLDS,
      memo: new Map(),
    };
    return new Db(full, true, await DuckDBConnection.create(instance), shared, false);
  }

  /**
   * Numbers derived from the database that a writer keeps instead of reading them again per page (the op log's
   * next seq: archive/op-log.ts), shared by every connection of the instance. Cleared when a transaction rolls
   * back, since what it wrote (and what was derived from it) is gone.
   */
  get memo(): Map<string, number> {
    return this.shared.memo;
  }

  /**
   * Changes committed through this Db (statements and transactions), counted: a reader that copied the warehouse
   * at generation g knows its copy is current while the count is still g.
   */
  get generation(): number {
    return this.changes;
  }

  /**
   * `work` on a connection of its own (same instance, same catalog), outside the exclusive queue: for long reads
   * (copying the database) that must not hold up the writer. DuckDB's MVCC gives it a consistent view while the
   * queue goes on writing. The connection is closed after.
   */
  async sideConnection<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    if (this.closed) throw new Error(`warehouse ${this.path} is closed`);
    const connection = await DuckDBConnection.create(this.shared.instance);
    try {
      if (this.shared.catalog !== null) await connection.run(`USE ${ident(this.shared.catalog)}`);
      return await work(connection);
    } finally {
      connection.closeSync();
    }
  }

  /**
   * Checkpoints the file and keeps DuckDB from checkpointing it again until `releaseCheckpoints`: between two
   * checkpoints DuckDB writes only the WAL and blocks the last checkpoint does not use (large appends, and blocks it
   * freed), so a byte copy of the file made meanwhile is the database as of this checkpoint (query-copy.ts). Call
   * inside `exclusive` (a CHECKPOINT needs no other write transaction of this connection open); false when DuckDB
   * refuses it (another connection's write transaction is open): nothing is held then.
   */
  async holdCheckpoints(): Promise<boolean> {
    try {
      await this.connection.run('CHECKPOINT');
    } catch (err) {
      if (err instanceof Error && /TransactionContext Error/.test(err.message)) return false;
      throw err;
    }
    const shared = this.shared;
    if (shared.checkpointHolds++ === 0) {
      shared.holdsEnded = new Promise((resolve) => {
        shared.endHolds = resolve;
      });
      await this.connection.run(`SET GLOBAL checkpoint_threshold = '${HELD_CHECKPOINT_THRESHOLD}'`);
    }
    return true;
  }

  /** Ends a hold of `holdCheckpoints`; the last one lets DuckDB checkpoint at its threshold again. Outside `exclusive`. */
  async releaseCheckpoints(): Promise<void> {
    const shared = this.shared;
    if (shared.checkpointHolds === 0 || --shared.checkpointHolds > 0) return;
    try {
      await this.exclusive(() =>
        this.connection.run(`SET GLOBAL checkpoint_threshold = '${INSTANCE_OPTIONS.checkpoint_threshold}'`),
      );
    } finally {
      shared.endHolds?.();
      shared.holdsEnded = null;
      shared.endHolds = null;
    }
  }

  /** Whether a file copy holds checkpoints off now (an explicit CHECKPOINT must wait: see Warehouse.checkpoint). */
  get checkpointsHeld(): boolean {
    return this.shared.checkpointHolds > 0;
  }

  /** The catalog name of the attached file (null in memory): what `COPY FROM DATABASE` copies. */
  get catalog(): string | null {
    return this.shared.catalog;
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
    this.changes++;
    return Number(result.rowsChanged);
  }

  /**
   * `run` for a write no reader needs to see at once (the daemon's heartbeat): not counted in `generation`, so an idle
   * daemon's next query reuses its copy instead of copying the whole warehouse again for a timestamp.
   */
  async runUncounted(sql: string, params: readonly unknown[] = []): Promise<void> {
    await this.connection.run(sql, params.length ? params.map(toParam) : undefined);
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

  /**
   * Runs SQL a person typed: every statement must be a reading one, judged first by evsync's own reading of the
   * text (statement-check.ts: nothing it refuses reaches DuckDB's parser), then by DuckDB's statement type once
   * prepared, before anything runs; returns the last statement's result with typed columns and exact JSON values.
   * EXPLAIN passes only on a sandbox that reaches no folder: `EXPLAIN ANALYZE` runs the statement it explains, and
   * an allowed folder would let an explained COPY write there.
   */
  async readQuery(sql: string, form: ValueForm = 'json', limits: QueryLimits = {}): Promise<JsonQueryResult> {
    const rules: StatementRules = { explain: this.sandbox?.allowsFiles === false };
    const refusal = statementRefusal(sql, rules);
    if (refusal !== null) throw new QueryRefusedError(refusal);
    const extracted = await this.connection.extractStatements(sql);
    if (extracted.count === 0) throw new QueryRefusedError('no SQL statement to run');
    const statements: DuckDBPreparedStatement[] = [];
    try {
      for (let i = 0; i < extracted.count; i++) {
        let stmt: DuckDBPreparedStatement;
        try {
          stmt = await extracted.prepare(i);
        } catch (err) {
          // DuckDB binds file readers while preparing: the sandbox refuses those outside --allow-read right here.
          const message = err instanceof Error ? err.message : String(err);
          if (/^Permission Error/i.test(message)) {
            throw new QueryRefusedError(message);
          }
          throw err;
        }
        statements.push(stmt);
        // The second line: DuckDB's own statement type, should the text check above ever read a statement wrong.
        const type = stmt.statementType;
        const explainOk = type === StatementType.EXPLAIN && rules.explain;
        if (!READING_STATEMENTS.has(type) && !explainOk) {
          const what = STATEMENT_NAMES[type] ?? `statement type ${type}`;
          throw new QueryRefusedError(refusalMessage(what, i, extracted.count, rules));
        }
      }
      let last: JsonQueryResult = { columns: [], rows: [] };
      const convert = form === 'json' ? exactJsonConverter : exactTextConverter;
      for (const stmt of statements) last = await this.readBounded(stmt, convert, limits);
      return last;
    } finally {
      for (const stmt of statements) stmt.destroySync();
    }
  }

  /**
   * Reads one statement's result a chunk at a time (DuckDB streams it), stopping at the bounds instead of holding
   * the whole result; the signal interrupts DuckDB itself, so a cancelled query stops using the cores too.
   */
  private async readBounded(
    stmt: DuckDBPreparedStatement,
    convert: typeof exactJsonConverter,
    limits: QueryLimits,
  ): Promise<JsonQueryResult> {
    const { maxRows = 0, maxBytes = 0, signal, maxRowsHint = 'raise --max-rows', maxBytesHint } = limits;
    const cancelled = () =>
      new QueryCancelledError(
        `query cancelled: ${signal?.reason instanceof Error ? signal.reason.message : String(signal?.reason ?? 'stopped')}`,
      );
    if (signal?.aborted) throw cancelled();
    const interrupt = () => this.connection.interrupt();
    signal?.addEventListener('abort', interrupt, { once: true });
    try {
      const result = await stmt.stream();
      // Types from the result, not from its vectors: only these keep the JSON alias of a top-level column.
      const types = result.columnTypes();
      // Names made unique (`id`, `id_1`) so that no column of a join overwrites another in the row objects.
      const names = result.deduplicatedColumnNames();
      const rows: Record<string, Json>[] = [];
      let bytes = 0;
      for (;;) {
        const chunk = await result.fetchChunk();
        if (signal?.aborted) throw cancelled();
        if (!chunk || chunk.rowCount === 0) break;
        for (const values of chunk.getRows()) {
          const row: Record<string, Json> = {};
          names.forEach((name, i) => {
            const type = types[i];
            row[name] = type ? convert(values[i] ?? null, type, convert) : null;
          });
          rows.push(row);
          if (maxRows > 0 && rows.length > maxRows) {
            throw new QueryTooLargeError(
              `the result has more than ${maxRows.toLocaleString('en-US')} rows: ${remedies(maxRowsHint)}`,
            );
          }
          if (maxBytes > 0) {
            bytes += JSON.stringify(row).length + 1;
            if (bytes > maxBytes) {
              throw new QueryTooLargeError(
                `the result is larger than ${Math.round(maxBytes / 1048576)} MB: ${remedies(maxBytesHint)}`,
              );
            }
          }
        }
      }
      return { columns: names.map((name, i) => ({ name, type: types[i]?.toString() ?? 'UNKNOWN' })), rows };
    } catch (err) {
      if (signal?.aborted && !(err instanceof QueryCancelledError)) throw cancelled();
      throw err;
    } finally {
      signal?.removeEventListener('abort', interrupt);
    }
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
    this.changes++;
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
      this.shared.memo.clear();
      try {
        await this.connection.run('ROLLBACK');
      } catch {
        // A failed statement may already have aborted the transaction; the original error is the one to report.
      }
      throw err;
    }
    try {
      await this.connection.run('COMMIT');
    } catch (err) {
      // A refused commit (a conflict) rolled back all the same.
      this.shared.memo.clear();
      throw err;
    }
    this.changes++;
    return result;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // A file copy under way ends first: closing the instance checkpoints the file under it.
    if (this.shared.refs <= 1) await this.shared.holdsEnded;
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
