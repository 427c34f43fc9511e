import { describe, expect, it } from 'vitest';
import type { Warehouse } from '../../src/warehouse/index.js';
import { eventScope, page, registrants, registrantsDef, resolve, rows, tempWarehouseEach } from './helpers.js';

let w: Warehouse;
tempWarehouseEach((t) => {
  w = t.w;
});

const changes = () =>
  rows(
    w,
    `SELECT run_id, table_name, column_name, change, origin, from_type, to_type FROM _evsync.schema_changes
      ORDER BY changed_at, column_name`,
  );
const columnType = async (column: string) =>
  (
    await rows(
      w,
      `SELECT data_type FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = 'registrants' AND column_name = ?`,
      [column],
    )
  )[0]?.data_type;

describe('ensureTable', () => {
  it('creates the table with typed columns and system columns, without a key index', async () => {
    await w.ensureTable(registrants);
    const cols = await rows(
      w,
      `SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = 'registrants' ORDER BY column_index`,
    );
    expect(cols.map((c) => `${c.column_name} ${c.data_type}`)).toEqual([
      'id BIGINT',
      'event_id BIGINT',
      'reg_type_id BIGINT',
      'package_id BIGINT',
      'discount_code VARCHAR',
      'email VARCHAR',
      'registration_status VARCHAR',
      'registered_at TIMESTAMP',
      'created_at TIMESTAMP',
      'checked_in_at TIMESTAMP',
      'individual_gross DECIMAL(12,2)',
      'session_ids BIGINT[]',
      'updated_at TIMESTAMP',
      'custom_fields JSON',
      '_synced_at TIMESTAMP',
      '_run_id VARCHAR',
      '_deleted_at TIMESTAMP',
    ]);
    // No PRIMARY KEY: its index is not buffer-managed in DuckDB 1.5; the merge keeps one row per key (merge.ts).
    const pk = await rows(
      w,
      `SELECT constraint_column_names AS cols FROM duckdb_constraints()
        WHERE table_name = 'registrants' AND constraint_type = 'PRIMARY KEY'`,
    );
    expect(pk).toEqual([]);
  });

  it('adds columns the definition gained, and widens declared types, recording both', async () => {
    await w.ensureTable(registrants);
    await page(w, registrants, eventScope(1), [{ id: 1, email: 'a', reg_type_id: 3 }]);
    const grown = resolve(
      { ...registrantsDef, fields: { ...registrantsDef.fields, reg_type_id: 'text', badge: 'text' } },
      {
        customs: [
          { name: 'c_7', label: 'Diet', type: 'text' },
          { name: 'c_8', label: 'Size', type: 'json' },
        ],
      },
    );
    await w.ensureTable(grown);
    // A custom field the definitions gained is an answer in custom_fields: no column, no change.
    const made = (await changes()).sort((a, b) => String(a.column_name).localeCompare(String(b.column_name)));
    expect(made).toEqual([
      expect.objectContaining({ column_name: 'badge', change: 'add_column', origin: 'definition', to_type: 'text' }),
      expect.objectContaining({
        column_name: 'reg_type_id',
        change: 'widen',
        origin: 'definition',
        from_type: 'bigint',
        to_type: 'text',
      }),
    ]);
    expect(await rows(w, `SELECT reg_type_id, badge FROM registrants`)).toEqual([{ reg_type_id: '3', badge: null }]);
    // A narrower declaration never narrows the table.
    await w.ensureTable(registrants);
    expect(await columnType('reg_type_id')).toBe('VARCHAR');
  });
});

