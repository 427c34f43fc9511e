/**
 * A destination evsync cannot write is refused (exit 2) and never reinterpreted: `--out s3://lake/evsync` once wrote
 * a local folder named `s3:` and exited 0. Runs in-process in a temp dir; the current folder is checked after.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { accountScope, events, page } from '../warehouse/helpers.js';
import { cliWarehouse, run } from './helpers.js';

const cli = cliWarehouse('evsync-target-', async (w) => {
  await page(w, events, accountScope, [{ id: 10, name: 'Conf A', start_date: '2024-05-01' }]);
});
/** A CLI run's options: in the fixture's folder, on its warehouse. */
const here = () => ({ cwd: cli.dir, env: cli.env });

describe('export --out: URLs evsync cannot write are refused', () => {
  for (const out of [
    'gs://lake/evsync',
    'https://example.com/lake',
    's3:/lake/evsync',
    's3a://lake/evsync',
    'S3:lake',
  ]) {
    it(`${out}: exit 2, nothing written in the current folder`, async () => {
      const before = readdirSync(cli.dir).sort();
      const r = await run(['export', '--out', out], here());
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`${out} is not a destination evsync can write`);
      expect(readdirSync(cli.dir).sort()).toEqual(before);
    });
  }

  it('an s3:// URL with an invalid bucket name is refused (exit 2)', async () => {
    const r = await run(['export', '--out', 's3://Not_A_Bucket/x'], here());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is not an S3 bucket name');
    expect(readdirSync(cli.dir).filter((n) => n.startsWith('s3'))).toEqual([]);
  });

  it('a local folder whose name merely contains a colon later on still works (./s3:x)', async () => {
    const r = await run(['export', '--out', './s3:x', '--tables', 'events'], here());
    expect(r.code, r.stderr).toBe(0);
    // The events table and its history beside it (history/events).
    expect(readdirSync(join(cli.dir, 's3:x')).sort()).toEqual(['_evsync', 'events', 'history']);
  });

  it('sync --parquet-out refuses the same way before any call to the service', async () => {
    const r = await run(['sync', '--parquet-out', 'gs://lake/evsync'], {
      cwd: cli.dir,
      // Unreachable on purpose: a refusal must come before any request.
      env: {
        ...cli.env,
        EVSYNC_BASE_URL: 'http://127.0.0.1:9/v1',
        EVSYNC_CLIENT_ID: 'id',
        EVSYNC_CLIENT_SECRET: 'secret-x',
      },
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('--parquet-out: gs://lake/evsync is not a destination evsync can write');
  });
});
