import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => void;
beforeAll(() => {
  ({ dir, cleanup } = tempDir('evsync-demo-'));
});
afterAll(() => cleanup());

describe('evsync demo', () => {
  it('backfills the small data set into ./evsync-demo.duckdb within one window, with three answers', async () => {
    // The demo replaces its database each time: leftovers (even unreadable ones) must not matter.
    writeFileSync(join(dir, 'evsync-demo.duckdb'), 'not a database');
    writeFileSync(join(dir, 'evsync-demo.duckdb.wal'), 'junk');
    // No EVSYNC_* at all: the demo needs no configuration.
    const r = await run(['demo', '--json'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.db).toBe(join(dir, 'evsync-demo.duckdb'));
    expect(existsSync(report.db)).toBe(true);
    expect(report.result.status).toBe('done');
    expect(report.tables.registrants).toBeGreaterThan(0);
    expect(report.result.credits.total).toBeLessThanOrEqual(report.creditLimit);
    expect(report.creditLimit).toBe(2000);
    expect(report.answers).toHaveLength(3);
    for (const a of report.answers) expect(a.rows.length).toBeGreaterThan(0);
  }, 120_000);

  it('says where the views and the history of every record are', async () => {
    const r = await run(['demo'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Views: analytics\.registrations_daily, /m);
    expect(r.stdout).toMatch(/^History \(every version from now on\): .*history\.registrants(,|$)/m);
  }, 120_000);
});
