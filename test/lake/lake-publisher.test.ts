/**
 * The daemon's publisher (src/daemon/publisher.ts) on the lake (`parquetOut: s3://...`, the loopback S3): a touched
 * partition is re-exported under the lake's own rules (manifest commit, lease taken and given back), the others keep
 * their objects, a partition touched with nothing changed costs no upload, and what a reader downloads equals the
 * warehouse.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startPublisher } from '../../src/daemon/index.js';
import type { ObjectStore } from '../../src/outputs/lake/store.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { eventScope, page, registrants } from '../warehouse/helpers.js';
import {
  BUCKET,
  buildWarehouse,
  download,
  duck,
  getObject,
  manifestAt,
  openTestStore,
  useTestLake,
} from './helpers.js';

const testLake = useTestLake('evsync-lake-publisher-');

describe('startPublisher on the lake', () => {
  it('publishes every table at start, then only the touched partition, under the lease', async () => {
    const db = join(testLake.dir, 'evsync.duckdb');
    await buildWarehouse(db, { events: 4, perEvent: 5 });
    const w = await Warehouse.open(db);
    let store: ObjectStore | null = null;
    try {
      store = await openTestStore(testLake.s3.endpoint, 2);
      const prefix = 'daemon';
      const root = `${prefix}/registrants/account=default/`;
      const warnings: string[] = [];
      const publisher = await startPublisher({
        warehouse: w,
        parquetOut: `s3://${BUCKET}/${prefix}`,
        lake: {
          store,
          account: 'default',
          stagingDir: join(testLake.dir, '.staging'),
          leaseTtlMs: 600_000,
          uploadConcurrency: 2,
          command: 'evsync serve',
        },
        everyMs: 3_600_000,
        log: (level, m) => {
          if (level === 'warn') warnings.push(m);
        },
        publishAllAtStart: true,
      });
      try {
        await publisher.flush();
        const first = await manifestAt(testLake.client, `${root}_evsync/manifest.json`);
        expect(first.rows).toBe(20);
        expect(publisher.stats()).toMatchObject({ publishes: 1, failures: 0 });

        await page(w, registrants, eventScope(12), [{ id: 9001, email: 'late@example.com' }]);
        publisher.touched('registrants', [12]);
        await publisher.flush();
        const second = await manifestAt(testLake.client, `${root}_evsync/manifest.json`);
        expect(second.rows).toBe(21);
        const in12 = (f: { path: string }) => f.path.startsWith('event_id=12/');
        expect(second.files.filter((f) => !in12(f))).toEqual(first.files.filter((f) => !in12(f)));
        expect(second.files.filter(in12).every((f) => f.exportId === second.exportId)).toBe(true);
        // Its bytes: the partition's objects and those of its history's partition (history/registrants, beside it).
        const history = await manifestAt(
          testLake.client,
          `${prefix}/history/registrants/account=default/_evsync/manifest.json`,
        );
        expect(history.files.filter(in12).every((f) => f.exportId === history.exportId)).toBe(true);
        expect(publisher.stats().lastParquet?.bytes).toBe(
          [...second.files, ...history.files].filter(in12).reduce((n, f) => n + f.bytes, 0),
        );
        // Touched again with nothing changed (a page of identical rows; every event, and the events table whole):
        // nothing is staged or uploaded, the manifest stays as it was (issue 35).
        publisher.touched('registrants', [10, 11, 12, 13]);
        publisher.touched('events', 'all');
        await publisher.flush();
        expect(publisher.stats()).toMatchObject({ publishes: 3, failures: 0, lastParquet: { tables: 2, bytes: 0 } });
        expect(await manifestAt(testLake.client, `${root}_evsync/manifest.json`)).toEqual(second);
        // The lease is given back after each publish.
        expect(await getObject(testLake.client, `${prefix}/_evsync/leases/account=default.json`)).toBeNull();

        const { dir } = await download(testLake.client, root);
        const ids = await duck<{ id: string }>(
          `SELECT id FROM read_parquet('${join(dir, root)}**/*.parquet', hive_partitioning = true) ORDER BY id`,
        );
        const live = await w.query('SELECT id FROM registrants WHERE _deleted_at IS NULL ORDER BY id');
        expect(ids.map((r) => String(r.id))).toEqual(live.rows.map((r) => String(r.id)));
        expect(warnings).toEqual([]);
      } finally {
        await publisher.stop();
      }
    } finally {
      store?.close();
      await w.close();
    }
  });
});
