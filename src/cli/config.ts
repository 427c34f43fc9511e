/**
 * Configuration: flags > environment > `evsync.config.json` > defaults. Everything wrong here is the user's to fix,
 * so every error is a UsageError (exit 2) that names the key or variable and says what to do.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import type { ZodError } from 'zod';
import { getStream, hasStream, resolveStream } from '../../connectors/index.js';
import { baseUrlProblem, configSchema, type EvsyncConfig, parseDuration, SECRET_KEYS } from '../../schemas/config.js';
import type { Credentials } from '../api/credentials.js';
import { encodeCredentials, secretsOf } from '../api/credentials.js';
import { accountEnvPrefix, selectAccount } from './accounts.js';
import { UsageError } from './errors.js';

const CONFIG_FILE = 'evsync.config.json';
const DEFAULT_DB = './evsync.duckdb';

type Env = Readonly<Record<string, string | undefined>>;

/** The options every command accepts (declared on the program). */
export interface GlobalOptions {
  config?: string;
  db?: string;
  json?: boolean;
  quiet?: boolean;
  verbose?: boolean;
  color?: boolean;
  account?: string;
}

interface LoadedConfig {
  /** Absolute path of the file read, or null when there is none. */
  file: string | null;
  values: EvsyncConfig;
}

export interface ResolvedConfig extends LoadedConfig {
  /** Absolute path of the DuckDB file. */
  db: string;
  /** Where `db` came from, for messages. */
  dbSource: 'flag' | 'EVSYNC_DB' | 'config' | 'default';
  env: Env;
  cwd: string;
  /** The account of `accounts` this run is for; null for a single-account config. */
  account: string | null;
}

function label(file: string, cwd: string): string {
  const rel = relative(cwd, file);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.map((p) => String(p)).join('.');
}

/** One line per problem: `<file>: <key.path>: <what was expected>`. */
function formatConfigIssues(file: string, error: ZodError): string {
  const allowed = Object.keys(configSchema.shape).filter((k) => k !== '$schema');
  const lines: string[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const where = formatPath([...issue.path, key]);
        const hint = issue.path.length === 0 ? ` (allowed: ${allowed.join(', ')})` : '';
        lines.push(`${file}: ${where}: unknown key${hint}`);
      }
    } else {
      lines.push(`${file}: ${formatPath(issue.path) || '(top level)'}: ${issue.message}`);
    }
  }
  return lines.join('\n');
}

/** Keys that would reach an object's prototype machinery when copied or looked up. */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** The dotted path of the first reserved key at any depth of a parsed JSON value, or null. */
function reservedKeyPath(value: unknown, path: readonly string[] = []): string | null {
  if (typeof value !== 'object' || value === null) return null;
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  for (const [key, child] of entries) {
    const here = [...path, key];
    if (!Array.isArray(value) && RESERVED_KEYS.has(key)) return here.join('.');
    const deeper = reservedKeyPath(child, here);
    if (deeper) return deeper;
  }
  return null;
}

