import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Warehouse } from '../../src/warehouse/index.js';
import {
  cursor,
  eventScope,
  openTemp,
  page,
  reg,
  registrants,
  registrantsDef,
  resolve,
  rows,
  type TempWarehouse,
  typed,
} from './helpers.js';

let t: TempWarehouse;
let w: Warehouse;
beforeEach(async () => {
  t = await openTemp();
  w = t.w;
});
afterEach(async () => {
  await t.cleanup();
});

const stageDir = () => `${t.path}.stage`;
/** Files beside the database that hold rows: a merged page's file is emptied and kept for the next page. */
const heldPages = () => readdirSync(stageDir()).filter((f) => statSync(`${stageDir()}/${f}`).size > 0);
/** Reads through a read-only warehouse on the same instance: it never merges, so staged pages stay staged. */
async function peek(sql: string) {
  const ro = await Warehouse.open(t.path, { readOnly: true });
  try {
    return (await ro.query(sql)).rows;
  } finally {
    await ro.close();
  }
}
const keysUnique = async (table: string) =>
  rows(w, `SELECT id, count(*) AS n FROM ${table} GROUP BY id HAVING count(*) > 1 ORDER BY id`);

describe('pages of a run: staged, merged in batches', () => {
  it('stages pages with their cursor, merges them on read and counts them in finishLoads', async () => {
    await page(w, registrants, eventScope(7), [reg(1), reg(2), reg(3)], { runId: 'before' });
    const runId = w.openLoad(await w.runs.start('sync', {})).runId;
    const c1 = cursor('registrants', 'event:7', {
      walk: { mode: 'incremental', walkId: 'w', from: null, to: null, lastKey: 4, pages: 1, rows: 3 },
    });
    const first = await page(
      w,
      registrants,
      eventScope(7),
      [reg(1), reg(2, { email: 'new@example.com', updated_at: '2024-01-02 00:00:00' }), reg(4)],
      { runId, cursor: c1 },
    );
    expect(first).toEqual({ inserted: 0, updated: 0, unchanged: 0, rejected: 0, staged: 3 });
    expect(await w.cursors.get('registrants', 'event:7')).toEqual(c1);
    // A second page changes key 4 again: the later page wins.
    await page(w, registrants, eventScope(7), [reg(4, { email: 'four@example.com' }), reg(5)], { runId });
    const files = readdirSync(stageDir());
    expect(files).toHaveLength(2);
    expect(await peek(`SELECT count(*) AS n FROM registrants`)).toEqual([{ n: '3' }]);
    expect(await peek(`SELECT row_count AS n FROM _evsync.staged ORDER BY seq`)).toEqual([{ n: '3' }, { n: '2' }]);
    for (const f of files) expect(statSync(`${stageDir()}/${f}`).mode & 0o777).toBe(0o600);
    expect(statSync(stageDir()).mode & 0o777).toBe(0o700);

    // Any read merges first.
    expect(await rows(w, `SELECT id, email, _run_id FROM registrants ORDER BY id`)).toEqual([
      { id: '1', email: 'r1@example.com', _run_id: 'before' },
      { id: '2', email: 'new@example.com', _run_id: runId },
      { id: '3', email: 'r3@example.com', _run_id: 'before' },
      { id: '4', email: 'four@example.com', _run_id: runId },
      { id: '5', email: 'r5@example.com', _run_id: runId },
    ]);
    expect(await peek(`SELECT count(*) AS n FROM _evsync.staged`)).toEqual([{ n: '0' }]);
    expect(heldPages()).toEqual([]);
    expect(await w.finishLoads(runId)).toEqual({ registrants: { inserted: 2, updated: 1, unchanged: 1 } });
    expect(await w.finishLoads(runId)).toEqual({});
  });

  it('merges once a stream has mergeRows rows staged, and at finishLoads', async () => {
    await t.cleanup();
    t = await openTemp({ mergeRows: 4 });
    w = t.w;
    const runId = w.openLoad(await w.runs.start('sync', {})).runId;
    await page(w, registrants, eventScope(1), [reg(1), reg(2)], { runId });
    await page(w, registrants, eventScope(1), [reg(3)], { runId });
    expect(heldPages()).toHaveLength(2);
    await page(w, registrants, eventScope(1), [reg(4)], { runId });
    expect(heldPages()).toHaveLength(0);
    await page(w, registrants, eventScope(2), [reg(5)], { runId });
    // Written into an emptied file: no file was made for it.
    expect(readdirSync(stageDir())).toHaveLength(3);
    expect(heldPages()).toHaveLength(1);
    expect(await w.finishLoads(runId)).toEqual({ registrants: { inserted: 5, updated: 0, unchanged: 0 } });
    expect(await rows(w, `SELECT id, event_id FROM registrants ORDER BY id`)).toEqual([
      { id: '1', event_id: '1' },
      { id: '2', event_id: '1' },
      { id: '3', event_id: '1' },
      { id: '4', event_id: '1' },
      { id: '5', event_id: '2' },
    ]);
    // Closed, the warehouse leaves nothing beside the database.
    await w.close();
    expect(existsSync(stageDir())).toBe(false);
  });

  it('batches pages of different columns apart, keeping columns a page does not carry', async () => {
    const expanded = resolve(typed, { expand: ['homeAddress'] });
    const plain = resolve(typed);
    await page(w, expanded, { key: 'account', column: null, value: null }, [
      { id: 1, label: 'a', home_address_city: 'Oslo', updated_at: '2024-01-01 00:00:00' },
    ]);
    const runId = w.openLoad(await w.runs.start('sync', {})).runId;
    const account = { key: 'account', column: null, value: null };
    await page(w, plain, account, [{ id: 1, label: 'a2', updated_at: '2024-01-02 00:00:00' }], { runId });
    await page(w, expanded, account, [{ id: 2, label: 'b', home_address_city: 'Rome' }], { runId });
    expect(await w.finishLoads(runId)).toEqual({ typed: { inserted: 1, updated: 1, unchanged: 0 } });
    expect(await rows(w, `SELECT id, label, home_address_city FROM typed ORDER BY id`)).toEqual([
      { id: '1', label: 'a2', home_address_city: 'Oslo' },
      { id: '2', label: 'b', home_address_city: 'Rome' },
    ]);
  });

  it('merges pages of different columns one run at a time when they share a key (the page-by-page result)', async () => {
    const expanded = resolve(typed, { expand: ['homeAddress'] });
    const plain = resolve(typed);
    const account = { key: 'account', column: null, value: null };
    const runId = w.openLoad(await w.runs.start('sync', {})).runId;
    await page(w, expanded, account, [{ id: 1, label: 'a', home_address_city: 'Oslo' }], { runId });
    await page(w, plain, account, [{ id: 1, label: 'b' }], { runId });
    await page(w, expanded, account, [{ id: 1, label: 'c', home_address_city: null }, { id: 2 }], { runId });
    await page(w, plain, account, [{ id: 2, label: 'd' }], { runId });
    const counts = await w.finishLoads(runId);
    expect(counts.typed).toEqual({ inserted: 2, updated: 3, unchanged: 0 });
    expect(await rows(w, `SELECT id, label, home_address_city FROM typed ORDER BY id`)).toEqual([
      { id: '1', label: 'c', home_address_city: null },
      { id: '2', label: 'd', home_address_city: null },
    ]);
    expect(await keysUnique('typed')).toEqual([]);
  });

  it('a killed process leaves committed pages staged: the next open merges them and removes stray files', async () => {
    const runId = w.openLoad(await w.runs.start('sync', {})).runId;
    await page(w, registrants, eventScope(7), [reg(1), reg(2)], { runId });
    await page(w, registrants, eventScope(7), [reg(2, { email: 'two' }), reg(3)], { runId });
    // What a kill leaves: the registrations (committed) and their files, plus a page file nothing registered yet.
    const registered = readdirSync(stageDir());
    writeFileSync(`${stageDir()}/page-in-flight.json`, '[{"id": 99}]', { mode: 0o600 });
    const copies = await peek(`SELECT file FROM _evsync.staged ORDER BY seq`);
    expect(copies.map((r) => r.file).sort()).toEqual([...registered].sort());
    // The kill: a copy of the file and its staging directory as they are now, opened as the next run would.
    await crashCopy(t, async (copy) => {
      const reopened = await Warehouse.open(copy);
      try {
        expect(readdirSync(`${copy}.stage`)).toEqual([]);
        expect(await reopened.query(`SELECT id, email FROM registrants ORDER BY id`)).toMatchObject({
          rows: [
            { id: '1', email: 'r1@example.com' },
            { id: '2', email: 'two' },
            { id: '3', email: 'r3@example.com' },
          ],
        });
        expect(Number((await reopened.query(`SELECT count(*) AS n FROM _evsync.staged`)).rows[0]?.n)).toBe(0);
      } finally {
        await reopened.close();
      }
    });
  });

  it('readers never see two current rows of a key: repeated pages and runs keep one row each', async () => {
    for (let round = 0; round < 3; round++) {
      const runId = w.openLoad(await w.runs.start('sync', {})).runId;
      for (let p = 0; p < 3; p++) {
        const ids = [1 + p, 2 + p, 3 + p];
        await page(
          w,
          registrants,
          eventScope(7),
          ids.map((id) => reg(id, { email: `r${id}-${round}-${p}` })),
          { runId },
        );
      }
      await w.finishLoads(runId);
      expect(await keysUnique('registrants')).toEqual([]);
    }
    expect(await rows(w, `SELECT id, email FROM registrants ORDER BY id`)).toEqual([
      { id: '1', email: 'r1-2-0' },
      { id: '2', email: 'r2-2-1' },
      { id: '3', email: 'r3-2-2' },
      { id: '4', email: 'r4-2-2' },
      { id: '5', email: 'r5-2-2' },
    ]);
  });

  it('a column null in every row of a page (left out of its file) still clears a stored value', async () => {
    const answers = (diet: string | null) => ({ custom_fields: diet === null ? null : JSON.stringify({ c_7: diet }) });
    await page(w, registrants, eventScope(7), [reg(1, answers('vegan')), reg(2, answers('none'))]);
    await page(w, registrants, eventScope(7), [reg(1, { ...answers(null), updated_at: '2024-01-02 00:00:00' })]);
    const runId = w.openLoad(await w.runs.start('sync', {})).runId;
    await page(w, registrants, eventScope(7), [reg(2, answers(null)), reg(3, answers(null))], { runId });
    await page(w, registrants, eventScope(7), [reg(4, answers('x'))], { runId });
    expect(await w.finishLoads(runId)).toEqual({ registrants: { inserted: 2, updated: 1, unchanged: 0 } });
    expect(await rows(w, `SELECT id, custom_fields FROM registrants ORDER BY id`)).toEqual([
      { id: '1', custom_fields: null },
      { id: '2', custom_fields: null },
      { id: '3', custom_fields: null },
      { id: '4', custom_fields: '{"c_7":"x"}' },
    ]);
  });

  it('a column widened while earlier pages wait keeps their values (schema evolution between staged pages)', async () => {
    const runId = w.openLoad(await w.runs.start('sync', {})).runId;
    await page(w, registrants, eventScope(7), [reg(1, { level: 3 }), reg(2, { level: 4 })], { runId });
    await page(w, registrants, eventScope(7), [reg(2, { level: 'four' }), reg(3, { level: 'x' })], { runId });
    // The two pages have different column types, so they merge one after the other: page 2 updates key 2.
    expect(await w.finishLoads(runId)).toEqual({ registrants: { inserted: 3, updated: 1, unchanged: 0 } });
    expect(await rows(w, `SELECT id, level, typeof(level) AS t FROM registrants ORDER BY id`)).toEqual([
      { id: '1', level: '3', t: 'VARCHAR' },
      { id: '2', level: 'four', t: 'VARCHAR' },
      { id: '3', level: 'x', t: 'VARCHAR' },
    ]);
  });

  it('a staged page its table refuses goes to _evsync.rejected; the other pages merge', async () => {
    const stream = resolve(typed);
    const account = { key: 'account', column: null, value: null };
    const runId = w.openLoad(await w.runs.start('sync', {})).runId;
    await page(w, stream, account, [{ id: 1, meta: '{"ok":true}' }], { runId });
    await page(
      w,
      stream,
      account,
      [
        { id: 2, meta: '{not json' },
        { id: 3, meta: '[]' },
      ],
      { runId },
    );
    await page(w, stream, account, [{ id: 4, label: 'four' }], { runId });
    expect(await w.finishLoads(runId)).toEqual({ typed: { inserted: 2, updated: 0, unchanged: 0 } });
    expect(await rows(w, `SELECT id FROM typed ORDER BY id`)).toEqual([{ id: '1' }, { id: '4' }]);
    const rejected = await rows(w, `SELECT CAST(raw AS VARCHAR) AS raw, reason FROM _evsync.rejected ORDER BY raw`);
    expect(rejected.map((r) => JSON.parse(String(r.raw)).id)).toEqual([2, 3]);
    expect(String(rejected[0]?.reason)).toMatch(/^staged page could not be merged: .*JSON/i);
    expect(await peek(`SELECT count(*) AS n FROM _evsync.staged`)).toEqual([{ n: '0' }]);
  });

  it('works the same on a table created with a PRIMARY KEY by an earlier version', async () => {
    await w.query(`CREATE TABLE registrants (id BIGINT PRIMARY KEY, event_id BIGINT, email VARCHAR,
      updated_at TIMESTAMP, _synced_at TIMESTAMP, _run_id VARCHAR, _deleted_at TIMESTAMP)`);
    const stream = resolve({ ...registrantsDef, fields: { id: 'bigint', email: 'text', updated_at: 'timestamp' } });
    const runId = w.openLoad(await w.runs.start('sync', {})).runId;
    await page(
      w,
      stream,
      eventScope(1),
      [reg(1), reg(2)].map(({ id, email }) => ({ id, email })),
      { runId },
    );
    await page(
      w,
      stream,
      eventScope(1),
      [
        { id: 2, email: 'changed' },
        { id: 3, email: 'x' },
      ],
      { runId },
    );
    expect(await w.finishLoads(runId)).toEqual({ registrants: { inserted: 3, updated: 0, unchanged: 0 } });
    expect(await rows(w, `SELECT id, email FROM registrants ORDER BY id`)).toEqual([
      { id: '1', email: 'r1@example.com' },
      { id: '2', email: 'changed' },
      { id: '3', email: 'x' },
    ]);
    await page(w, stream, eventScope(1), [{ id: 2, email: 'again' }]);
    expect(await rows(w, `SELECT email FROM registrants WHERE id = 2`)).toEqual([{ email: 'again' }]);
  });
});

