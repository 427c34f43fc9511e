import { describe, expect, it } from 'vitest';
import type { Warehouse } from '../../src/warehouse/index.js';
import {
  accountScope,
  audit,
  cursor,
  eventScope,
  events,
  listItems,
  page,
  reg,
  registrants,
  resolve,
  rows,
  tempWarehouseEach,
  typed,
} from './helpers.js';

let w: Warehouse;
tempWarehouseEach((t) => {
  w = t.w;
});

describe('loadPage: merge', () => {
  it('counts inserted, updated and unchanged rows exactly', async () => {
    await w.ensureTable(registrants);
    const first = await page(w, registrants, eventScope(7), [reg(1), reg(2), reg(3)]);
    expect(first).toEqual({ inserted: 3, updated: 0, rejected: 0, unchanged: 0 });

    const second = await page(
      w,
      registrants,
      eventScope(7),
      [reg(1), reg(2, { email: 'new@example.com', updated_at: '2024-01-02 00:00:00' }), reg(4)],
      { runId: 'run-2' },
    );
    expect(second).toEqual({ inserted: 1, updated: 1, rejected: 0, unchanged: 1 });

    const got = await rows(w, `SELECT id, email, event_id, _run_id, _deleted_at FROM registrants ORDER BY id`);
    expect(got).toEqual([
      { id: '1', email: 'r1@example.com', event_id: '7', _run_id: 'run-1', _deleted_at: null },
      { id: '2', email: 'new@example.com', event_id: '7', _run_id: 'run-2', _deleted_at: null },
      { id: '3', email: 'r3@example.com', event_id: '7', _run_id: 'run-1', _deleted_at: null },
      { id: '4', email: 'r4@example.com', event_id: '7', _run_id: 'run-2', _deleted_at: null },
    ]);
    const synced = await rows(w, `SELECT count(*) AS n FROM registrants WHERE _synced_at IS NULL`);
    expect(synced[0]?.n).toBe('0');
  });

  it('an upsert clears _deleted_at (the record reappeared) and counts as an update', async () => {
    await page(w, registrants, eventScope(7), [reg(1), reg(2)]);
    await w.query(`UPDATE registrants SET _deleted_at = TIMESTAMP '2024-02-01 00:00:00' WHERE id = 1`);
    const r = await page(w, registrants, eventScope(7), [reg(1)]);
    expect(r).toMatchObject({ inserted: 0, updated: 1, unchanged: 0 });
    expect(await rows(w, `SELECT id FROM registrants WHERE _deleted_at IS NOT NULL`)).toEqual([]);
  });

  it('keeps the latest updated_at of a key within a page, in any order', async () => {
    const r = await page(w, registrants, eventScope(7), [
      reg(1, { email: 'newest', updated_at: '2024-03-01 00:00:00' }),
      reg(1, { email: 'oldest', updated_at: '2024-01-01 00:00:00' }),
      reg(1, { email: 'middle', updated_at: '2024-02-01 00:00:00' }),
      reg(2, { email: 'no-time', updated_at: null }),
      reg(2, { email: 'timed', updated_at: '2024-01-01 00:00:00' }),
      reg(2, { email: 'no-time-again', updated_at: null }),
    ]);
    expect(r).toMatchObject({ inserted: 2, updated: 0 });
    expect(await rows(w, `SELECT id, email FROM registrants ORDER BY id`)).toEqual([
      { id: '1', email: 'newest' },
      { id: '2', email: 'timed' },
    ]);
  });

  it('keeps the last occurrence of a key when the stream has no updated_at', async () => {
    const items = [
      { id: 1, value: 'first' },
      { id: 1, value: 'second' },
      { id: 2, value: 'only' },
    ];
    const r = await page(w, listItems, { key: 'list:5', column: 'list_id', value: 5 }, items);
    expect(r).toMatchObject({ inserted: 2 });
    expect(await rows(w, `SELECT id, list_id, value FROM list_items ORDER BY id`)).toEqual([
      { id: '1', list_id: '5', value: 'second' },
      { id: '2', list_id: '5', value: 'only' },
    ]);
  });

  it('fills the scope column from the scope only where the row has none', async () => {
    await page(w, registrants, eventScope(7), [reg(1), reg(2, { event_id: 8 })]);
    expect(await rows(w, `SELECT id, event_id FROM registrants ORDER BY id`)).toEqual([
      { id: '1', event_id: '7' },
      { id: '2', event_id: '8' },
    ]);
  });

  it('loads account-scoped streams', async () => {
    const r = await page(w, events, accountScope, [{ id: 10, name: 'Conf', status: 'live', start_date: '2024-05-01' }]);
    expect(r.inserted).toBe(1);
    expect(await rows(w, `SELECT id, name, start_date FROM events`)).toEqual([
      { id: '10', name: 'Conf', start_date: '2024-05-01' },
    ]);
  });

  it('works with a composite key (an append-only log)', async () => {
    const entry = (registrant: number, type: string, at: string, note = 'x') => ({
      registrant_id: registrant,
      type,
      updated_at: at,
      session_id: 3,
      note,
    });
    const first = await page(w, audit, eventScope(7), [
      entry(1, 'add', '2024-01-01 10:00:00'),
      entry(1, 'remove', '2024-01-01 10:00:00'),
      entry(1, 'add', '2024-01-02 10:00:00'),
      entry(1, 'add', '2024-01-02 10:00:00', 'dup'),
    ]);
    expect(first).toEqual({ inserted: 3, updated: 0, rejected: 0, unchanged: 0 });
    const second = await page(w, audit, eventScope(7), [
      entry(1, 'add', '2024-01-01 10:00:00'),
      entry(1, 'remove', '2024-01-01 10:00:00', 'changed'),
      entry(2, 'add', '2024-01-01 10:00:00'),
    ]);
    expect(second).toEqual({ inserted: 1, updated: 1, rejected: 0, unchanged: 1 });
    expect(await rows(w, `SELECT registrant_id, type, note FROM audit_log ORDER BY ALL`)).toEqual([
      { registrant_id: '1', type: 'add', note: 'dup' },
      { registrant_id: '1', type: 'add', note: 'x' },
      { registrant_id: '1', type: 'remove', note: 'changed' },
      { registrant_id: '2', type: 'add', note: 'x' },
    ]);
  });

  it('keeps every type exactly (decimals, timestamps, lists, JSON, big ids)', async () => {
    const stream = resolve(typed, { expand: ['homeAddress'] });
    // Values that come back in the very form they were given.
    const same = {
      n: -2147483648,
      d: 0.1,
      money: '-166.00',
      rate: '0.0725',
      flag: false,
      at: '2024-02-29 23:59:59',
      day: '2024-02-29',
      clock: '08:30:00',
      meta: '{"nested":{"list":[1,2]},"s":"ü"}',
      gender: 'Female',
      label: 'it\'s "text"\nwith lines',
      home_address_city: 'Zürich',
    };
    const row = {
      ...same,
      id: 9007199254740991,
      ids: [1, 9007199254740991],
      tags: ['a', 'b "quoted"'],
      gender_id: 2,
      updated_at: '2024-03-01 00:00:00',
    };
    await page(w, stream, accountScope, [row]);
    const got = await rows(
      w,
      `SELECT id, n, d, money, rate, flag, "at", "day", clock, ids, tags, meta, gender_id, gender, label,
              home_address_city, typeof(money) AS money_type, typeof(meta) AS meta_type FROM typed`,
    );
    expect(got).toEqual([
      {
        ...same,
        id: '9007199254740991',
        ids: '["1","9007199254740991"]',
        tags: '["a","b \\"quoted\\""]',
        gender_id: '2',
        money_type: 'DECIMAL(12,2)',
        meta_type: 'JSON',
      },
    ]);
  });

  it('never blanks columns a page does not carry (an expansion not selected this run)', async () => {
    const expanded = resolve(typed, { expand: ['homeAddress'] });
    const plain = resolve(typed);
    await page(w, expanded, accountScope, [
      { id: 1, label: 'a', home_address_city: 'Oslo', updated_at: '2024-01-01 00:00:00' },
      { id: 2, label: 'b', home_address_city: 'Rome', updated_at: '2024-01-01 00:00:00' },
    ]);
    const r = await page(w, plain, accountScope, [
      { id: 1, label: 'a2', updated_at: '2024-01-02 00:00:00' },
      { id: 2, label: 'b', updated_at: '2024-01-01 00:00:00' },
      { id: 3, label: 'c', updated_at: '2024-01-02 00:00:00' },
    ]);
    expect(r).toMatchObject({ inserted: 1, updated: 1, unchanged: 1 });
    expect(await rows(w, `SELECT id, label, home_address_city FROM typed ORDER BY id`)).toEqual([
      { id: '1', label: 'a2', home_address_city: 'Oslo' },
      { id: '2', label: 'b', home_address_city: 'Rome' },
      { id: '3', label: 'c', home_address_city: null },
    ]);
  });
});

