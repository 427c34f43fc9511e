/**
 * What a command's action works with: the streams, a logger, the resolved configuration, and factories for the API
 * client and the warehouse. DuckDB and undici are imported lazily here, so `evsync --help` stays fast.
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { type Now, systemNow } from '../../schemas/clock.js';
import type { ApiClient } from '../api/index.js';
import type { ArchiveRemote, Sandbox, Warehouse } from '../warehouse/index.js';
import {
  type Connection,
  type GlobalOptions,
  maxWaitMs,
  type ResolvedConfig,
  requireConnection,
  resolveConfig,
} from './config.js';
import { CliError, errorMessage, UsageError } from './errors.js';
import type { CliIo, ScrubbedStream } from './output/io.js';
import { createLogger, type Logger, type Verbosity } from './output/logger.js';
import { colorWanted, createStyle, type Style } from './output/style.js';
import { notADatabase, warehouseUnreadable, warehouseWritable } from './warehouse-path.js';

/** State of one `main()` call, shared by every command registered on its program. */
export interface App {
  io: CliIo;
  /** The arguments as given (without node and the script), to tell the user what to run again. */
  argv: readonly string[];
  stdout: ScrubbedStream;
  stderr: ScrubbedStream;
  /** Set by the command's action; `main` returns it. */
  exitCode: number;
  /** Known once a command starts; `main` prints stacks only when verbose. */
  verbosity: Verbosity;
}

export interface Ctx {
  app: App;
  io: CliIo;
  out: ScrubbedStream;
  err: ScrubbedStream;
  log: Logger;
  /** Styling for stderr (logs, progress). */
  style: Style;
  /** Styling for stdout (results): plain when stdout is piped even if stderr is a terminal. */
  outStyle: Style;
  config: ResolvedConfig;
  json: boolean;
  verbosity: Verbosity;
  /** Live progress is for a person at a terminal: not when piped, with --json or with --quiet. */
  showProgress: boolean;
  /** The one clock of the command: every component it composes reads the time from it (schemas/clock.ts). */
  now: Now;
}

function createContext(app: App, cmd: Command): Ctx {
  const g = cmd.optsWithGlobals<GlobalOptions>();
  if (g.quiet && g.verbose) throw new UsageError('--quiet and --verbose cannot be used together');
  const verbosity: Verbosity = g.quiet ? 'quiet' : g.verbose ? 'verbose' : 'normal';
  app.verbosity = verbosity;
  const style = createStyle(colorWanted(app.stderr, app.io.env, g.color));
  const outStyle = createStyle(colorWanted(app.stdout, app.io.env, g.color));
  const log = createLogger(app.stderr, style, verbosity);
  const config = resolveConfig(g, app.io.env, app.io.cwd);
  if (config.file) log.debug(`config file: ${config.file}`);
  log.debug(`database: ${config.db} (from ${config.dbSource})`);
  const json = g.json === true;
  return {
    app,
    io: app.io,
    out: app.stdout,
    err: app.stderr,
    log,
    style,
    outStyle,
    config,
    json,
    verbosity,
    showProgress: app.stderr.isTTY && !json && verbosity !== 'quiet',
    now: app.io.now ?? systemNow,
  };
}

/** Base URL and credentials, with their secrets registered for scrubbing before anything can print them. */
export function connection(ctx: Ctx): Connection {
  const conn = requireConnection(ctx.config);
  ctx.out.addSecrets(conn.secrets);
  ctx.err.addSecrets(conn.secrets);
  ctx.log.debug(`service: ${conn.baseUrl} as ${conn.who}`);
  return conn;
}

interface ClientFlags {
  budget?: number | undefined;
  maxWait?: number | undefined;
  concurrency?: number | undefined;
}

export async function createClient(ctx: Ctx, conn: Connection, flags: ClientFlags = {}): Promise<ApiClient> {
  const { ApiClient } = await import('../api/index.js');
  const v = ctx.config.values;
  const budget = flags.budget ?? v.budget;
  const wait = maxWaitMs(flags.maxWait, ctx.config);
  const client = new ApiClient({
    baseUrl: conn.baseUrl,
    credentials: conn.credentials,
    now: ctx.now,
    ...(v.rateLimit ? { rateLimit: { limit: v.rateLimit.credits, windowMs: v.rateLimit.windowSeconds * 1000 } } : {}),
    ...(v.reserveCredits !== undefined ? { reserveCredits: v.reserveCredits } : {}),
    ...(wait !== undefined ? { maxWaitMs: wait } : {}),
    ...(budget !== undefined ? { runBudget: budget } : {}),
  });
  ctx.log.debug(
    `client: budget ${budget ?? 'unlimited'}, max wait ${wait === undefined ? 'unlimited' : `${wait} ms`}, rate limit ${
      v.rateLimit ? `${v.rateLimit.credits}/${v.rateLimit.windowSeconds}s` : 'service default'
    }`,
  );
  return client;
}

