import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { BufferStream } from '../../src/cli/output/io.js';
import { main } from '../../src/cli/program.js';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../src/simulator/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { type LoopbackProxy, type ProxyRules, startProxy } from '../helpers/proxy.js';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  stop?: AbortSignal;
  tty?: boolean;
  /** Given the live output streams as the command starts, so a test can wait for what it prints. */
  onStart?: (out: { stdout: BufferStream; stderr: BufferStream }) => void;
}

/** Runs the CLI in-process with captured output and only the given environment (never the developer's EVSYNC_*). */
export async function run(argv: string[], opts: RunOptions = {}): Promise<RunResult> {
  const stdout = new BufferStream(false);
  const stderr = new BufferStream(opts.tty === true);
  opts.onStart?.({ stdout, stderr });
  const code = await main(argv, {
    stdout,
    stderr,
    env: { NO_COLOR: '1', ...opts.env },
    cwd: opts.cwd ?? process.cwd(),
    ...(opts.stop ? { stop: opts.stop } : {}),
    handleSignals: false,
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

export function tempDir(prefix = 'evsync-cli-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs `fn` with a temporary folder of its own, removed afterwards whatever happens. */
export async function inTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const { dir, cleanup } = tempDir();
  try {
    return await fn(dir);
  } finally {
    cleanup();
  }
}

export function writeConfig(dir: string, config: unknown, name = 'evsync.config.json'): string {
  const file = join(dir, name);
  writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config, null, 2));
  return file;
}

/**
 * Resolves once `read()` matches `pattern`, polling: a test waits for what the program says, never for a fixed time.
 * The limit only ends a test that would otherwise hang; no assertion depends on how fast the program got there.
 */
export async function waitForText(read: () => string, pattern: RegExp, limitMs = 120_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!pattern.test(read())) {
    if (Date.now() > deadline) throw new Error(`never printed ${pattern}; got:\n${read().slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** What the CLI tests of one file run against when they need a warehouse and no service: see `cliWarehouse`. */
export interface CliWarehouse {
  /** A temporary folder for the file's tests. */
  dir: string;
  /** EVSYNC_DB: `evsync.duckdb` in `dir`. */
  env: Record<string, string>;
}

/**
 * Before the calling file's tests: a temporary folder holding `evsync.duckdb`, filled by `fill` and closed again,
 * and the environment naming it; after them, the folder removed. Read the fields inside tests (set in `beforeAll`).
 */
export function cliWarehouse(prefix: string, fill: (w: Warehouse) => Promise<void>): CliWarehouse {
  const fixture = {} as CliWarehouse;
  let cleanup: (() => void) | undefined;
  beforeAll(async () => {
    ({ dir: fixture.dir, cleanup } = tempDir(prefix));
    const db = join(fixture.dir, 'evsync.duckdb');
    const w = await Warehouse.open(db);
    await fill(w);
    await w.close();
    fixture.env = { EVSYNC_DB: db };
  });
  afterAll(() => cleanup?.());
  return fixture;
}

/**
 * The environment a CLI run needs against the simulator's first account: its base URL (or `baseUrl`, a proxy's),
 * its credentials, and EVSYNC_DB when `db` is given.
 */
export function simulatorEnv(
  sim: Pick<Simulator, 'baseUrl' | 'accounts'>,
  o: { db?: string; baseUrl?: string } = {},
): Record<string, string> {
  const a = sim.accounts[0]!;
  return {
    EVSYNC_BASE_URL: o.baseUrl ?? sim.baseUrl,
    EVSYNC_CLIENT_ID: a.clientId,
    EVSYNC_CLIENT_SECRET: a.clientSecret,
    ...(o.db !== undefined ? { EVSYNC_DB: o.db } : {}),
  };
}

/** What the CLI tests of one file run against: see `simulatedCli`. */
export interface SimulatedCli {
  readonly sim: Simulator;
  /** A temporary folder for the file's tests. */
  readonly dir: string;
  /** EVSYNC_CLIENT_ID and EVSYNC_CLIENT_SECRET of the simulator's first account. */
  readonly creds: Record<string, string>;
  /** The credentials, EVSYNC_BASE_URL (the proxy's when there is one) and, with `db`, EVSYNC_DB in `dir`. */
  readonly env: Record<string, string>;
  /** The proxy in front of the simulator; only with `proxy` rules. */
  readonly proxy: LoopbackProxy;
}

export interface SimulatedCliOptions extends Pick<SimulatorOptions, 'seed' | 'faults' | 'rateLimit'> {
  /** The temporary folder's name prefix (see `tempDir`). */
  prefix?: string;
  /** The warehouse file name in the temporary folder, set as EVSYNC_DB in `env`. */
  db?: string;
  /** Rules of a loopback proxy started in front of the simulator; `env` then points at the proxy. */
  proxy?: ProxyRules;
}

/**
 * Before the calling file's tests: a simulator (tiny data set, a generous rate limit unless `rateLimit` is given:
 * these tests are about the CLI, not about waiting for windows) on a free port, a temporary folder and the environment a CLI run needs; after
 * them, all closed and removed. Read the fields inside tests (they are set in `beforeAll`).
 */
export function simulatedCli(options: SimulatedCliOptions): SimulatedCli {
  let state: (Omit<SimulatedCli, 'proxy'> & { proxy: LoopbackProxy | undefined; cleanup: () => void }) | undefined;
  beforeAll(async () => {
    const { seed, faults, prefix, db, proxy: rules, rateLimit } = options;
    const sim = await startSimulator({
      size: 'tiny',
      seed,
      port: 0,
      rateLimit: rateLimit ?? { credits: 100_000, windowSeconds: 600 },
      ...(faults ? { faults } : {}),
    });
    const proxy = rules ? await startProxy(sim.baseUrl, rules) : undefined;
    const { dir, cleanup } = tempDir(prefix);
    const { EVSYNC_BASE_URL: _base, ...creds } = simulatorEnv(sim);
    const env = simulatorEnv(sim, {
      baseUrl: (proxy ?? sim).baseUrl,
      ...(db !== undefined ? { db: join(dir, db) } : {}),
    });
    state = { sim, dir, creds, env, proxy, cleanup };
  });
  afterAll(async () => {
    await state?.proxy?.close();
    await state?.sim.close();
    state?.cleanup();
  });
  const current = () => {
    if (!state) throw new Error('simulatedCli: read the fixture inside tests, once beforeAll has run');
    return state;
  };
  return {
    get sim() {
      return current().sim;
    },
    get dir() {
      return current().dir;
    },
    get creds() {
      return current().creds;
    },
    get env() {
      return current().env;
    },
    get proxy() {
      const { proxy } = current();
      if (!proxy) throw new Error('simulatedCli: no proxy rules were given');
      return proxy;
    },
  };
}
