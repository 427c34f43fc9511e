/**
 * Config with several accounts: which database and which credential a run gets, and what is refused. Pure
 * functions on files in a temp dir (resolveConfig, requireConnection); the lake tests run the CLI end to end.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireConnection, resolveConfig } from '../../src/cli/config.js';
import { tempDir, writeConfig } from './helpers.js';

let dir: string;
let cleanup: () => void;
beforeAll(() => {
  ({ dir, cleanup } = tempDir('evsync-accounts-'));
  writeConfig(dir, {
    baseUrl: 'https://api.example.com/api/v1',
    clientId: 'shared-id',
    lake: { region: 'eu-west-1' },
    accounts: { northwind: { db: 'nw/northwind.duckdb', clientId: 'nw-id' }, 'contoso-eu': {} },
  });
});
afterAll(() => cleanup());

describe('accounts', () => {
  it('--account picks the database and the credential of that account only', () => {
    const env = {
      EVSYNC_DB: '/elsewhere/plain.duckdb',
      EVSYNC_CLIENT_ID: 'plain-id',
      EVSYNC_CLIENT_SECRET: 'plain-secret',
      EVSYNC_NORTHWIND_CLIENT_SECRET: 'nw-secret',
    };
    const cfg = resolveConfig({ account: 'northwind' }, env, dir);
    expect(cfg.account).toBe('northwind');
    expect(cfg.db).toBe(join(dir, 'nw', 'northwind.duckdb'));
    const conn = requireConnection(cfg);
    expect(conn.credentials).toEqual({ clientId: 'nw-id', clientSecret: 'nw-secret' });
  });

  it('never falls back to the plain EVSYNC_CLIENT_* variables, nor to the shared clientId', () => {
    const env = { EVSYNC_CLIENT_ID: 'plain-id', EVSYNC_CLIENT_SECRET: 'plain-secret', EVSYNC_ACCOUNT: 'contoso-eu' };
    const cfg = resolveConfig({}, env, dir);
    expect(cfg.account).toBe('contoso-eu');
    expect(cfg.db).toBe(join(dir, 'evsync-contoso-eu.duckdb'));
    expect(() => requireConnection(cfg)).toThrow(/no credentials/);
    const own = resolveConfig(
      {},
      { ...env, EVSYNC_CONTOSO_EU_CREDENTIALS: Buffer.from('c-id:c-secret').toString('base64') },
      dir,
    );
    expect(requireConnection(own).who).toContain('EVSYNC_CREDENTIALS');
  });

  it('EVSYNC_<ID>_DB and --db choose the database; the plain EVSYNC_DB does not', () => {
    expect(resolveConfig({ account: 'northwind' }, { EVSYNC_NORTHWIND_DB: 'x.duckdb' }, dir).db).toBe(
      join(dir, 'x.duckdb'),
    );
    expect(resolveConfig({ account: 'northwind', db: 'flag.duckdb' }, {}, dir).db).toBe(join(dir, 'flag.duckdb'));
  });

  it('refuses no choice among several, an unknown account, and --account without accounts (exit 2 errors)', () => {
    expect(() => resolveConfig({}, {}, dir)).toThrow(/names 2 accounts \(contoso-eu, northwind\): choose one/);
    expect(() => resolveConfig({ account: 'fabrikam' }, {}, dir)).toThrow(/no account fabrikam/);
    writeConfig(dir, { db: 'one.duckdb' }, 'single.json');
    expect(() => resolveConfig({ config: 'single.json', account: 'northwind' }, {}, dir)).toThrow(
      /names no "accounts"/,
    );
  });

  it('a config without accounts is the single-account config it was', () => {
    writeConfig(dir, { baseUrl: 'https://api.example.com/api/v1', db: 'one.duckdb', clientId: 'id-1' }, 'plain.json');
    const cfg = resolveConfig({ config: 'plain.json' }, { EVSYNC_DB: 'env.duckdb', EVSYNC_CLIENT_SECRET: 's' }, dir);
    expect(cfg.account).toBeNull();
    expect(cfg.db).toBe(join(dir, 'env.duckdb'));
    expect(requireConnection(cfg).credentials).toEqual({ clientId: 'id-1', clientSecret: 's' });
  });

  it('validates accounts and lake strictly, naming the key', () => {
    writeConfig(dir, { accounts: { 'Bad Id': {} } }, 'bad1.json');
    expect(() => resolveConfig({ config: 'bad1.json' }, {}, dir)).toThrow(
      /accounts\.Bad Id: expected an object keyed by account ids \(1-63 of a-z/,
    );
    writeConfig(dir, { lake: { partSizeMiB: 4 } }, 'bad2.json');
    expect(() => resolveConfig({ config: 'bad2.json' }, {}, dir)).toThrow(
      /lake\.partSizeMiB: expected an integer from 5/,
    );
    writeConfig(dir, { lake: { secretAccessKey: 'x' } }, 'bad3.json');
    expect(() => resolveConfig({ config: 'bad3.json' }, {}, dir)).toThrow(/lake\.secretAccessKey: unknown key/);
    writeConfig(dir, { lake: { endpoint: 'ftp://x' } }, 'bad4.json');
    expect(() => resolveConfig({ config: 'bad4.json' }, {}, dir)).toThrow(/lake\.endpoint: expected an http\(s\) URL/);
  });
});
