import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run, tempDir, writeConfig } from './helpers.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir());
});
afterEach(() => cleanup());

const BASE = { EVSYNC_BASE_URL: 'http://127.0.0.1:9/v1' };

describe('missing connection settings exit 2 naming the variable', () => {
  it.each<{ name: string; argv: string[]; env?: Record<string, string>; says: string[]; never?: string[] }>([
    { name: 'no base URL', argv: ['sync'], says: ['set EVSYNC_BASE_URL'] },
    {
      name: 'no credentials at all',
      argv: ['sync'],
      env: BASE,
      says: ['EVSYNC_CLIENT_ID and EVSYNC_CLIENT_SECRET', 'EVSYNC_CREDENTIALS'],
    },
    {
      name: 'a client id without its secret',
      argv: ['check'],
      env: { ...BASE, EVSYNC_CLIENT_ID: 'abc' },
      says: ['set EVSYNC_CLIENT_SECRET'],
    },
    {
      name: 'a secret without a client id',
      argv: ['plan'],
      env: { ...BASE, EVSYNC_CLIENT_SECRET: 'very-secret-value' },
      says: ['set EVSYNC_CLIENT_ID'],
      never: ['very-secret-value'],
    },
    {
      name: 'a base URL that does not end in /v1',
      argv: ['sync'],
      env: { EVSYNC_BASE_URL: 'https://api.example.com/api', EVSYNC_CLIENT_ID: 'a', EVSYNC_CLIENT_SECRET: 'b' },
      says: ['EVSYNC_BASE_URL', '/v1'],
    },
    {
      name: 'pre-encoded credentials that are not base64',
      argv: ['sync'],
      env: { ...BASE, EVSYNC_CREDENTIALS: 'not base64!!' },
      says: ['EVSYNC_CREDENTIALS'],
      never: ['not base64!!'],
    },
  ])('$name', async ({ argv, env, says, never = [] }) => {
    const r = await run(argv, env ? { cwd: dir, env } : { cwd: dir });
    expect(r.code).toBe(2);
    for (const text of says) expect(r.stderr).toContain(text);
    for (const text of never) expect(r.stderr).not.toContain(text);
  });
});

describe('evsync.config.json', () => {
  it('names a bad value by its key path', async () => {
    writeConfig(dir, { streams: { registrants: { maxPerPage: 'lots' } } });
    const r = await run(['status'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('evsync.config.json: streams.registrants.maxPerPage: expected a positive integer');
  });

  it('rejects unknown keys, at the top level with the allowed ones', async () => {
    writeConfig(dir, { baseURL: 'http://x/v1' });
    const r = await run(['status'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('evsync.config.json: baseURL: unknown key (allowed: baseUrl');
  });

  it('rejects an unknown stream and a bad expand', async () => {
    writeConfig(dir, { streams: { registrant: { maxPerPage: 10 } } });
    let r = await run(['status'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('streams.registrant: unknown stream');
    writeConfig(dir, { streams: { registrants: { expand: ['nope'] } } });
    r = await run(['status'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown expand "nope"');
  });

  it('refuses a secret without printing it', async () => {
    writeConfig(dir, { clientId: 'id-1', clientSecret: 'hunter2-secret' });
    const r = await run(['status'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('clientSecret: secrets are not read from the config file');
    expect(r.stderr).toContain('EVSYNC_CLIENT_SECRET');
    expect(r.stderr + r.stdout).not.toContain('hunter2-secret');
  });

  it('reports invalid JSON and a missing --config file', async () => {
    writeConfig(dir, '{ "db": ');
    let r = await run(['status'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('evsync.config.json: not valid JSON');
    r = await run(['status', '--config', 'nope.json'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('config file not found');
  });

  it('db precedence: flag > EVSYNC_DB > config file > default', async () => {
    const dbOf = async (args: string[], env: Record<string, string> = {}) => {
      const r = await run(['status', '--json', ...args], { cwd: dir, env });
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(r.stdout) as { db: string; exists: boolean }).db;
    };
    expect(await dbOf([])).toBe(join(dir, 'evsync.duckdb'));
    writeConfig(dir, { db: 'from-config.duckdb' });
    expect(await dbOf([])).toBe(join(dir, 'from-config.duckdb'));
    expect(await dbOf([], { EVSYNC_DB: 'from-env.duckdb' })).toBe(join(dir, 'from-env.duckdb'));
    expect(await dbOf(['--db', 'from-flag.duckdb'], { EVSYNC_DB: 'from-env.duckdb' })).toBe(
      join(dir, 'from-flag.duckdb'),
    );
  });

  it('--config points at another file; relative paths in it are relative to that file', async () => {
    writeConfig(dir, { db: 'sub.duckdb' }, 'other.json');
    const r = await run(['--config', join(dir, 'other.json'), 'status', '--json'], { cwd: '/' });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).db).toBe(join(dir, 'sub.duckdb'));
  });
});

describe('flags', () => {
  const env = { ...BASE, EVSYNC_CLIENT_ID: 'a', EVSYNC_CLIENT_SECRET: 'b-secret' };
  it.each([
    [['sync', '--budget', 'abc'], '--budget'],
    [['sync', '--budget', '0'], 'positive integer'],
    [['sync', '--max-wait', '5x'], 'duration'],
    [['sync', '--streams', 'nope'], 'Unknown stream "nope"'],
    [['sync', '--events', '1,a'], 'event ids'],
    [['sync', '--concurrency', '-1'], '--concurrency'],
    [['backfill', '--events-from', '2024-13-45'], 'YYYY-MM-DD'],
    [['query', 'select 1', '--format', 'xml'], 'table, csv, json'],
    [['schedule', '--cron', '* * * * *', '--tz', 'Mars/Olympus'], 'time zone'],
    [['sync', '--bogus'], "unknown option '--bogus'"],
    [['nosuchcommand'], "unknown command 'nosuchcommand'"],
    [['status', '--quiet', '--verbose'], 'cannot be used together'],
  ])('%j exits 2', async (argv, text) => {
    const r = await run(argv, { cwd: dir, env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(text);
  });

  it('schedule without a cron expression, and with a bad one', async () => {
    let r = await run(['schedule'], { cwd: dir, env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--cron');
    r = await run(['schedule', '--cron', 'every minute'], { cwd: dir, env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not a valid cron expression');
  });
});

describe('help and version', () => {
  it('--version prints the package version', async () => {
    const r = await run(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it.each([['demo'], ['sync'], ['backfill'], ['plan'], ['check'], ['status'], ['schedule'], ['export'], ['query']])(
    '%s --help has an example',
    async (cmd) => {
      const r = await run([cmd, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('Examples:');
      expect(r.stdout).toContain(`$ evsync ${cmd === 'backfill' ? 'backfill' : cmd}`);
    },
  );

  it('no command prints help and exits 2', async () => {
    const r = await run([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Usage: evsync');
  });
});
