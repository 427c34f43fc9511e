/**
 * `src/cli/`: the command line: the commands (commands/), the context they share (context.ts: config, clock,
 * client, warehouse), the daemon composed from a command's context, the status document (status/) and page
 * (status-page/), and what a person reads (output/).
 *
 * Several accounts in one config (`"accounts": {"northwind": {...}, "contoso": {...}}`), one per run: `--account
 * <id>` or EVSYNC_ACCOUNT. A config without `accounts` is the single-account config it always was.
 *
 * Each account is a deployment of its own: its own database (so its own cursors, runs and credit ledger), its own
 * credential, its own partition of the lake (`account=<id>`). Its credential comes only from EVSYNC_<ID>_CLIENT_ID
 * (or `clientId` in its entry) with EVSYNC_<ID>_CLIENT_SECRET, or EVSYNC_<ID>_CREDENTIALS: the plain EVSYNC_CLIENT_*
 * variables are ignored for it, so a shell set up for one account can never sync another with the wrong key.
 * Its database is `--db`, else EVSYNC_<ID>_DB, else its entry's `db`, else `evsync-<id>.duckdb` beside the config
 * file (never the plain EVSYNC_DB, for the same reason).
 */
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { EvsyncConfig } from '../../schemas/config.js';
import { UsageError } from './errors.js';

type Env = Readonly<Record<string, string | undefined>>;

interface AccountSelection {
  id: string;
  /** The config as this account sees it: its db, clientId and baseUrl over the shared values. */
  values: EvsyncConfig;
  /** The environment with the account's own variables in place of the plain ones. */
  env: Env;
}

/** `northwind-eu` → `EVSYNC_NORTHWIND_EU_`. */
export function accountEnvPrefix(id: string): string {
  return `EVSYNC_${id.toUpperCase().replace(/-/g, '_')}_`;
}

/**
 * Secrets beyond the plain EVSYNC_* ones, for scrubbing from all output before any command runs: each account's
 * own, and the object store's keys (the access key id too: it names the key, and logs are no place for it).
 */
export function moreSecretsIn(env: Env): string[] {
  return Object.entries(env)
    .filter(
      ([name, value]) =>
        !!value &&
        (/^EVSYNC_.+_(CLIENT_SECRET|CREDENTIALS)$/.test(name) ||
          name === 'AWS_SECRET_ACCESS_KEY' ||
          name === 'AWS_SESSION_TOKEN' ||
          name === 'AWS_ACCESS_KEY_ID'),
    )
    .map(([, value]) => value as string);
}

const OWN = ['CLIENT_ID', 'CLIENT_SECRET', 'CREDENTIALS'] as const;

export function selectAccount(
  file: string | null,
  values: EvsyncConfig,
  requested: string | undefined,
  env: Env,
): AccountSelection | null {
  const accounts = values.accounts;
  const name = file ?? 'the config file';
  if (!accounts || Object.keys(accounts).length === 0) {
    if (requested) {
      throw new UsageError(
        `account ${requested} (${env.EVSYNC_ACCOUNT === requested ? 'EVSYNC_ACCOUNT' : '--account'}): ${name} names no "accounts"; add it there, or drop the option`,
      );
    }
    return null;
  }
  const ids = Object.keys(accounts).sort();
  let id = requested;
  if (!id) {
    if (ids.length !== 1) {
      throw new UsageError(
        `${name} names ${ids.length} accounts (${ids.join(', ')}): choose one with --account <id> or EVSYNC_ACCOUNT`,
      );
    }
    id = ids[0] as string;
  }
  const entry = accounts[id];
  if (!entry) throw new UsageError(`no account ${id} in ${name} (accounts: ${ids.join(', ')})`);

  const prefix = accountEnvPrefix(id);
  const own: Record<string, string | undefined> = { ...env, EVSYNC_DB: env[`${prefix}DB`] };
  for (const key of OWN) own[`EVSYNC_${key}`] = env[`${prefix}${key}`];
  if (env[`${prefix}BASE_URL`]) own.EVSYNC_BASE_URL = env[`${prefix}BASE_URL`];

  const base = file ? dirname(file) : process.cwd();
  const db = entry.db ? (isAbsolute(entry.db) ? entry.db : resolve(base, entry.db)) : join(base, `evsync-${id}.duckdb`);
  const merged: EvsyncConfig = { ...values, db };
  // The shared clientId belongs to no account in particular: only the entry's own is used.
  delete merged.clientId;
  if (entry.clientId) merged.clientId = entry.clientId;
  if (entry.baseUrl) merged.baseUrl = entry.baseUrl;
  return { id, values: merged, env: own };
}
