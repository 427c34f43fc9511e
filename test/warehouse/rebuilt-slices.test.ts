/**
 * A rebuild's comparison and swap cut into slices of the key's range (archive/rebuilt-tables.ts, to bound the join's
 * memory on large tables): on real DuckDB files, a live table and a rebuilt one that differ by rows added (inside
 * and outside the live keys' range), removed, changed in their values or in their stamps alone give the same
 * report and the same swapped table cut into many slices as in one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Warehouse } from '../../src/warehouse/index.js';

const COLUMNS = `id BIGINT, v VARCHAR, n INTEGER, "_synced_at" TIMESTAMP, "_run_id" VARCHAR, "_deleted_at" TIMESTAMP`;
const key = () => ['id'];
let dir: string;

/** Ids spread over a wide range (negative ones too), so that slices of the range hold few rows each. */
function ids(count: number): number[] {
  return Array.from({ length: count }, (_, i) => ((i * 7919) % 1_000_003) - 500);
}

async function table(path: string, rows: { id: number; v: string; n: number; at: string }[]): Promise<void> {
  const w = await Warehouse.open(path, { archive: false });
  try {
    await w.query(`CREATE TABLE main.items (${COLUMNS})`);
    const values = rows.map((r) => `(${r.id}, '${r.v}', ${r.n}, TIMESTAMP '${r.at}', 'run-1', NULL)`);
    for (let i = 0; i < values.length; i += 500) {
      await w.query(`INSERT INTO main.items VALUES ${values.slice(i, i + 500).join(', ')}`);
    }
  } finally {
    await w.close();
  }
}

const live = ids(3000).map((id) => ({ id, v: `v${id}`, n: id % 97, at: '2026-01-01 00:00:00' }));
// The rebuilt table: 50 rows gone, 30 with other values, 20 with another stamp alone, 40 new (20 past the range).
const rebuilt = [
  ...live
    .filter((_, i) => i % 60 !== 7)
    .map((r, i) =>
      i % 100 === 3 ? { ...r, v: `${r.v} changed` } : i % 150 === 11 ? { ...r, at: '2026-02-01 00:00:00' } : r,
    ),
  ...Array.from({ length: 20 }, (_, i) => ({ id: 2_000_000 + i, v: 'new', n: 1, at: '2026-01-01 00:00:00' })),
  ...Array.from({ length: 20 }, (_, i) => ({ id: 1_000 * i + 3, v: 'new', n: 2, at: '2026-01-01 00:00:00' })),
].filter((r, i, all) => all.findIndex((o) => o.id === r.id) === i);

async function rows(path: string): Promise<string[]> {
  const w = await Warehouse.open(path, { archive: false });
  try {
    const r = await w.query(`SELECT id, v, n, "_deleted_at" FROM main.items ORDER BY id`);
    return r.rows.map((row) => JSON.stringify(row));
  } finally {
    await w.close();
  }
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'evsync-rebuilt-slices-'));
  await table(join(dir, 'scratch.duckdb'), rebuilt);
  for (const name of ['sliced', 'whole']) await table(join(dir, `${name}.duckdb`), live);
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('the rebuild comparison in slices of the key range', () => {
  it('reports and swaps the same in many slices as in one', async () => {
    const scratch = join(dir, 'scratch.duckdb');
    const sliced = await Warehouse.open(join(dir, 'sliced.duckdb'), { archive: false });
    const whole = await Warehouse.open(join(dir, 'whole.duckdb'), { archive: false });
    try {
      const [a] = await sliced.compareRebuilt(scratch, ['items'], key, 100);
      const [b] = await whole.compareRebuilt(scratch, ['items'], key);
      const liveIds = new Set(live.map((r) => r.id));
      const rebuiltIds = new Set(rebuilt.map((r) => r.id));
      const added = rebuilt.filter((r) => !liveIds.has(r.id)).length;
      const removed = live.filter((r) => !rebuiltIds.has(r.id)).length;
      expect(added).toBeGreaterThan(30);
      expect(removed).toBe(50);
      expect(a).toMatchObject({ table: 'items', added, removed, history: null });
      // Changed: the 30 with other values and the 20 with another stamp.
      expect(a?.changed).toBe(
        rebuilt.filter((r) => live.some((l) => l.id === r.id && (l.v !== r.v || l.at !== r.at))).length,
      );
      expect(a).toEqual(b);

      expect(await sliced.replaceWithRebuilt(scratch, ['items'], key, 'rebuild-1', 100)).toEqual(['items']);
      expect(await whole.replaceWithRebuilt(scratch, ['items'], key, 'rebuild-1')).toEqual(['items']);
      const stamped = async (w: Warehouse) =>
        (await w.query(`SELECT id FROM main.items WHERE "_run_id" = 'rebuild-1' ORDER BY id`)).rows;
      expect(await stamped(sliced)).toEqual(await stamped(whole));
      expect((await stamped(sliced)).length).toBeGreaterThan(0);
    } finally {
      await sliced.close();
      await whole.close();
    }
    const expected = await rows(scratch);
    expect(await rows(join(dir, 'sliced.duckdb'))).toEqual(expected);
    expect(await rows(join(dir, 'whole.duckdb'))).toEqual(expected);
  });
});
