/**
 * The DuckDB sandbox under `evsync query`, on its own: statements run through the unchecked `query` path of a
 * sandboxed warehouse, so what refuses them here is DuckDB's configuration, not evsync's statement check.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Warehouse } from '../../src/warehouse/index.js';
import { eventScope, page, registrants } from './helpers.js';

let dir: string;
let db: string;
const hash = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'evsync-sandbox-'));
  db = join(dir, 'w.duckdb');
  const w = await Warehouse.open(db);
  await page(w, registrants, eventScope(1), [{ id: 1, email: 'a@example.com' }]);
  await w.checkpoint();
  await w.close();
  mkdirSync(join(dir, 'data'));
  writeFileSync(join(dir, 'data', 'mine.csv'), 'x\n1\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('sandboxed warehouse', () => {
  it('runs SELECTs and refuses writes, file access, extensions and settings at the DuckDB level', async () => {
    const before = hash(db);
    const w = await Warehouse.open(db, { sandbox: { allowRead: [] } });
    try {
      expect(w.readOnly).toBe(true);
      expect((await w.query('select count(*) as n from registrants')).rows).toEqual([{ n: '1' }]);
      const refused: [string, RegExp][] = [
        [`copy (select 1) to '${db}' (format csv)`, /file system operations are disabled/],
        [`copy (select 1) to '${join(dir, 'x.csv')}'`, /file system operations are disabled/],
        [`attach '${join(dir, 'o.duckdb')}' as o`, /file system operations are disabled/],
        ['install httpfs', /file system operations are disabled/],
        ['load httpfs', /disabled/],
        ['set enable_external_access = true', /locked/],
        [`set allowed_directories = ['/']`, /locked/],
        ['set threads = 1', /locked/],
        [`set temp_directory = '${dir}'`, /locked/],
        [`pragma profile_output = '${join(dir, 'p.json')}'`, /locked/],
        [`select * from read_csv('${join(dir, 'data', 'mine.csv')}')`, /file system operations are disabled/],
        ['delete from registrants', /read-only/i],
      ];
      for (const [sql, message] of refused) {
        await expect(w.query(sql), sql).rejects.toThrow(message);
      }
    } finally {
      await w.close();
    }
    expect(hash(db)).toBe(before);
    expect(existsSync(join(dir, 'x.csv'))).toBe(false);
    expect(existsSync(join(dir, 'o.duckdb'))).toBe(false);
    expect(existsSync(join(dir, 'p.json'))).toBe(false);
  });

  it('reads files under allowRead folders only', async () => {
    const w = await Warehouse.open(db, { sandbox: { allowRead: [join(dir, 'data')] } });
    try {
      const r = await w.query(`select count(*) as n from read_csv('${join(dir, 'data', 'mine.csv')}')`);
      expect(r.rows).toEqual([{ n: '1' }]);
      // `data-other` shares the text prefix `data`: the trailing slash evsync adds keeps it out.
      mkdirSync(join(dir, 'data-other'), { recursive: true });
      writeFileSync(join(dir, 'data-other', 'x.csv'), 'x\n1\n');
      await expect(w.query(`select * from read_csv('${join(dir, 'data-other', 'x.csv')}')`)).rejects.toThrow(
        /file system operations are disabled/,
      );
    } finally {
      await w.close();
    }
  });

  it('never shares an instance between a sandboxed and an open warehouse on one file', async () => {
    const open = await Warehouse.open(db, { readOnly: true });
    try {
      await expect(Warehouse.open(db, { sandbox: { allowRead: [] } })).rejects.toThrow(/without SQL sandbox/);
    } finally {
      await open.close();
    }
    const sandboxed = await Warehouse.open(db, { sandbox: { allowRead: [] } });
    try {
      await expect(Warehouse.open(db, { readOnly: true })).rejects.toThrow(/with another SQL sandbox/);
    } finally {
      await sandboxed.close();
    }
  });
});
