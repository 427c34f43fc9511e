/**
 * A lake export killed in the middle (SIGKILL after its 2nd uploaded object, counted, never timed) leaves the
 * previous state readable through the manifest, and the next export, a real `evsync` process, finishes the job:
 * it takes over the dead writer's lease (same host, PID gone), removes the orphaned objects and commits. That
 * process's stderr also shows the CLI prints no runtime warning (the AWS SDK's Node-version notice included).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stagingDirFor } from '../../src/outputs/lake-output.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { run, writeConfig } from '../cli/helpers.js';
import { runTsxChild } from '../helpers/tsx-child.js';
import { eventScope, page, registrants } from '../warehouse/helpers.js';
import { BUCKET, buildWarehouse, getObject, lakeConfig, listKeys, manifestAt, s3Env, useTestLake } from './helpers.js';

const testLake = useTestLake('evsync-lake-kill-');

/** Runs a fixture to its end with only what it needs: no AWS_* or EVSYNC_* of the developer's shell leaks in. */
function child(args: string[], env: Record<string, string>) {
  const [script = '', ...rest] = args;
  return runTsxChild(script, rest, { PATH: process.env.PATH ?? '', HOME: testLake.dir, NO_COLOR: '1', ...env });
}

describe('a lake export killed mid-way', () => {
  it('keeps the previous state readable, and the next export finishes it', async () => {
    const db = join(testLake.dir, 'evsync.duckdb');
    await buildWarehouse(db, { events: 6, perEvent: 5 });
    const config = writeConfig(testLake.dir, lakeConfig(testLake.s3.endpoint, { uploadConcurrency: 1 }));
    const env = { EVSYNC_DB: db, ...s3Env() };
    const prefix = 'kill/evsync';
    const root = `${prefix}/registrants/account=default/`;
    const first = await run(['export', '--out', `s3://${BUCKET}/${prefix}`, '--config', config], {
      cwd: testLake.dir,
      env,
    });
    expect(first.code, first.stderr).toBe(0);
    const previous = await manifestAt(testLake.client, `${root}_evsync/manifest.json`);
    expect(previous.rows).toBe(30);

    // The data moves on: one more registrant in events 12 and 13 (two partitions to upload again; the others are
    // unchanged and not uploaded).
    const w = await Warehouse.open(db);
    await page(w, registrants, eventScope(12), [{ id: 7777, email: 'late@example.com' }]);
    await page(w, registrants, eventScope(13), [{ id: 7778, email: 'later@example.com' }]);
    await w.close();

    const killed = await child(['test/lake/fixtures/kill-child.ts', testLake.s3.endpoint, db, prefix, '2'], s3Env());
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    expect(killed.stdout.trim().split('\n')).toHaveLength(2);

    // What a reader of the manifest sees: the previous export, whole; its files all there.
    const during = await manifestAt(testLake.client, `${root}_evsync/manifest.json`);
    expect(during.files).toEqual(previous.files);
    expect(during.rows).toBe(30);
    expect(during.pending).toHaveLength(1);
    const keys = await listKeys(testLake.client, root);
    for (const f of during.files) expect(keys).toContain(`${root}${f.path}`);
    // What a reader listing the prefix sees: the two new objects beside the old ones (the moment of duplicates).
    const orphans = keys.filter((k) => k.endsWith('.parquet') && !during.files.some((f) => `${root}${f.path}` === k));
    expect(orphans).toHaveLength(2);
    expect(orphans.every((k) => k.includes(`/${during.pending[0]}_`))).toBe(true);
    // What it staged beside the database is still there, owner-only like everything evsync writes.
    const staging = stagingDirFor(db);
    for (const rel of ['', ...(readdirSync(staging, { recursive: true }) as string[])]) {
      const st = statSync(join(staging, rel));
      expect([rel, st.mode & 0o777]).toEqual([rel, st.isDirectory() ? 0o700 : 0o600]);
    }
    // The dead writer's lease is still there: only its PID being gone on this host frees it early.
    expect(await getObject(testLake.client, `${prefix}/_evsync/leases/account=default.json`)).not.toBeNull();

    const rerun = await child(
      ['src/cli/main.ts', 'export', '--out', `s3://${BUCKET}/${prefix}`, '--config', config, '--tables', 'registrants'],
      env,
    );
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toContain('took over the lake lease of kill-child');
    // Node prints runtime warnings as `(node:<pid>) [DEP...] XxxWarning: ...`.
    expect(rerun.stderr).not.toMatch(/\(node:\d+\)|NodeVersionSupportWarning|DeprecationWarning/);

    const after = await manifestAt(testLake.client, `${root}_evsync/manifest.json`);
    expect(after).toMatchObject({ rows: 32, pending: [], obsolete: [] });
    const left = (await listKeys(testLake.client, root)).filter((k) => !k.endsWith('_evsync/manifest.json'));
    expect(left).toEqual(after.files.map((f) => `${root}${f.path}`).sort());
    expect(await getObject(testLake.client, `${prefix}/_evsync/leases/account=default.json`)).toBeNull();
    expect(existsSync(staging)).toBe(false);
  }, 120_000);
});
