/**
 * `evsync check` says "a sync can run" only when one can: a base URL that refuses connections or serves HTML is a
 * failed service (with the EVSYNC_BASE_URL hint, no ✓ for the rate limit), and a warehouse that cannot be written
 * is a failed database. Real servers on 127.0.0.1, real files and folders.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { redact } from '../../src/api/redact.js';
import { startSimulator } from '../../src/simulator/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { run, simulatedCli } from './helpers.js';
import { canMountReadOnly, runOnReadOnlyMount } from './readonly-mount.js';

const cli = simulatedCli({ seed: 3, prefix: 'evsync-check-' });

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('redaction keeps URL paths', () => {
  it('redacts token values but not the word after a path ending in /token', () => {
    expect(redact('POST /oauth2/token: connect ECONNREFUSED 127.0.0.1:9')).toBe(
      'POST /oauth2/token: connect ECONNREFUSED 127.0.0.1:9',
    );
    expect(redact('token: abc123')).toBe('token: [REDACTED]');
    expect(redact('{"access_token": "abc123"}')).not.toContain('abc123');
    expect(redact('x-auth-token: abc123')).not.toContain('abc123');
  });
});

describe('evsync check: the service', () => {
  it('a base URL that refuses connections fails "service", says why and what to check; nothing is ticked', async () => {
    const closed = createServer();
    const port = await listen(closed);
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const r = await run(['check'], {
      cwd: cli.dir,
      env: { ...cli.creds, EVSYNC_BASE_URL: `http://127.0.0.1:${port}/v1`, EVSYNC_DB: join(cli.dir, 'a.duckdb') },
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/✗ service: .* does not answer \(POST \/oauth2\/token: .*connect ECONNREFUSED/);
    expect(r.stdout).toContain('check EVSYNC_BASE_URL');
    expect(r.stdout).toContain('· credentials: not checked');
    expect(r.stdout).toContain('· rate limit: not known');
    expect(r.stdout).not.toContain('✓ service');
    expect(r.stdout).not.toContain('✓ rate limit');
    expect(r.stdout).not.toContain('[REDACTED]');
    expect(r.stdout).toContain('a sync cannot run');
  });

  it.each([200, 404])('a base URL that serves HTML (status %i) is not the event API', async (status) => {
    const html = createServer((_req, res) => {
      res.writeHead(status, { 'content-type': 'text/html' });
      res.end('<html><body>Welcome to our events site</body></html>');
    });
    const port = await listen(html);
    try {
      const r = await run(['check', '--json'], {
        cwd: cli.dir,
        env: { ...cli.creds, EVSYNC_BASE_URL: `http://127.0.0.1:${port}/v1`, EVSYNC_DB: join(cli.dir, 'a.duckdb') },
      });
      expect(r.code).toBe(1);
      const report = JSON.parse(r.stdout);
      const byName = Object.fromEntries(report.checks.map((c: { name: string }) => [c.name, c]));
      expect(byName.service.status).toBe('fail');
      expect(byName.service.message).toContain('not as the event API');
      expect(byName.service.message).toContain('EVSYNC_BASE_URL');
      expect(byName['rate limit'].status).toBe('info');
      expect(report.rateLimit).toBeNull();
      expect(report.ok).toBe(false);
    } finally {
      await new Promise<void>((resolve) => html.close(() => resolve()));
    }
  });

  it('"too old to calibrate" is a neutral mark, not a ✓', async () => {
    const old = await startSimulator({ size: 'tiny', seed: 11, port: 0 });
    try {
      // Server time 3.5 h after the newest event's updated_at: too old to judge, and far from a whole hour.
      const newest = Math.max(...old.truth('events').records.map((e) => Date.parse(`${String(e.updated_at)}Z`)));
      old.advanceClock(Math.round((newest + 3.5 * 3_600_000 - old.now().getTime()) / 1000));
      const a = old.accounts[0]!;
      const r = await run(['check'], {
        cwd: cli.dir,
        env: {
          EVSYNC_BASE_URL: old.baseUrl,
          EVSYNC_CLIENT_ID: a.clientId,
          EVSYNC_CLIENT_SECRET: a.clientSecret,
          EVSYNC_DB: join(cli.dir, 'a.duckdb'),
        },
      });
      expect(r.stdout).toMatch(/· record time zone: .* too old to calibrate/);
      expect(r.stdout).not.toMatch(/✓ record time zone/);
      expect(r.code, r.stdout).toBe(0);
    } finally {
      await old.close();
    }
  });
});

describe('evsync check: the database must be writable', () => {
  const check = (db: string) =>
    run(['check'], { cwd: cli.dir, env: { ...cli.creds, EVSYNC_BASE_URL: cli.sim.baseUrl, EVSYNC_DB: db } });

  it('a new warehouse in a folder that can be written, and an existing one, pass', async () => {
    const fresh = await check(join(cli.dir, 'fresh.duckdb'));
    expect(fresh.code, fresh.stdout).toBe(0);
    expect(fresh.stdout).toContain('its folder can be written');
    const path = join(cli.dir, 'existing.duckdb');
    await (await Warehouse.open(path)).close();
    const existing = await check(path);
    expect(existing.code, existing.stdout).toBe(0);
    expect(existing.stdout).toContain(`✓ database: ${path} opens and can be written`);
  });

  // Tests run as root, who ignores permission bits: a chmod 0500 folder would still be writable. These places
  // refuse root too: a path under a regular file (ENOTDIR), /proc (no new files, ENOENT), a read-only mount (EROFS).
  it('a warehouse path under a regular file fails (ENOTDIR)', async () => {
    const file = join(cli.dir, 'a-file');
    writeFileSync(file, 'x');
    const r = await check(join(file, 'evsync.duckdb'));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/✗ database: .*a-file\/evsync\.duckdb cannot be created: .*is a file, not a folder/);
    expect(r.stdout).toContain('a sync cannot run');
  });

  it('a missing folder fails (the first sync would not create it)', async () => {
    const r = await check(join(cli.dir, 'no-such-folder', 'evsync.duckdb'));
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('does not exist (create it, or point --db / EVSYNC_DB elsewhere)');
  });

  it.skipIf(process.platform !== 'linux')('a folder that refuses new files fails (/proc)', async () => {
    const r = await check('/proc/evsync-check-test.duckdb');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /✗ database: \/proc\/evsync-check-test\.duckdb cannot be created: folder \/proc refuses new files/,
    );
  });

  it.skipIf(!canMountReadOnly)(
    'an existing warehouse on a read-only file system fails (EROFS)',
    async () => {
      const ro = join(cli.dir, 'ro');
      mkdirSync(ro);
      const db = join(ro, 'evsync.duckdb');
      await (await Warehouse.open(db)).close();
      const { code, stdout } = await runOnReadOnlyMount(
        ro,
        ['check'],
        { ...cli.creds, EVSYNC_BASE_URL: cli.sim.baseUrl, EVSYNC_DB: db },
        cli.dir,
      );
      expect(code, stdout).toBe(1);
      expect(stdout).toContain(`✗ database: ${db} cannot be written: read-only file system (EROFS)`);
      expect(stdout).toContain('a sync cannot run');
    },
    60_000,
  );
});
