/**
 * The daemon's publisher (src/daemon/publisher.ts) against the simulator and a real warehouse: changes made at the
 * service, loaded by the sync engine, marked touched, published; the Parquet and the snapshot read from ANOTHER
 * process (a child node with @duckdb/node-api) while this process holds the live file, and compared with the
 * simulator's ground truth. Publishes are driven by flush(), never by the clock; the kill is by count.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Publisher, startPublisher } from '../../src/daemon/index.js';
import { TouchedPartitions } from '../../src/outputs/partition.js';
import { runSync } from '../../src/sync/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { DuckDbReader } from '../helpers/duckdb-reader.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { runTsxChild } from '../helpers/tsx-child.js';

const STREAMS = 'events,registrants,sessions';

let h: Harness | undefined;
let publisher: Publisher | undefined;
afterEach(async () => {
  await publisher?.stop();
  publisher = undefined;
  await h?.close();
  h = undefined;
});

/** Runs an incremental sync and marks what it wrote touched, as the daemon's applier will. */
async function syncAndTouch(harness: Harness, warehouse: Warehouse, p: Publisher | null): Promise<TouchedPartitions> {
  harness.sim.advanceClock(2);
  const touched = new TouchedPartitions();
  const result = await runSync(harness.client(), warehouse, {
    mode: 'incremental',
    streams: STREAMS,
    lagSeconds: 0,
    deletes: true,
    pastEventPollHours: 0,
    onProgress: (e) => touched.onProgress(e),
  });
  expect(result.errors).toEqual([]);
  for (const [table, ids] of touched.byStream) {
    p?.touched(table, ids.has(null) ? 'all' : [...ids].filter((id): id is number => id !== null));
  }
  return touched;
}

const truthIds = (harness: Harness, stream: string) =>
  harness.sim
    .truth(stream)
    .records.map((r) => Number(r.id))
    .sort((a, b) => a - b);

/** Current ids in the snapshot and in the Parquet, as another process reads them. */
async function readBoth(snapshot: string, parquet: string, table: string): Promise<{ snap: number[]; pq: number[] }> {
  const reader = await DuckDbReader.open(snapshot);
  try {
    const ids = async (sql: string) => ((await reader.query(sql))[0]?.ids as string[] | null)?.map(Number) ?? [];
    return {
      snap: await ids(`SELECT list(id ORDER BY id) AS ids FROM main.${table} WHERE _deleted_at IS NULL`),
      pq: await ids(
        `SELECT list(id ORDER BY id) AS ids FROM read_parquet('${join(parquet, table)}/**/*.parquet', hive_partitioning = true)`,
      ),
    };
  } finally {
    await reader.close();
  }
}

function manifestFiles(parquet: string, table: string): { path: string; exportId: string }[] {
  return (
    JSON.parse(readFileSync(join(parquet, table, '_evsync', 'manifest.json'), 'utf8')) as {
      files: { path: string; exportId: string }[];
    }
  ).files;
}

/** Every file of the outputs under `dir` (Parquet folder, snapshot and its parts), with what a write would change. */
function outputFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string, rel: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      const st = statSync(path);
      if (st.isDirectory()) walk(path, `${rel}${name}/`);
      else if (!name.startsWith('lease')) out[`${rel}${name}`] = `${st.ino}:${st.mtimeMs}:${st.size}`;
    }
  };
  for (const top of ['parquet', 'snapshot.duckdb.parts']) walk(join(dir, top), `${top}/`);
  const st = statSync(join(dir, 'snapshot.duckdb'));
  out['snapshot.duckdb'] = `${st.ino}:${st.mtimeMs}:${st.size}`;
  return out;
}

