import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Warehouse } from '../../src/warehouse/index.js';
import { accountScope, eventScope, events, openTemp, page, registrants, rows, type TempWarehouse } from './helpers.js';

let t: TempWarehouse;
let w: Warehouse;
let out: string;
beforeEach(async () => {
  t = await openTemp();
  w = t.w;
  out = join(t.dir, 'parquet');
  await page(w, events, accountScope, [
    { id: 10, name: 'Conf A', start_date: '2024-05-01' },
    { id: 20, name: 'Conf B', start_date: '2024-06-01' },
  ]);
  await page(w, registrants, eventScope(10), [
    {
      id: 1,
      email: 'a',
      individual_gross: '120.50',
      session_ids: [1, 2],
      registered_at: '2024-03-01 10:00:00',
      custom_fields: '{"c_7":"Vegan","c_8":[{"id":81,"value":"AI"}]}',
    },
    { id: 2, email: 'b', individual_gross: '-166.00', session_ids: [], registered_at: '2024-03-02 10:00:00' },
  ]);
  await page(w, registrants, eventScope(20), [{ id: 3, email: 'c', individual_gross: '0.01' }]);
  // Registrant 2 was deleted at the source.
  await page(w, registrants, eventScope(10), [], { upsert: false, seen: { walkId: 's', ids: [1] } });
  await w.markMissing({ stream: registrants, scope: eventScope(10), walkId: 's', runId: 'r', at: '2024-04-01' });
});
afterEach(async () => {
  await t.cleanup();
});

const readBack = (table: string, extra = '') =>
  rows(
    w,
    `SELECT * EXCLUDE (_synced_at) FROM read_parquet('${join(out, table)}/**/*.parquet', hive_partitioning = true)
      ${extra} ORDER BY id`,
  );

describe('exportParquet', () => {
  it('writes the Hive layout (event tables by event_id), current rows only, read back exactly by DuckDB', async () => {
    const r = await w.exportParquet({ out });
    expect(r.tables.sort()).toEqual(['events', 'registrants']);
    expect(readdirSync(join(out, 'registrants')).sort()).toEqual(['_evsync', 'event_id=10', 'event_id=20']);
    expect(readdirSync(join(out, 'events')).sort()).toEqual([`${r.exportId}_0.parquet`, '_evsync'].sort());
    expect(r.files).toBe(3);
    expect(r.rows).toEqual({ events: 2, registrants: 2 });

    const got = await readBack('registrants');
    expect(got.map((x) => [x.id, x.email, x.individual_gross, x.session_ids, x.event_id])).toEqual([
      ['1', 'a', '120.50', '["1","2"]', '10'],
      ['3', 'c', '0.01', null, '20'],
    ]);
    const types = await rows(
      w,
      `SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${join(out, 'registrants')}/**/*.parquet',
        hive_partitioning = true)) WHERE column_name IN ('individual_gross', 'registered_at', 'session_ids', 'event_id')
        ORDER BY column_name`,
    );
    expect(types).toEqual([
      { column_name: 'event_id', column_type: 'BIGINT' },
      { column_name: 'individual_gross', column_type: 'DECIMAL(12,2)' },
      { column_name: 'registered_at', column_type: 'TIMESTAMP' },
      { column_name: 'session_ids', column_type: 'BIGINT[]' },
    ]);
    // Custom fields: one JSON column (Parquet's JSON logical type), read with JSON functions.
    expect(
      await rows(
        w,
        `SELECT id, json_extract_string(custom_fields, '$.c_7') AS diet, custom_fields->>'$.c_8[0].value' AS topic,
                typeof(custom_fields) AS type
           FROM read_parquet('${join(out, 'registrants')}/**/*.parquet', hive_partitioning = true) ORDER BY id`,
      ),
    ).toEqual([
      { id: '1', diet: 'Vegan', topic: 'AI', type: 'JSON' },
      { id: '3', diet: null, topic: null, type: 'JSON' },
    ]);
    const codec = await rows(
      w,
      `SELECT DISTINCT compression FROM parquet_metadata('${join(out, 'registrants')}/**/*.parquet')`,
    );
    expect(codec).toEqual([{ compression: 'ZSTD' }]);
  });

  it('includes deleted rows on request', async () => {
    await w.exportParquet({ out, tables: ['registrants'], includeDeleted: true });
    const got = await readBack('registrants');
    expect(got.map((x) => [x.id, x._deleted_at])).toEqual([
      ['1', null],
      ['2', '2024-04-01 00:00:00'],
      ['3', null],
    ]);
    expect(existsSync(join(out, 'events'))).toBe(false);
  });

  it('rewrites only the listed partitions', async () => {
    await w.exportParquet({ out });
    const untouched = readdirSync(join(out, 'registrants', 'event_id=20'));
    // Event 10 changes; event 20 changes too but is not listed, so its files stay as they were.
    await page(w, registrants, eventScope(10), [{ id: 4, email: 'd' }]);
    await page(w, registrants, eventScope(20), [{ id: 5, email: 'e' }]);
    const r = await w.exportParquet({ out, partitions: { registrants: [10] } });
    expect(r.tables).toEqual(['registrants']);
    expect((await readBack('registrants')).map((x) => x.id)).toEqual(['1', '3', '4']);
    expect(readdirSync(join(out, 'registrants', 'event_id=20'))).toEqual(untouched);

    // The array form the engine may pass works the same; an event whose rows are all gone loses its folder.
    await page(w, registrants, eventScope(20), [], { upsert: false, seen: { walkId: 'z', ids: [] } });
    await w.markMissing({ stream: registrants, scope: eventScope(20), walkId: 'z', runId: 'r', at: '2024-05-01' });
    await w.exportParquet({ out, partitions: [{ table: 'registrants', eventIds: [20] }] });
    expect(readdirSync(join(out, 'registrants')).sort()).toEqual(['_evsync', 'event_id=10']);
    expect((await readBack('registrants')).map((x) => x.id)).toEqual(['1', '4']);
  });

  it('with newTablesWhole, a table new to the output gets every event, an owned one only those listed', async () => {
    const first = await w.exportParquet({ out, partitions: { registrants: [10] }, newTablesWhole: true });
    expect(first.rows.registrants).toBe(2);
    expect(readdirSync(join(out, 'registrants')).sort()).toEqual(['_evsync', 'event_id=10', 'event_id=20']);
    const untouched = readdirSync(join(out, 'registrants', 'event_id=20'));
    await page(w, registrants, eventScope(10), [{ id: 4, email: 'd' }]);
    const second = await w.exportParquet({ out, partitions: { registrants: [10] }, newTablesWhole: true });
    expect(second.bytesWritten).toBeGreaterThan(0);
    expect(readdirSync(join(out, 'registrants', 'event_id=20'))).toEqual(untouched);
    expect((await readBack('registrants')).map((x) => x.id)).toEqual(['1', '3', '4']);
  });

  it('refuses unknown tables', async () => {
    await expect(w.exportParquet({ out, tables: ['nope'] })).rejects.toThrow(/no such table: nope/);
  });

  it('works from a read-only warehouse', async () => {
    const path = t.path;
    await t.w.close();
    const { Warehouse } = await import('../../src/warehouse/index.js');
    const ro = await Warehouse.open(path, { readOnly: true });
    t.w = ro;
    w = ro;
    const r = await ro.exportParquet({ out, tables: ['events'] });
    expect(r).toMatchObject({ files: 1, tables: ['events'], rows: { events: 2 }, warnings: [] });
    expect((await readBack('events')).map((x) => x.name)).toEqual(['Conf A', 'Conf B']);
  });
});