interface OpenOptions {
  readOnly?: boolean;
  /** For SQL the user types: read-only, no file access except these folders, configuration locked. */
  sandbox?: Sandbox;
  /** Fail with a helpful message instead of creating an empty database. */
  mustExist?: boolean;
  /** DuckDB's memory limit for this open, loads included (default 160MB, 100MB while loading: see warehouse.ts). */
  memoryLimit?: string;
  /** A daemon that publishes for readers: changes are recorded as owed to them (warehouse.ts `publishing`). */
  publishing?: boolean;
}

/**
 * Refuses a `--db` that cannot be the warehouse (a folder, a folder that does not exist or refuses files, an
 * unreadable file) as a usage error, said as `check` says it, never in DuckDB's words. `write`: a run will write it.
 */
export function checkWarehousePath(ctx: Ctx, { write = true }: { write?: boolean } = {}): void {
  const problem = write ? warehouseWritable(ctx.config.db) : warehouseUnreadable(ctx.config.db);
  if (problem) throw new UsageError(problem);
}

export async function openWarehouse(ctx: Ctx, opts: OpenOptions = {}): Promise<Warehouse> {
  const db = ctx.config.db;
  if (opts.mustExist && !existsSync(db)) {
    throw new CliError(`no warehouse at ${db}: run \`evsync sync\` first, or point --db / EVSYNC_DB at it`);
  }
  checkWarehousePath(ctx, { write: opts.readOnly !== true && opts.sandbox === undefined });
  const { Warehouse, DatabaseInUseError } = await import('../warehouse/index.js');
  const archiveRemote = await archiveRemoteFor(ctx, opts);
  try {
    return await Warehouse.open(db, {
      ...(archiveRemote ? { archiveRemote } : {}),
      readOnly: opts.readOnly === true,
      now: ctx.now,
      ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
      ...(opts.memoryLimit ? { memoryLimit: opts.memoryLimit, sameLimitWhileLoading: true } : {}),
      ...(opts.publishing ? { publishing: true } : {}),
    });
  } catch (err) {
    archiveRemote?.close?.();
    if (err instanceof DatabaseInUseError) {
      throw new CliError(`${errorMessage(err)}. Once it has closed the file (finished, or stopped), try again`);
    }
    const foreign = notADatabase(db, err);
    if (foreign) throw new UsageError(foreign);
    throw err;
  }
}

/** The lake the archive's segments go to (`archive.to`), for an open that writes or rebuilds from them. */
async function archiveRemoteFor(ctx: Ctx, opts: OpenOptions): Promise<ArchiveRemote | null> {
  const to = ctx.config.values.archive?.to;
  if (!to || opts.sandbox !== undefined) return null;
  const [{ openArchiveRemote }, { outputSettings }] = await Promise.all([
    import('../outputs/archive-remote.js'),
    import('./output-settings.js'),
  ]);
  try {
    return await openArchiveRemote(outputSettings(ctx), to);
  } catch (err) {
    throw new UsageError(errorMessage(err));
  }
}

/** Opens the warehouse as `openWarehouse` does, runs `use` on it, and closes it whatever `use` does. */
export async function withWarehouse<T>(ctx: Ctx, opts: OpenOptions, use: (w: Warehouse) => Promise<T>): Promise<T> {
  const w = await openWarehouse(ctx, opts);
  try {
    return await use(w);
  } finally {
    await w.close();
  }
}

/**
 * One AbortSignal for "stop cleanly": the io's stop signal (tests), and SIGINT/SIGTERM for the real process. The
 * first signal asks for a clean stop; the handlers are removed then, so a second Ctrl-C kills the process at once.
 */
export function stopSignal(ctx: Ctx, onStop?: (why: string) => void): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const stop = (why: string) => {
    if (controller.signal.aborted) return;
    onStop?.(why);
    controller.abort(new Error(why));
    removeSignals();
  };
  const onSigint = () => stop('SIGINT');
  const onSigterm = () => stop('SIGTERM');
  const removeSignals = () => {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigterm);
  };
  if (ctx.io.handleSignals) {
    process.once('SIGINT', onSigint);
    process.once('SIGTERM', onSigterm);
  }
  const external = ctx.io.stop;
  const onExternal = () => stop('stop requested');
  if (external?.aborted) stop('stop requested');
  else external?.addEventListener('abort', onExternal, { once: true });
  return {
    signal: controller.signal,
    dispose: () => {
      removeSignals();
      external?.removeEventListener('abort', onExternal);
    },
  };
}

/** Wraps a command body: builds the context, runs it, records the exit code for `main`. */
export function action<O>(
  app: App,
  body: (ctx: Ctx, opts: O, args: string[]) => Promise<number>,
): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command;
    const positional = args.slice(0, -2).filter((a): a is string => typeof a === 'string');
    const ctx = createContext(app, cmd);
    app.exitCode = await body(ctx, cmd.opts() as O, positional);
  };
}