/** Reads and validates the config file: the one given with --config, else `evsync.config.json` in cwd if present. */
function loadConfigFile(cwd: string, explicit?: string): LoadedConfig {
  const file = explicit ? resolve(cwd, explicit) : resolve(cwd, CONFIG_FILE);
  if (!existsSync(file)) {
    if (explicit) throw new UsageError(`config file not found: ${file} (given with --config)`);
    return { file: null, values: {} };
  }
  const name = label(file, cwd);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`${name}: not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new UsageError(`${name}: expected a JSON object at the top level`);
  }
  const reserved = reservedKeyPath(raw);
  if (reserved) {
    throw new UsageError(
      `${name}: ${reserved}: a reserved name (__proto__, constructor and prototype are not accepted as keys anywhere in the file)`,
    );
  }
  // A secret in a file ends up in git and backups: refuse it, and never echo its value.
  for (const key of Object.keys(raw)) {
    const variable = Object.hasOwn(SECRET_KEYS, key) ? SECRET_KEYS[key] : undefined;
    if (variable) {
      throw new UsageError(
        `${name}: ${key}: secrets are not read from the config file; remove the key and set ${variable} in the environment`,
      );
    }
  }
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) throw new UsageError(formatConfigIssues(name, parsed.error));
  const values = parsed.data;
  for (const [stream, override] of Object.entries(values.streams ?? {})) {
    if (!hasStream(stream)) {
      throw new UsageError(`${name}: streams.${stream}: unknown stream (list them with \`evsync streams\`)`);
    }
    try {
      resolveStream(getStream(stream), { overrides: override });
    } catch (err) {
      throw new UsageError(`${name}: streams.${stream}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  // Relative paths in the file are relative to the file, not to wherever the command runs.
  if (values.db && !isAbsolute(values.db)) values.db = resolve(dirname(file), values.db);
  return { file, values };
}

export function resolveConfig(flags: GlobalOptions, globalEnv: Env, cwd: string): ResolvedConfig {
  const file = loadConfigFile(cwd, flags.config);
  const requested = flags.account ?? (globalEnv.EVSYNC_ACCOUNT?.trim() || undefined);
  // One account of several: its own db and credentials in place of the shared ones (accounts.ts).
  const selected = selectAccount(file.file, file.values, requested, globalEnv);
  const loaded: LoadedConfig = selected ? { file: file.file, values: selected.values } : file;
  const env = selected ? selected.env : globalEnv;
  const fromEnv = env.EVSYNC_DB?.trim();
  let db: string;
  let dbSource: ResolvedConfig['dbSource'];
  if (flags.db) {
    db = resolve(cwd, flags.db);
    dbSource = 'flag';
  } else if (fromEnv) {
    db = resolve(cwd, fromEnv);
    dbSource = 'EVSYNC_DB';
  } else if (loaded.values.db) {
    db = loaded.values.db;
    dbSource = 'config';
  } else {
    db = resolve(cwd, DEFAULT_DB);
    dbSource = 'default';
  }
  return { ...loaded, db, dbSource, env, cwd, account: selected?.id ?? null };
}

/** What a command that talks to the service needs. */
export interface Connection {
  baseUrl: string;
  credentials: Credentials;
  /** Printable: the client id, or a note that pre-encoded credentials are in use. Never the secret. */
  who: string;
  /** Strings that must never be printed. */
  secrets: string[];
}

const BASE_URL_HELP = 'e.g. export EVSYNC_BASE_URL=https://api.swoogo.com/api/v1';

/** The base URL and credentials, or a UsageError saying exactly which variable to set. */
export function requireConnection(cfg: ResolvedConfig): Connection {
  const env = cfg.env;
  const fileName = cfg.file ? label(cfg.file, cfg.cwd) : CONFIG_FILE;

  let baseUrl = env.EVSYNC_BASE_URL?.trim() || undefined;
  if (baseUrl) {
    const problem = baseUrlProblem(baseUrl);
    if (problem) throw new UsageError(`EVSYNC_BASE_URL ${problem.replace(/^expected/, 'should be')}`);
  } else baseUrl = cfg.values.baseUrl;
  if (!baseUrl) {
    throw new UsageError(`no base URL: set EVSYNC_BASE_URL (${BASE_URL_HELP}) or "baseUrl" in ${fileName}`);
  }
  baseUrl = baseUrl.replace(/\/+$/, '');

  // A line break or control character inside a credential (a stray paste) can only fail at the service, or worse,
  // split a header: refused here, before any call, without echoing the value.
  // The id and the pre-encoded string are used trimmed; the secret as it is.
  const asUsed = {
    EVSYNC_CLIENT_ID: env.EVSYNC_CLIENT_ID?.trim(),
    EVSYNC_CLIENT_SECRET: env.EVSYNC_CLIENT_SECRET,
    EVSYNC_CREDENTIALS: env.EVSYNC_CREDENTIALS?.trim(),
  };
  for (const [variable, value] of Object.entries(asUsed)) {
    if (/[\u0000-\u001f\u007f]/.test(value ?? '')) {
      // An account's credential comes from its own variables (accounts.ts): name the one the user set.
      const named = cfg.account ? variable.replace(/^EVSYNC_/, accountEnvPrefix(cfg.account)) : variable;
      throw new UsageError(
        `${named} holds a line break or another control character: set it again with the value alone (no CR, LF or tab)`,
      );
    }
  }
  const encoded = env.EVSYNC_CREDENTIALS?.trim();
  const clientId = env.EVSYNC_CLIENT_ID?.trim() || cfg.values.clientId;
  const secret = env.EVSYNC_CLIENT_SECRET;
  const secrets = [env.EVSYNC_CLIENT_SECRET, env.EVSYNC_CREDENTIALS].filter((s): s is string => !!s);

  let credentials: Credentials;
  let who: string;
  // Same precedence as the client's credentialsFromEnv: the pre-encoded string wins.
  if (encoded) {
    credentials = { encoded };
    who = 'pre-encoded credentials (EVSYNC_CREDENTIALS)';
    try {
      encodeCredentials(credentials);
    } catch {
      throw new UsageError(
        'EVSYNC_CREDENTIALS is not a base64 string: paste the "Basic" value from the account page, or set EVSYNC_CLIENT_ID and EVSYNC_CLIENT_SECRET instead',
      );
    }
  } else if (clientId && secret) {
    credentials = { clientId, clientSecret: secret };
    who = `client id ${clientId}`;
  } else if (clientId) {
    throw new UsageError(
      `no client secret: set EVSYNC_CLIENT_SECRET to the secret of client id ${clientId} (or set EVSYNC_CREDENTIALS)`,
    );
  } else if (secret) {
    throw new UsageError(
      `no client id: set EVSYNC_CLIENT_ID (or "clientId" in ${fileName}) to go with EVSYNC_CLIENT_SECRET`,
    );
  } else {
    throw new UsageError(
      'no credentials: set EVSYNC_CLIENT_ID and EVSYNC_CLIENT_SECRET (or EVSYNC_CREDENTIALS, the pre-encoded string from the account page)',
    );
  }
  secrets.push(...secretsOf(credentials));
  return { baseUrl, credentials, who, secrets };
}

/** Values of --max-wait (flag) or `maxWait` (file), in ms; undefined when neither is given. */
export function maxWaitMs(flag: number | undefined, cfg: ResolvedConfig): number | undefined {
  if (flag !== undefined) return flag;
  return cfg.values.maxWait !== undefined ? (parseDuration(cfg.values.maxWait) ?? undefined) : undefined;
}
