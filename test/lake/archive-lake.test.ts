/**
 * The archive in the lake (`archive.to: s3://...`, issue 36), against the simulator and the loopback S3: a sync's
 * compressed segments go to `<prefix>/_archive/account=<id>/` and leave the machine (only their small metadata and a
 * record of where each went stay beside the warehouse); `evsync archive` counts them; `rebuild --dry-run` fetches
 * them back and finds the tables equal, with no request to the service; `archive prune` removes them from the lake.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { run, writeConfig } from '../cli/helpers.js';
import { BUCKET, getObject, lakeConfig, listKeys, s3Env, useTestLake } from './helpers.js';

const testLake = useTestLake('evsync-archive-lake-');
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ size: 'tiny', seed: 9, port: 0, rateLimit: { credits: 100_000, windowSeconds: 600 } });
});
afterAll(async () => {
  await sim?.close();
});

describe('archive.to s3://', () => {
  it('sends the segments to the lake, rebuilds from them, and prunes them there', async () => {
    const db = join(testLake.dir, 'w.duckdb');
    const a = sim.accounts[0]!;
    const env = {
      EVSYNC_BASE_URL: sim.baseUrl,
      EVSYNC_CLIENT_ID: a.clientId,
      EVSYNC_CLIENT_SECRET: a.clientSecret,
      EVSYNC_DB: db,
      ...s3Env(),
    };
    const config = writeConfig(testLake.dir, {
      ...lakeConfig(testLake.s3.endpoint, { account: 'northwind' }),
      archive: { to: `s3://${BUCKET}/evsync` },
    });
    const args = ['--streams', 'events,registrants', '--config', config];
    expect((await run(['backfill', ...args], { cwd: testLake.dir, env })).code).toBe(0);
    sim.mutate(5, { streams: ['registrants'] });
    sim.advanceClock(60);
    expect((await run(['sync', ...args], { cwd: testLake.dir, env })).code).toBe(0);

    const prefix = 'evsync/_archive/account=northwind/';
    const keys = await listKeys(testLake.client, prefix);
    const pages = keys.filter((k) => k.endsWith('.pages.parquet'));
    expect(pages.length).toBeGreaterThanOrEqual(2);
    expect(keys.filter((k) => k.endsWith('.meta.parquet'))).toHaveLength(pages.length);
    // Parquet as written (its magic bytes), and no longer beside the warehouse.
    expect((await getObject(testLake.client, pages[0]!))?.subarray(0, 4).toString()).toBe('PAR1');
    const local = readdirSync(join(`${db}.archive`, 'segments'));
    expect(local.filter((f) => f.endsWith('.pages.parquet'))).toEqual([]);
    expect(local.filter((f) => f.endsWith('.remote.json'))).toHaveLength(pages.length);

    const held = await run(['archive', '--json', '--config', config], { cwd: testLake.dir, env });
    expect(held.code, held.stderr).toBe(0);
    expect(JSON.parse(held.stdout)).toMatchObject({ entries: expect.any(Number), bytes: expect.any(Number) });
    expect(JSON.parse(held.stdout).entries).toBeGreaterThan(0);

    const calls = JSON.stringify(sim.counters());
    const dry = await run(['rebuild', '--dry-run', '--json', '--config', config], { cwd: testLake.dir, env });
    expect(dry.code, dry.stderr).toBe(0);
    const report = JSON.parse(dry.stdout) as { changes: { changed: number; added: number; removed: number }[] };
    expect(report.changes.length).toBeGreaterThanOrEqual(2);
    for (const c of report.changes) expect(c).toMatchObject({ changed: 0, added: 0, removed: 0 });
    expect(JSON.stringify(sim.counters())).toBe(calls);
    expect(readdirSync(`${db}.archive`).filter((f) => f.startsWith('fetched-'))).toEqual([]);

    const pruned = await run(['archive', 'prune', '--before', '2999-01-01', '--config', config], {
      cwd: testLake.dir,
      env,
    });
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(await listKeys(testLake.client, prefix)).toEqual([]);
    expect(existsSync(join(`${db}.archive`, 'pruned.json'))).toBe(true);
  }, 120_000);
});