describe('loadPage: bookkeeping in the same transaction', () => {
  it('records rejected records with their raw JSON, and rows without a key', async () => {
    const r = await page(w, registrants, eventScope(7), [reg(1), reg(2, { id: null })], {
      rejected: [{ raw: { id: 'x', nested: [1, { a: null }] }, reason: 'id: not an integer' }],
    });
    expect(r).toEqual({ inserted: 1, updated: 0, rejected: 2, unchanged: 0 });
    const got = await rows(
      w,
      `SELECT run_id, stream, scope, CAST(raw AS VARCHAR) AS raw, reason FROM _evsync.rejected ORDER BY reason`,
    );
    expect(got).toEqual([
      {
        run_id: 'run-1',
        stream: 'registrants',
        scope: 'event:7',
        raw: '{"id":"x","nested":[1,{"a":null}]}',
        reason: 'id: not an integer',
      },
      {
        run_id: 'run-1',
        stream: 'registrants',
        scope: 'event:7',
        raw: expect.stringContaining('"email":"r2@example.com"'),
        reason: 'missing key column id',
      },
    ]);
  });

  it('saves the cursor with the page, and nothing of a page that fails', async () => {
    const c1 = cursor('registrants', 'event:7', {
      walk: { mode: 'backfill', walkId: 'w1', from: null, to: '2024-05-01 00:00:00', lastKey: 2, pages: 1, rows: 2 },
    });
    await page(w, registrants, eventScope(7), [reg(1), reg(2)], { cursor: c1 });
    expect(await w.cursors.get('registrants', 'event:7')).toEqual(c1);

    // Malformed JSON text in a JSON column makes DuckDB reject the page: the cursor must not move.
    const c2 = cursor('registrants', 'event:7', {
      walk: { mode: 'backfill', walkId: 'w1', from: null, to: '2024-05-01 00:00:00', lastKey: 4, pages: 2, rows: 4 },
    });
    const bad = resolve({ ...registrants, fields: { ...registrants.fields, extra: 'json' } });
    await w.ensureTable(bad);
    await expect(
      page(w, bad, eventScope(7), [reg(3), reg(4, { extra: '{not json' })], {
        cursor: c2,
        rejected: [{ raw: {}, reason: 'r' }],
      }),
    ).rejects.toThrow();
    expect(await w.cursors.get('registrants', 'event:7')).toEqual(c1);
    expect(await w.tableCounts()).toEqual({ registrants: 2 });
    expect(await rows(w, `SELECT count(*) AS n FROM _evsync.rejected`)).toEqual([{ n: '0' }]);

    // The warehouse is usable after the failure.
    expect(await page(w, registrants, eventScope(7), [reg(3)], { cursor: c2 })).toMatchObject({ inserted: 1 });
    expect(await w.cursors.get('registrants', 'event:7')).toEqual(c2);
  });

  it('records seen ids and writes no rows when upsert is false (id sweeps)', async () => {
    const r = await page(w, registrants, eventScope(7), [], {
      upsert: false,
      seen: { walkId: 'sweep-1', ids: [1, 2, 3] },
      cursor: cursor('registrants', 'event:7/sweep'),
    });
    expect(r).toEqual({ inserted: 0, updated: 0, rejected: 0, unchanged: 0 });
    expect(await rows(w, `SELECT stream, scope, walk_id, id FROM _evsync.seen ORDER BY id`)).toEqual([
      { stream: 'registrants', scope: 'event:7', walk_id: 'sweep-1', id: '1' },
      { stream: 'registrants', scope: 'event:7', walk_id: 'sweep-1', id: '2' },
      { stream: 'registrants', scope: 'event:7', walk_id: 'sweep-1', id: '3' },
    ]);
    expect(await w.cursors.get('registrants', 'event:7/sweep')).not.toBeNull();
  });

  it('creates the table on first load when ensureTable was not called', async () => {
    await page(w, registrants, eventScope(1), [reg(1)]);
    expect(await w.tableCounts()).toEqual({ registrants: 1 });
  });
});