describe('schema evolution in loadPage', () => {
  it('adds listed new columns in the page transaction and records them under the run', async () => {
    const r = await page(w, registrants, eventScope(1), [{ id: 1, email: 'a', vip_level: 3 }], {
      newColumns: { vip_level: 'bigint' },
      runId: 'run-9',
    });
    expect(r.inserted).toBe(1);
    expect(await rows(w, `SELECT id, vip_level FROM registrants`)).toEqual([{ id: '1', vip_level: '3' }]);
    expect(await changes()).toEqual([
      {
        run_id: 'run-9',
        table_name: 'registrants',
        column_name: 'vip_level',
        change: 'add_column',
        origin: 'evolution',
        from_type: null,
        to_type: 'bigint',
      },
    ]);
    expect(await w.existingExtraFields(registrantsDef)).toEqual({ vip_level: 'bigint' });
  });

  it('infers the type of a field the rows carry that nobody listed', async () => {
    await page(w, registrants, eventScope(1), [
      { id: 1, email: 'a', badge_printed_at: null, tags2: ['x'] },
      { id: 2, email: 'b', badge_printed_at: '2024-01-01 09:00:00', tags2: ['y', 'z'] },
    ]);
    expect(await columnType('badge_printed_at')).toBe('TIMESTAMP');
    expect(await columnType('tags2')).toBe('VARCHAR[]');
    // Names that cannot be columns are left out (the normalizer already drops them; this is the warehouse's guard).
    await page(w, registrants, eventScope(1), [{ id: 3, email: 'c', _links: 'x', 'bad name': 1 }]);
    expect(await columnType('_links')).toBeUndefined();
    expect(await columnType('bad name')).toBeUndefined();
  });

  it('widens an evolved column when a value does not fit, keeping every stored value', async () => {
    await page(w, registrants, eventScope(1), [{ id: 1, score: 5 }], { newColumns: { score: 'bigint' } });
    await page(w, registrants, eventScope(1), [{ id: 2, score: 2.5 }], { runId: 'run-2' });
    expect(await columnType('score')).toBe('DOUBLE');
    await page(w, registrants, eventScope(1), [{ id: 3, score: 'n/a' }], { runId: 'run-3' });
    expect(await columnType('score')).toBe('VARCHAR');
    expect(await rows(w, `SELECT id, score FROM registrants ORDER BY id`)).toEqual([
      { id: '1', score: '5.0' },
      { id: '2', score: '2.5' },
      { id: '3', score: 'n/a' },
    ]);
    expect((await changes()).map((c) => [c.run_id, c.change, c.from_type, c.to_type])).toEqual([
      ['run-1', 'add_column', null, 'bigint'],
      ['run-2', 'widen', 'bigint', 'double'],
      ['run-3', 'widen', 'double', 'text'],
    ]);
    expect(await w.existingExtraFields(registrantsDef)).toEqual({ score: 'text' });
  });

  it('widens a list column to JSON text losslessly', async () => {
    await page(w, registrants, eventScope(1), [{ id: 1, picks: [1, 2] }], { newColumns: { picks: 'bigint[]' } });
    await page(w, registrants, eventScope(1), [{ id: 2, picks: 7 }]);
    expect(await columnType('picks')).toBe('JSON');
    expect(await rows(w, `SELECT id, CAST(picks AS VARCHAR) AS picks FROM registrants ORDER BY id`)).toEqual([
      { id: '1', picks: '[1,2]' },
      { id: '2', picks: '7' },
    ]);
  });

  it('adds a declared column the table lacks even without ensureTable', async () => {
    await w.ensureTable(registrants);
    const grown = resolve({ ...registrantsDef, fields: { ...registrantsDef.fields, badge: 'text' } });
    await page(w, grown, eventScope(1), [{ id: 1, badge: 'B-1' }]);
    expect(await rows(w, `SELECT badge FROM registrants`)).toEqual([{ badge: 'B-1' }]);
  });

  it('rolls the ALTER back with a page that fails', async () => {
    await w.ensureTable(registrants);
    await expect(
      // A declared column holding what the normalizer would never produce: DuckDB rejects the page.
      page(w, registrants, eventScope(1), [{ id: 1, broken: 1, registered_at: 'not a time' }], {
        newColumns: { broken: 'bigint' },
      }),
    ).rejects.toThrow();
    expect(await columnType('broken')).toBeUndefined();
    expect(await changes()).toEqual([]);
  });
});
