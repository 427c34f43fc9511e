import { existsSync } from 'node:fs';
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
    // The demo database is replaced each time: a second run starts from scratch and lands the same rows.
    const again = await run(['demo', '--json', '--quiet'], { cwd: dir });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).tables).toEqual(report.tables);
  }, 120_000);
});
