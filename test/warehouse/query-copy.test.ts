/**
 * The daemon's query copy (src/warehouse/copies/query-copy.ts) is the warehouse file's bytes as of a checkpoint, copied
 * while the writer goes on. What that rests on, shown without any clock: between `holdCheckpoints` and the release,
 * the writer's large appends (written to the file at once), updates, deletes and a dropped table change nothing a
 * copy of the file opens as; the copy opens as the database at the checkpoint, in another process.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { copyFileAside } from '../../src/warehouse/copies/query-copy.js';
import { Db } from '../../src/warehouse/db/connection.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { DuckDbReader } from '../helpers/duckdb-reader.js';
import { eventScope, page, reg, registrants, type TempWarehouse, tempWarehouseEach } from './helpers.js';

let t: TempWarehouse;
tempWarehouseEach((opened) => {
  t = opened;
});

const STATE = `SELECT (SELECT count(*) || ':' || sum(hash(id, n, s)) FROM big) AS big,
                      (SELECT count(*) || ':' || sum(hash(id, v)) FROM small) AS small`;

describe('the query copy', () => {
  let db: Db | null = null;
  afterEach(async () => {
    await db?.close();
    db = null;
  });

  it('a byte copy made while checkpoints are held is the database at the checkpoint, whatever the writer did since', async () => {
    await t.w.close();
    db = await Db.open(t.path, false);
    const open = db;
    await open.run(`CREATE TABLE big AS SELECT range AS id, range * 2 AS n, 'text ' || range AS s FROM range(100000)`);
    await open.run(`CREATE TABLE small AS SELECT range AS id, 'v' || range AS v FROM range(1000)`);
    const held = await open.exclusive(async () => {
      expect(await open.holdCheckpoints()).toBe(true);
      return (await open.query(STATE)).rows[0];
    });
    expect(open.checkpointsHeld).toBe(true);
    // The writer goes on: a large append (DuckDB writes its row groups to the file at once), an update, a delete,
    // a table dropped and made again.
    await open.run(`INSERT INTO big SELECT range + 1000000, range, repeat('y', 200) FROM range(300000)`);
    await open.run(`UPDATE big SET n = -n WHERE id % 7 = 0`);
    await open.run(`DELETE FROM big WHERE id % 11 = 0`);
    await open.run(`DROP TABLE small`);
    await open.run(`CREATE TABLE small AS SELECT range AS id, 'w' || range AS v FROM range(5)`);
    // Appends below a row group go through the WAL: past 64 MB of it, DuckDB would checkpoint were it not held.
    for (let i = 0; i < 16; i++) {
      await open.run(
        `INSERT INTO big SELECT range + ${2_000_000 + i * 20_000}, range, repeat('z', 250) FROM range(20000)`,
      );
    }
    const after = (await open.query(STATE)).rows[0];
    expect(after).not.toEqual(held);
    expect(statSync(`${t.path}.wal`).size).toBeGreaterThan(64 * 1_048_576);

    const copy = join(t.dir, 'copy.duckdb');
    await copyFileAside(t.path, copy);
    await open.releaseCheckpoints();
    expect(open.checkpointsHeld).toBe(false);

    const reader = await DuckDbReader.open(copy);
    try {
      expect((await reader.query(STATE))[0]).toEqual(held);
    } finally {
      await reader.close();
    }
    // Released, DuckDB checkpoints again: the WAL goes once the writer checkpoints.
    await open.exclusive(() => open.run('CHECKPOINT'));
    expect(existsSync(`${t.path}.wal`)).toBe(false);
  });

  it('writeQueryCopy holds every committed page and is opened by the sandboxed reader; the live file keeps its writes', async () => {
    await page(
      t.w,
      registrants,
      eventScope(10),
      Array.from({ length: 50 }, (_, i) => reg(i + 1, { event_id: 10 })),
    );
    const copy = join(t.dir, 'query-copy.duckdb');
    const written = await t.w.writeQueryCopy(copy);
    expect(written.generation).toBe(t.w.generation);
    expect(statSync(copy).mode & 0o777).toBe(0o600);
    await page(t.w, registrants, eventScope(10), [reg(51, { event_id: 10 })]);
    const answer = await Warehouse.querySnapshot(copy, 'SELECT count(*) AS n FROM registrants', {
      form: 'json',
      sandbox: { allowRead: [] },
      limits: {},
    });
    expect(answer.rows).toEqual([{ n: 50 }]);
    expect((await t.w.query('SELECT count(*) AS n FROM registrants')).rows).toEqual([{ n: '51' }]);
    // The next copy holds the later page.
    await t.w.writeQueryCopy(copy);
    const again = await Warehouse.querySnapshot(copy, 'SELECT count(*) AS n FROM registrants', {
      form: 'json',
      sandbox: { allowRead: [] },
      limits: {},
    });
    expect(again.rows).toEqual([{ n: 51 }]);
  });
});