describe('startPublisher', () => {
  it('publishes touched partitions to Parquet and the snapshot; another process reads the ground truth', async () => {
    h = await startHarness();
    await runSync(h.client(), h.warehouse, { mode: 'backfill', streams: STREAMS, lagSeconds: 0 });
    const parquet = join(h.dir, 'parquet');
    const snapshot = join(h.dir, 'snapshot.duckdb');
    const lines: string[] = [];
    publisher = await startPublisher({
      warehouse: h.warehouse,
      parquetOut: parquet,
      snapshot,
      everyMs: 3_600_000,
      log: (level, m) => lines.push(`${level} ${m}`),
    });
    // A new output: every table is published at start, without waiting for the cadence.
    await publisher.flush();
    expect(publisher.stats()).toMatchObject({ publishes: 1, failures: 0, lastError: null, pendingPartitions: 0 });
    for (const table of ['events', 'registrants', 'sessions']) {
      const both = await readBoth(snapshot, parquet, table);
      expect(both.snap, table).toEqual(truthIds(h, table));
      expect(both.pq, table).toEqual(truthIds(h, table));
    }

    // Nothing touched: nothing published.
    await publisher.flush();
    expect(publisher.stats().publishes).toBe(1);

    // Changes at the service, loaded, touched: one publish for all of them, only their partitions rewritten.
    const before = manifestFiles(parquet, 'registrants');
    const mutated = h.sim.mutate(12, { streams: ['registrants'] });
    expect(Object.values(mutated.updated).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    const touched = await syncAndTouch(h, h.warehouse, publisher);
    const events = [...(touched.byStream.get('registrants') ?? [])];
    expect(events.length).toBeGreaterThan(0);
    const stats0 = publisher.stats();
    expect(stats0.pendingPartitions).toBeGreaterThan(0);
    await publisher.flush();
    const stats = publisher.stats();
    expect(stats.publishes).toBe(2);
    expect(stats.pendingPartitions).toBe(0);
    expect(stats.lastBytes).toBeGreaterThan(0);
    expect(stats.lastCpuMs).toBeGreaterThan(0);
    expect(stats.lastParquet?.tables).toBe(touched.byStream.size);
    expect(stats.totalBytes).toBeGreaterThan(stats.lastBytes ?? 0);

    const both = await readBoth(snapshot, parquet, 'registrants');
    expect(both.snap).toEqual(truthIds(h, 'registrants'));
    expect(both.pq).toEqual(truthIds(h, 'registrants'));
    // Untouched events keep the files of the first publish.
    const after = manifestFiles(parquet, 'registrants');
    const untouched = (f: { path: string }) => !events.some((e) => f.path.startsWith(`event_id=${e}/`));
    expect(after.filter(untouched)).toEqual(before.filter(untouched));
    expect(after.filter((f) => !untouched(f)).every((f) => !before.some((b) => b.exportId === f.exportId))).toBe(true);
    // Recorded touches are gone once published.
    const side = await h.warehouse.openSide();
    try {
      expect(await side.pendingPartitions()).toEqual([]);
    } finally {
      await side.close();
    }
    expect(lines.filter((l) => l.startsWith('warn'))).toEqual([]);
  });

  it('a restart that publishes every table again writes no byte when nothing changed', async () => {
    h = await startHarness();
    await runSync(h.client(), h.warehouse, { mode: 'backfill', streams: STREAMS, lagSeconds: 0 });
    const parquet = join(h.dir, 'parquet');
    const snapshot = join(h.dir, 'snapshot.duckdb');
    const options = { warehouse: h.warehouse, parquetOut: parquet, snapshot, everyMs: 3_600_000, log: () => {} };
    const first = await startPublisher(options);
    await first.flush();
    expect(first.stats().lastBytes).toBeGreaterThan(0);
    await first.stop();
    const before = outputFiles(h.dir);

    // As a daemon started again asked to publish everything: every table touched whole, none of it changed.
    publisher = await startPublisher({ ...options, publishAllAtStart: true });
    await publisher.flush();
    const s = publisher.stats();
    expect(s.publishes).toBe(1);
    expect(s.lastBytes).toBe(0);
    expect(s.lastSnapshot?.parts).toBe(0);
    expect(outputFiles(h.dir)).toEqual(before);
  });

  it('coalesces: many touches make one publish, and two flushes at once never overlap', async () => {
    h = await startHarness();
    await runSync(h.client(), h.warehouse, { mode: 'backfill', streams: 'events,registrants', lagSeconds: 0 });
    const snapshot = join(h.dir, 'snapshot.duckdb');
    const warnings: string[] = [];
    publisher = await startPublisher({
      warehouse: h.warehouse,
      snapshot,
      everyMs: 3_600_000,
      log: (level, m) => {
        if (level === 'warn') warnings.push(m);
      },
    });
    await publisher.flush();
    const start = publisher.stats().publishes;
    for (let i = 0; i < 50; i++) publisher.touched('registrants', [i % 3]);
    publisher.touched('events', 'all');
    publisher.touched('no_such_table', [1]);
    expect(publisher.stats().pendingPartitions).toBe(5);
    await Promise.all([publisher.flush(), publisher.flush()]);
    expect(publisher.stats()).toMatchObject({ publishes: start + 1, failures: 0, pendingPartitions: 0 });
    expect(warnings).toEqual(['publish: no table no_such_table in the warehouse; its touches are dropped']);
  });

  it('never blocks the caller: writes and queries go on while a publish is paused mid-way; the snapshot is one point in time', async () => {
    h = await startHarness();
    await runSync(h.client(), h.warehouse, { mode: 'backfill', streams: 'events,registrants', lagSeconds: 0 });
    const harness = h;
    const snapshot = join(h.dir, 'snapshot.duckdb');
    const total = truthIds(h, 'registrants').length;
    const gone = truthIds(h, 'registrants')[0] ?? 0;
    let during: number | null = null;
    publisher = await startPublisher({
      warehouse: h.warehouse,
      snapshot,
      everyMs: 3_600_000,
      log: () => {},
      // The publish waits here, inside its transaction, until the writer's work below is done: were the publisher
      // holding the writer's queue, this would never finish.
      onSnapshotTable: async (_table, n) => {
        if (n !== 1 || during !== null) return;
        await harness.warehouse.capture.markDeleted('registrants', [{ id: gone, at: '2024-06-01 00:00:00' }], 'run-x');
        during = (await harness.warehouse.tableCounts()).registrants ?? null;
      },
    });
    await publisher.flush();
    expect(during).toBe(total - 1);
    const count = async () => {
      const reader = await DuckDbReader.open(snapshot);
      try {
        return await reader.count('SELECT count(*) FROM main.registrants WHERE _deleted_at IS NULL');
      } finally {
        await reader.close();
      }
    };
    // The publish read one point in time, from before the write it let through.
    expect(await count()).toBe(total);
    publisher.touched('registrants', 'all');
    await publisher.flush();
    expect(await count()).toBe(total - 1);
  });

  it('killed during a publish: the previous snapshot stays readable, the next start redoes the publish', async () => {
    h = await startHarness();
    await runSync(h.client(), h.warehouse, { mode: 'backfill', streams: STREAMS, lagSeconds: 0 });
    const parquet = join(h.dir, 'parquet');
    const snapshot = join(h.dir, 'snapshot.duckdb');
    const first = await startPublisher({
      warehouse: h.warehouse,
      parquetOut: parquet,
      snapshot,
      everyMs: 3_600_000,
      log: () => {},
    });
    await first.flush();
    await first.stop();
    const published = truthIds(h, 'registrants');
    const partsFolder = join(h.dir, 'snapshot.duckdb.parts', 'registrants');
    const partsBefore = readdirSync(partsFolder);

    h.sim.mutate(12, { streams: ['registrants'] });
    const touched = await syncAndTouch(h, h.warehouse, null);
    const events = [...(touched.byStream.get('registrants') ?? [])].filter((e): e is number => e !== null);
    expect(events.length).toBeGreaterThan(0);
    // The child takes the file: this process lets go of it.
    await h.warehouse.close();

    const killed = await runTsxChild('test/sync/fixtures/publisher-kill-child.ts', [
      h.dbPath,
      parquet,
      snapshot,
      'registrants',
      events.join(','),
    ]);
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    expect(killed.stdout.trim()).toMatch(/^copied 1 \w+$/);
    // Killed after writing a part, before the catalogue naming it: the part is there, listed by no snapshot.
    expect(readdirSync(partsFolder).filter((f) => !partsBefore.includes(f)).length).toBeGreaterThan(0);
    // The previous snapshot, whole, for readers.
    const reader = await DuckDbReader.open(snapshot);
    try {
      const [row] = await reader.query(
        `SELECT list(id ORDER BY id) AS ids FROM main.registrants WHERE _deleted_at IS NULL`,
      );
      expect((row?.ids as string[] | undefined)?.map(Number)).toEqual(published);
    } finally {
      await reader.close();
    }

    // The next start finds the publish owed and does it at once.
    const warehouse = await Warehouse.open(h.dbPath);
    try {
      const side = await warehouse.openSide();
      const owed = await side.pendingPartitions();
      await side.close();
      expect(owed).toEqual(events.sort((a, b) => a - b).map((eventId) => ({ table: 'registrants', eventId })));
      const next = await startPublisher({
        warehouse,
        parquetOut: parquet,
        snapshot,
        everyMs: 3_600_000,
        log: () => {},
      });
      await next.flush();
      expect(next.stats().publishes).toBe(1);
      await next.stop();
      const both = await readBoth(snapshot, parquet, 'registrants');
      expect(both.snap).toEqual(truthIds(h, 'registrants'));
      expect(both.pq).toEqual(truthIds(h, 'registrants'));
      expect(readdirSync(h.dir).some((f) => f.startsWith('.snapshot.duckdb.publish-'))).toBe(false);
      const after = await warehouse.openSide();
      expect(await after.pendingPartitions()).toEqual([]);
      await after.close();
    } finally {
      await warehouse.close();
    }
  });
});
