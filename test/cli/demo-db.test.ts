/**
 * `evsync demo --db <file>` builds the demo there, and never replaces a database an earlier demo did not make.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Warehouse } from '../../src/warehouse/index.js';
import { eventScope, page, registrants } from '../warehouse/helpers.js';
import { run, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => void;
let precious: string;
const hash = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

beforeAll(async () => {
  ({ dir, cleanup } = tempDir('evsync-demo-db-'));
  // The user's warehouse, named by EVSYNC_DB: the demo must neither use nor touch it.
  precious = join(dir, 'evsync.duckdb');
  const w = await Warehouse.open(precious);
  await page(w, registrants, eventScope(1), [{ id: 1, email: 'mine@example.com' }]);
  await w.close();
});
afterAll(() => cleanup());

describe('evsync demo --db', () => {
  it('refuses a --db file that exists and that no demo made (exit 2), leaving it as it was', async () => {
    const before = hash(precious);
    const r = await run(['demo', '--db', precious], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--db ${precious}: the file exists and no earlier demo made it`);
    expect(hash(precious)).toBe(before);

    const junk = join(dir, 'notes.duckdb');
    writeFileSync(junk, 'my notes');
    const j = await run(['demo', '--db', junk], { cwd: dir });
    expect(j.code).toBe(2);
    expect(readFileSync(junk, 'utf8')).toBe('my notes');
  });

  it('builds the demo in the --db file (replacing an earlier demo), not in ./evsync-demo.duckdb, ignoring EVSYNC_DB', async () => {
    const custom = join(dir, 'custom.duckdb');
    // An earlier demo's database: a run of this same command marks it, as this one will.
    const first = await Warehouse.open(custom);
    await first.query(`INSERT OR REPLACE INTO _evsync.meta VALUES ('demo', 'earlier')`);
    await page(first, registrants, eventScope(999), [{ id: 424242, email: 'stale@example.com' }]);
    await first.close();
    const before = hash(precious);

    const r = await run(['demo', '--db', custom, '--json'], { cwd: dir, env: { EVSYNC_DB: precious } });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.db).toBe(custom);
    expect(report.tables.registrants).toBeGreaterThan(0);
    expect(existsSync(join(dir, 'evsync-demo.duckdb'))).toBe(false);
    expect(hash(precious)).toBe(before);

    // Rebuilt from scratch (the stale row is gone) and marked for the next demo.
    const q = await run(
      [
        'query',
        '--db',
        custom,
        "select (select count(*) from registrants where id = 424242) as stale, (select count(*) from _evsync.meta where key = 'demo') as marked",
        '--json',
      ],
      { cwd: dir },
    );
    expect(q.code, q.stderr).toBe(0);
    expect(JSON.parse(q.stdout)).toEqual([{ stale: 0, marked: 1 }]);
  }, 120_000);
});
