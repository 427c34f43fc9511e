/**
 * `backfill --parquet-out s3://...` and `sync --parquet-out s3://...` against the simulator and the loopback S3: the
 * run's tables land in the lake with the run id in their manifests, and a writer holding the account's lease stops
 * the sync before it spends a credit (exit 1).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leaseKey } from '../../src/outputs/lake/layout.js';
import { Lease } from '../../src/outputs/lake/lease.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { run, writeConfig } from '../cli/helpers.js';
import { BUCKET, lakeConfig, manifestAt, openTestStore, s3Env, useTestLake, warehouseRows } from './helpers.js';

const testLake = useTestLake('evsync-lake-sync-');
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ size: 'tiny', seed: 5, port: 0, rateLimit: { credits: 100_000, windowSeconds: 600 } });
});
afterAll(async () => {
  await sim?.close();
});

function envFor(db: string): Record<string, string> {
  const a = sim.accounts[0]!;
  return {
    EVSYNC_BASE_URL: sim.baseUrl,
    EVSYNC_CLIENT_ID: a.clientId,
    EVSYNC_CLIENT_SECRET: a.clientSecret,
    EVSYNC_DB: db,
    ...s3Env(),
  };
}

describe('sync --parquet-out s3://', () => {
  it('a backfill lands in the lake with its run id; rows equal the warehouse', async () => {
    const db = join(testLake.dir, 'backfill.duckdb');
    const config = writeConfig(
      testLake.dir,
      lakeConfig(testLake.s3.endpoint, { account: 'northwind' }),
      'backfill.json',
    );
    const r = await run(
      [
        'backfill',
        '--streams',
        'events,registrants',
        '--parquet-out',
        `s3://${BUCKET}/sync`,
        '--config',
        config,
        '--json',
      ],
      { cwd: testLake.dir, env: envFor(db) },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('s3://lake/sync (account=northwind)');
    const result = JSON.parse(r.stdout);
    const m = await manifestAt(testLake.client, 'sync/registrants/account=northwind/_evsync/manifest.json');
    expect(m.runId).toBe(result.runId);
    const [count] = await warehouseRows<{ n: string }>(
      db,
      'SELECT count(*) AS n FROM registrants WHERE _deleted_at IS NULL',
    );
    expect(m.rows).toBe(Number(count?.n));
    expect(m.rows).toBe(sim.truth('registrants').records.length);
  }, 60_000);

  it('refuses to start (exit 1, no credit spent) while another writer holds the account lease', async () => {
    const db = join(testLake.dir, 'held.duckdb');
    const config = writeConfig(testLake.dir, lakeConfig(testLake.s3.endpoint), 'held.json');
    const store = await openTestStore(testLake.s3.endpoint, 1);
    const lease = await Lease.acquire(store, leaseKey({ prefix: 'held', account: 'default' }), {
      account: 'default',
      ttlMs: 600_000,
      command: 'evsync sync on another machine',
    });
    try {
      const r = await run(
        ['sync', '--streams', 'events', '--parquet-out', `s3://${BUCKET}/held`, '--config', config, '--json'],
        { cwd: testLake.dir, env: envFor(db) },
      );
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain('is held by evsync sync on another machine');
      // Nothing ran: no run was recorded in the new warehouse.
      const [runs] = await warehouseRows<{ n: string }>(db, 'SELECT count(*) AS n FROM _evsync.runs');
      expect(Number(runs?.n ?? 0)).toBe(0);
    } finally {
      await lease.release();
      store.close();
    }
  }, 60_000);
});