describe('column names compare case-insensitively', () => {
  it('keeps a field out that differs from a column only in case, and records it once', async () => {
    const r1 = await page(w, registrants, eventScope(7), [reg(1, { Email: 'SHOUT', Nickname: 'n1', nickname: 'n2' })]);
    expect(r1).toMatchObject({ inserted: 1 });
    await page(w, registrants, eventScope(7), [reg(2, { Email: 'again', NICKNAME: 'x' })]);
    const cols = await rows(
      w,
      `SELECT column_name FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = 'registrants' AND lower(column_name) IN ('email', 'nickname')`,
    );
    expect(cols.map((c) => c.column_name).sort()).toEqual(['Nickname', 'email']);
    expect(await rows(w, `SELECT id, email, "Nickname" AS nick FROM registrants ORDER BY id`)).toEqual([
      { id: '1', email: 'r1@example.com', nick: 'n1' },
      { id: '2', email: 'r2@example.com', nick: null },
    ]);
    const recorded = await rows(
      w,
      `SELECT column_name, change FROM _evsync.schema_changes WHERE change = 'skip_column' ORDER BY column_name`,
    );
    expect(recorded).toEqual([
      { column_name: 'Email', change: 'skip_column' },
      { column_name: 'NICKNAME', change: 'skip_column' },
      { column_name: 'nickname', change: 'skip_column' },
    ]);
  });
});

/** Copies the database and its staging directory as they are now (as a SIGKILL would leave them) and opens that. */
async function crashCopy(tw: TempWarehouse, check: (copy: string) => Promise<void>): Promise<void> {
  const { cpSync } = await import('node:fs');
  await tw.w.checkpoint();
  const copy = `${tw.dir}/copy.duckdb`;
  // The staged rows are in the database (committed): copy it after a checkpoint (the WAL is folded in), without
  // closing it (closing would merge them).
  cpSync(tw.path, copy);
  cpSync(`${tw.path}.stage`, `${copy}.stage`, { recursive: true });
  expect(existsSync(`${copy}.stage/page-in-flight.json`)).toBe(true);
  await check(copy);
}
