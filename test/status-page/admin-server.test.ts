/**
 * The admin address: the page, the document and the metrics on loopback; a token once one is set (and required
 * off loopback, refused before anything listens); read-only; its answers carry a strict content policy; a status
 * that cannot be read is a 503, not a crash. Against a real warehouse.
 */
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { type AdminServer, adminSettingsProblem, startAdminServer } from '../../src/cli/admin-server.js';
import { collectStatus, type StatusReport } from '../../src/cli/status/document.js';
import { CaptureMetrics } from '../../src/sync/capture/metrics.js';
import { run, tempDir } from '../cli/helpers.js';
import { openTemp, type TempWarehouse } from '../warehouse/helpers.js';

const TOKEN = 'admin-token-test-5b0f3c9e1d2a';

let t: TempWarehouse | undefined;
let server: AdminServer | undefined;
afterEach(async () => {
  await server?.close();
  await t?.cleanup();
  server = undefined;
  t = undefined;
});

async function start(token?: string, status?: () => Promise<StatusReport>): Promise<AdminServer> {
  t = await openTemp();
  const w = t.w;
  const metrics = new CaptureMetrics(() => Date.now());
  metrics.deliveries.add({ outcome: 'journaled' }, 3);
  server = await startAdminServer({
    listen: '127.0.0.1:0',
    token,
    status: status ?? (() => collectStatus(w, { db: 'test.duckdb', runs: 10, nowMs: Date.now() })),
    metrics: async () => metrics.render(),
  });
  return server;
}

describe('the admin server', () => {
  it('serves the page, the document and the metrics, GET only', async () => {
    const s = await start();
    const page = await fetch(`${s.origin}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain('<title>evsync status</title>');
    expect(html).toContain('<script>');
    const doc = (await (await fetch(`${s.origin}/status.json`)).json()) as StatusReport;
    expect(doc).toMatchObject({ db: 'test.duckdb', exists: true, streams: [], timeline: [] });
    expect(doc.deliveries?.buckets.length).toBeGreaterThan(0);
    const metrics = await (await fetch(`${s.origin}/metrics`)).text();
    expect(metrics).toContain('evsync_webhook_deliveries_total{outcome="journaled"} 3');
    expect(metrics).toContain('evsync_webhook_pending 0');
    expect((await fetch(`${s.origin}/status.json`, { method: 'POST', body: '{}' })).status).toBe(405);
    expect((await fetch(`${s.origin}/healthz`)).status).toBe(404);
  });

  it('asks for the token once one is set, even on loopback', async () => {
    const s = await start(TOKEN);
    const none = await fetch(`${s.origin}/status.json`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    expect(
      (await fetch(`${s.origin}/`, { headers: { authorization: 'Bearer wrong-token-of-some-length' } })).status,
    ).toBe(401);
    expect((await fetch(`${s.origin}/metrics`, { headers: { authorization: `Basic ${TOKEN}` } })).status).toBe(401);
    const ok = await fetch(`${s.origin}/status.json`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).not.toContain(TOKEN);
  });

  it('answers 503 when the status cannot be read, and keeps serving', async () => {
    let calls = 0;
    const s = await start(undefined, async () => {
      calls += 1;
      if (calls === 1) throw new Error('the warehouse is busy');
      return collectStatus(t!.w, { db: 'test.duckdb', runs: 10, nowMs: Date.now() });
    });
    expect((await fetch(`${s.origin}/status.json`)).status).toBe(503);
    expect((await fetch(`${s.origin}/status.json`)).status).toBe(200);
  });

  it('refuses an address off loopback without a token, or with a short one, before listening', async () => {
    expect(adminSettingsProblem('127.0.0.1:8788', undefined)).toBeNull();
    expect(adminSettingsProblem('[::1]:8788', undefined)).toBeNull();
    expect(adminSettingsProblem('localhost:8788', undefined)).toBeNull();
    expect(adminSettingsProblem('0.0.0.0:8788', undefined)).toMatch(/not a loopback address: set EVSYNC_ADMIN_TOKEN/);
    expect(adminSettingsProblem('10.1.2.3:8788', 'short')).toMatch(/EVSYNC_ADMIN_TOKEN is too short/);
    // Once set, a token guards loopback too: a short one is refused there as well.
    expect(adminSettingsProblem('127.0.0.1:8788', 'short')).toBe(
      'EVSYNC_ADMIN_TOKEN is too short (at least 16 characters)',
    );
    expect(adminSettingsProblem('0.0.0.0:8788', TOKEN)).toBeNull();
    await expect(
      startAdminServer({ listen: '0.0.0.0:0', status: () => Promise.reject(new Error('unused')), metrics: () => '' }),
    ).rejects.toThrow(/not a loopback address/);
  });

  it('serve says so as a usage error (exit 2) before opening anything, never printing the token', async () => {
    const { dir, cleanup } = tempDir();
    try {
      // Nothing is ever called: port 9 (discard) on loopback only stands for a service.
      const env = {
        EVSYNC_BASE_URL: 'http://127.0.0.1:9/v1',
        EVSYNC_CLIENT_ID: 'client',
        EVSYNC_CLIENT_SECRET: 'secret-of-no-service',
        EVSYNC_WEBHOOK_SECRET: 'serve-admin-secret-0123456789',
        EVSYNC_DB: `${dir}/x.duckdb`,
      };
      const open = await run(['serve', '--admin-listen', '0.0.0.0:8788'], { cwd: dir, env });
      expect(open.code).toBe(2);
      expect(open.stderr).toContain('not a loopback address: set EVSYNC_ADMIN_TOKEN');
      const short = await run(['serve', '--admin-listen', '0.0.0.0:8788'], {
        cwd: dir,
        env: { ...env, EVSYNC_ADMIN_TOKEN: 'q7Zx9-short' },
      });
      expect(short.code).toBe(2);
      expect(short.stderr).toContain('EVSYNC_ADMIN_TOKEN is too short');
      expect(short.stderr).not.toContain('q7Zx9-short');
      const bad = await run(['serve', '--admin-listen', 'nowhere'], { cwd: dir, env });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--admin-listen nowhere: expected host:port');
      expect(existsSync(env.EVSYNC_DB)).toBe(false);
    } finally {
      cleanup();
    }
  });
});
