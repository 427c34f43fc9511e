/**
 * The bounds of `readQuery` say which bound a result reached and how to change it: the caller names it (the one-shot
 * `evsync query` its --max-rows, the daemon its own bounds), so the message never points at a flag that would not
 * help.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Warehouse } from '../../src/warehouse/index.js';
import { eventScope, page, registrants } from './helpers.js';

let dir: string;
let w: Warehouse;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'evsync-bounds-'));
  const db = join(dir, 'w.duckdb');
  const writer = await Warehouse.open(db);
  await page(writer, registrants, eventScope(1), [{ id: 1, email: 'a@example.com' }]);
  await writer.close();
  w = await Warehouse.open(db, { sandbox: { allowRead: [] } });
});
afterAll(async () => {
  await w.close();
  rmSync(dir, { recursive: true, force: true });
});

const TEN_ROWS = "select range as r, repeat('x', 100) as pad from range(10)";

describe('readQuery bounds', () => {
  it('names --max-rows by default, or the bound its caller names', async () => {
    await expect(w.readQuery(TEN_ROWS, 'json', { maxRows: 5 })).rejects.toThrow(
      'the result has more than 5 rows: add a LIMIT or an aggregate, raise --max-rows, or write it with `evsync export` (Parquet) instead',
    );
    await expect(
      w.readQuery(TEN_ROWS, 'json', {
        maxRows: 5,
        maxRowsHint: 'restart the daemon with a larger --query-max-rows (serve/schedule; it allows 5 rows)',
      }),
    ).rejects.toThrow(
      'the result has more than 5 rows: add a LIMIT or an aggregate, restart the daemon with a larger --query-max-rows (serve/schedule; it allows 5 rows), or write it with `evsync export` (Parquet) instead',
    );
  });

  it('names no setting for the byte bound unless its caller does', async () => {
    const maxBytes = 1024 * 1024;
    const wide = "select repeat('x', 1000) as pad from range(2000)";
    await expect(w.readQuery(wide, 'json', { maxBytes })).rejects.toThrow(
      'the result is larger than 1 MB: add a LIMIT or an aggregate, or write it with `evsync export` (Parquet) instead',
    );
    await expect(
      w.readQuery(wide, 'json', { maxBytes, maxBytesHint: 'select fewer columns (the daemon answers 1 MB at most)' }),
    ).rejects.toThrow(
      'the result is larger than 1 MB: add a LIMIT or an aggregate, select fewer columns (the daemon answers 1 MB at most), or write it with `evsync export` (Parquet) instead',
    );
  });

  it('returns a result within its bounds whole', async () => {
    const r = await w.readQuery(TEN_ROWS, 'json', { maxRows: 10, maxBytes: 1024 * 1024 });
    expect(r.rows).toHaveLength(10);
  });
});
