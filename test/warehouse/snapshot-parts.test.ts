/**
 * The snapshot's cost follows what changed (issue 35, src/warehouse/copies/snapshot.ts): a publish with nothing
 * changed writes no byte, one changed record rewrites only the part that holds it, a reader of the snapshot sees what
 * the warehouse holds, and a replaced part stays for readers of the earlier snapshot until the grace period has
 * passed on the warehouse's clock. Read from another process, as analysts read it.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DuckDbReader } from '../helpers/duckdb-reader.js';
import { filesUnder } from '../helpers/files.js';
import {
  customFields,
  eventScope,
  events,
  openTemp,
  page,
  reg,
  registrants,
  rows,
  type TempWarehouse,
} from './helpers.js';

const files = filesUnder;

let t: TempWarehouse | null = null;
let clock = Date.parse('2026-03-01T10:00:00Z');
afterEach(async () => {
  await t?.cleanup();
  t = null;
});

async function open(): Promise<TempWarehouse> {
  clock = Date.parse('2026-03-01T10:00:00Z');
  t = await openTemp({ now: () => clock });
  return t;
}

async function fill(w: TempWarehouse['w'], event: number, ids: number[], status = 'confirmed'): Promise<void> {
  await page(w, events, { key: 'account', column: null, value: null }, [
    { id: event, name: `Event ${event}`, updated_at: '2024-01-01 00:00:00' },
  ]);
  await page(
    w,
    registrants,
    eventScope(event),
    ids.map((id) =>
      reg(id, { event_id: event, registration_status: status, custom_fields: customFields({ c_7: 'x' }) }),
    ),
  );
}

/** Every column as text, so both sides' clients give the same values. */
const ALL = 'SELECT CAST(COLUMNS(*) AS VARCHAR) FROM main.registrants ORDER BY id';

/** The warehouse's rows as the reader (another process) gives them: every value as text. */
async function asText(w: TempWarehouse['w'], sql: string) {
  return (await rows(w, sql)).map((r) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === null ? null : String(v)])),
  );
}

describe('snapshot parts', () => {
  it('writes nothing when nothing changed, and only the changed part after one changed record', async () => {
    const { w, dir } = await open();
    await fill(w, 10, [1, 2, 3]);
    await fill(w, 11, [4, 5]);
    await w.buildAnalyticsViews();
    const out = join(dir, 'out');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(out);
    const target = join(out, 'snapshot.duckdb');
    const first = await w.publishSnapshot(target);
    expect(first.parts).toEqual({ written: 3, kept: 0, retired: 0, removed: 0 });
    expect(first.bytes).toBe(first.size);

    // The same pages again (a sync that re-read them): the merge leaves identical rows alone.
    clock += 60_000;
    await fill(w, 10, [1, 2, 3]);
    const before = files(out);
    const same = await w.publishSnapshot(target);
    expect(same.unchanged).toBe(true);
    expect(same.bytes).toBe(0);
    expect(files(out)).toEqual(before);

    // One registrant of event 11 changes: its part, the part of event 11's kept versions (the one it replaced; no
    // history had a version before, so none had a part) and the catalogue are written, nothing else.
    clock += 60_000;
    await page(w, registrants, eventScope(11), [
      reg(5, { event_id: 11, registration_status: 'cancelled', custom_fields: customFields({ c_7: 'x' }) }),
    ]);
    const one = await w.publishSnapshot(target);
    expect(one.parts).toEqual({ written: 2, kept: 2, retired: 1, removed: 0 });
    expect(one.copied).toEqual(['registrants', '_history.registrants']);
    expect(one.rows).toEqual({ registrants: 2, '_history.registrants': 1 });
    const after = files(out);
    const rewritten = [...after].filter(([f, stat]) => before.get(f) !== stat).map(([f]) => f);
    expect(rewritten.sort()).toEqual(
      [
        'snapshot.duckdb',
        rewritten.find((f) => /^snapshot\.duckdb\.parts\/registrants\/e11\./.test(f)),
        rewritten.find((f) => /^snapshot\.duckdb\.parts\/_history\.registrants\/e11\./.test(f)),
      ].sort(),
    );
    // The replaced part is still there for readers of the previous snapshot.
    for (const f of before.keys()) expect(after.has(f)).toBe(true);

    const reader = await DuckDbReader.open(target);
    try {
      expect(await reader.query(ALL)).toEqual(await asText(w, ALL));
      const view = 'SELECT * FROM analytics.registration_status_by_event ORDER BY ALL';
      expect(await reader.query(view)).toEqual(await asText(w, view));
      // The history of every record too: registrant 5's two versions.
      const history = 'SELECT CAST(COLUMNS(*) AS VARCHAR) FROM history.registrants ORDER BY id, _valid_from';
      expect(await reader.query(history)).toEqual(await asText(w, history));
      expect(await reader.count('SELECT count(*) FROM history.registrants WHERE id = 5')).toBe(2);
    } finally {
      await reader.close();
    }
  });

  it('keeps a replaced part for the grace period on the warehouse clock, then removes it', async () => {
    const { w, dir } = await open();
    await fill(w, 10, [1, 2]);
    const target = join(dir, 'snapshot.duckdb');
    await w.publishSnapshot(target);
    const old = await DuckDbReader.open(target);
    try {
      clock += 1_000;
      await fill(w, 10, [1, 2], 'cancelled');
      const second = await w.publishSnapshot(target, { graceMs: 10 * 60_000 });
      expect(second.parts.retired).toBe(1);
      // A reader of the previous snapshot still reads its parts, as they were.
      expect(await old.count(`SELECT count(*) FROM main.registrants WHERE registration_status = 'confirmed'`)).toBe(2);

      // Nine minutes on, an unchanged publish keeps it; past ten, it goes (and the current parts stay).
      clock += 9 * 60_000;
      expect((await w.publishSnapshot(target, { graceMs: 10 * 60_000 })).parts.removed).toBe(0);
      clock += 2 * 60_000;
      const late = await w.publishSnapshot(target, { graceMs: 10 * 60_000 });
      expect(late.unchanged).toBe(true);
      expect(late.parts.removed).toBe(1);
    } finally {
      await old.close();
    }
    const reader = await DuckDbReader.open(target);
    try {
      expect(await reader.count(`SELECT count(*) FROM main.registrants WHERE registration_status = 'cancelled'`)).toBe(
        2,
      );
    } finally {
      await reader.close();
    }
    const parts = readdirSync(join(dir, 'snapshot.duckdb.parts', 'registrants'));
    expect(parts.length).toBe(1);
  });

  it('a column added to a table rewrites that table whole; a table with no row is still there with its columns', async () => {
    const { w, dir } = await open();
    await fill(w, 10, [1]);
    await fill(w, 11, [2]);
    const target = join(dir, 'snapshot.duckdb');
    await w.publishSnapshot(target);
    clock += 1_000;
    // A new field in one event's page: the table gains a column, every part is written again under it (and the
    // version the page replaced gets the first part of the kept versions).
    await page(w, registrants, eventScope(10), [
      reg(1, { event_id: 10, updated_at: '2024-02-01 00:00:00', custom_fields: customFields({ c_7: 'x' }) }),
    ]);
    await w.query('ALTER TABLE registrants ADD COLUMN late VARCHAR');
    const r = await w.publishSnapshot(target);
    expect(r.parts.written).toBe(3);
    expect(r.rows).toEqual({ registrants: 2, '_history.registrants': 1 });
    const reader = await DuckDbReader.open(target);
    try {
      expect(await reader.count('SELECT count(*) FROM main.registrants WHERE late IS NULL')).toBe(2);
    } finally {
      await reader.close();
    }
    await w.query('DELETE FROM registrants');
    const empty = await w.publishSnapshot(target);
    expect(empty.parts.written).toBe(1);
    const again = await DuckDbReader.open(target);
    try {
      expect(await again.count('SELECT count(*) FROM main.registrants')).toBe(0);
      const cols = await again.query(
        `SELECT column_name FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = 'registrants'`,
      );
      expect(cols.map((c) => c.column_name)).toContain('late');
    } finally {
      await again.close();
    }
    expect(existsSync(join(dir, 'snapshot.duckdb.parts'))).toBe(true);
  });
});

