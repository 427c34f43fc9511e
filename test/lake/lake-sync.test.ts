/**
 * `backfill --parquet-out s3://...` and `sync --parquet-out s3://...` against the simulator and the loopback S3: the
 * run's tables land in the lake with the run id in their manifests, and a writer holding the account's lease stops
 * the sync before it spends a credit (exit 1).
 */
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoopbackS3, startLoopbackS3 } from '../../bench/s3-loopback.js';
import { leaseKey } from '../../src/lake/layout.js';
import { Lease } from '../../src/lake/lease.js';
import { openS3Store } from '../../src/lake/s3-store.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { run, tempDir, writeConfig } from '../cli/helpers.js';
import { BUCKET, lakeConfig, manifestAt, s3Env, testClient, warehouseRows } from './helpers.js';

let s3: LoopbackS3;
let client: S3Client;
let sim: Simulator;
let dir: string;
let cleanup: () => void;

beforeAll(async () => {
  s3 = await startLoopbackS3([BUCKET]);
  client = testClient(s3.endpoint);
  sim = await startSimulator({ size: 'tiny', seed: 5, port: 0, rateLimit: { credits: 100_000, windowSeconds: 600 } });
  ({ dir, cleanup } = tempDir('evsync-lake-sync-'));
});
afterAll(async () => {
  client?.destroy();
  await sim?.close();
  await s3?.close();
  cleanup?.();
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
    const db = join(dir, 'backfill.duckdb');
    const config = writeConfig(dir, lakeConfig(s3.endpoint, { account: 'northwind' }), 'backfill.json');
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
      { cwd: dir, env: envFor(db) },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('s3://lake/sync (account=northwind)');
    const result = JSON.parse(r.stdout);
    const m = await manifestAt(client, 'sync/registrants/account=northwind/_evsync/manifest.json');
    expect(m.runId).toBe(result.runId);
    const [count] = await warehouseRows<{ n: string }>(
      db,
      'SELECT count(*) AS n FROM registrants WHERE _deleted_at IS NULL',
    );
    expect(m.rows).toBe(Number(count?.n));
    expect(m.rows).toBe(sim.truth('registrants').records.length);
  }, 60_000);

  it('refuses to start (exit 1, no credit spent) while another writer holds the account lease', async () => {
    const db = join(dir, 'held.duckdb');
    const config = writeConfig(dir, lakeConfig(s3.endpoint), 'held.json');
    const store = await openS3Store({
      bucket: BUCKET,
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      partSizeBytes: 16 << 20,
      partConcurrency: 1,
      env: s3Env(),
    });
    const lease = await Lease.acquire(store, leaseKey({ prefix: 'held', account: 'default' }), {
      account: 'default',
      ttlMs: 600_000,
      command: 'evsync sync on another machine',
    });
    try {
      const r = await run(
        ['sync', '--streams', 'events', '--parquet-out', `s3://${BUCKET}/held`, '--config', config, '--json'],
        { cwd: dir, env: envFor(db) },
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