describe('a snapshot an earlier release published', () => {
  it('(its tables copied into the file) is replaced by the catalogue, whole, and read as before', async () => {
    const { w, dir, path } = await open();
    await fill(w, 10, [1, 2]);
    const target = join(dir, 'snapshot.duckdb');
    // What evsync wrote before parts: the tables themselves in the file, and `_evsync.snapshot` naming this warehouse.
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const instance = await DuckDBInstance.create(target);
    const connection = await instance.connect();
    await connection.run(`CREATE SCHEMA _evsync`);
    await connection.run(`CREATE TABLE registrants AS SELECT 99 AS id, CAST(NULL AS TIMESTAMP) AS _deleted_at`);
    await connection.run(
      `CREATE TABLE _evsync.snapshot AS SELECT TIMESTAMP '2026-01-01 00:00:00' AS published_at, '${path}' AS source,
         NULL AS run_id, 1 AS tables, 'old' AS digest`,
    );
    connection.closeSync();
    instance.closeSync();

    const r = await w.publishSnapshot(target);
    expect(r.unchanged).toBe(false);
    expect(r.parts).toEqual({ written: 2, kept: 0, retired: 0, removed: 0 });
    const reader = await DuckDbReader.open(target);
    try {
      expect(await reader.query('SELECT id FROM main.registrants ORDER BY id')).toEqual([{ id: '1' }, { id: '2' }]);
    } finally {
      await reader.close();
    }
    // From then on, as any snapshot of parts: nothing changed, nothing written.
    expect((await w.publishSnapshot(target)).unchanged).toBe(true);
  });
});

describe('tableParts', () => {
  it('cuts a scope above the limit into hash buckets of ids; a row written again changes its bucket only', async () => {
    const { w } = await open();
    await fill(w, 10, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await fill(w, 11, [20]);
    const parts = await w.tableParts('registrants', 3);
    const cut = parts.filter((p) => p.eventId === 10);
    expect(cut.every((p) => /^e10\.b\d+of4$/.test(p.key))).toBe(true);
    expect(cut.reduce((n, p) => n + p.rows, 0)).toBe(9);
    expect(parts.filter((p) => p.eventId === 11).map((p) => p.key)).toEqual(['e11']);
    // Each bucket's condition selects its own rows: together they are the scope, once.
    let selected = 0;
    for (const p of cut)
      selected += Number((await rows(w, `SELECT count(*) AS n FROM registrants WHERE ${p.where}`))[0]?.n);
    expect(selected).toBe(9);

    clock += 1_000;
    await page(w, registrants, eventScope(10), [reg(4, { event_id: 10, registration_status: 'cancelled' })], {
      runId: 'run-2',
    });
    const next = await w.tableParts('registrants', 3);
    const changed = next.filter((p) => parts.find((q) => q.key === p.key)?.fingerprint !== p.fingerprint);
    expect(changed.length).toBe(1);
    expect(
      Number((await rows(w, `SELECT count(*) AS n FROM registrants WHERE id = 4 AND ${changed[0]?.where}`))[0]?.n),
    ).toBe(1);
  });
});
