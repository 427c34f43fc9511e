import { describe, expect, it } from 'vitest';
import type { Warehouse } from '../../src/warehouse/index.js';
import { accountScope, eventScope, events, page, registrants, rows, tempWarehouseEach } from './helpers.js';

let w: Warehouse;
tempWarehouseEach((t) => {
  w = t.w;
});

const reg = (id: number) => ({ id, email: `r${id}@example.com`, updated_at: '2024-01-01 00:00:00' });

describe('markMissing', () => {
  it('marks rows of the scope that a complete walk did not see, and only those', async () => {
    await page(w, registrants, eventScope(7), [reg(1), reg(2), reg(3)]);
    await page(w, registrants, eventScope(8), [reg(10)]);
    // A snapshot of event 7 sees 1 and 3 over two pages.
    await page(w, registrants, eventScope(7), [reg(1)], { seen: { walkId: 'snap-1', ids: [1] } });
    await page(w, registrants, eventScope(7), [reg(3)], { seen: { walkId: 'snap-1', ids: [3] } });
    const r = await w.markMissing({
      stream: registrants,
      scope: eventScope(7),
      walkId: 'snap-1',
      runId: 'run-2',
      at: '2024-02-01 12:00:00',
    });
    expect(r).toEqual({ deleted: 1, restored: 0 });
    expect(await rows(w, `SELECT id, event_id, _deleted_at, _run_id FROM registrants ORDER BY id`)).toEqual([
      { id: '1', event_id: '7', _deleted_at: null, _run_id: 'run-1' },
      { id: '2', event_id: '7', _deleted_at: '2024-02-01 12:00:00', _run_id: 'run-2' },
      { id: '3', event_id: '7', _deleted_at: null, _run_id: 'run-1' },
      { id: '10', event_id: '8', _deleted_at: null, _run_id: 'run-1' },
    ]);
    // The walk's seen ids are gone; current counts leave the deleted row out.
    expect(await rows(w, `SELECT count(*) AS n FROM _evsync.seen`)).toEqual([{ n: '0' }]);
    expect(await w.tableCounts()).toEqual({ registrants: 3 });
  });

  it('keeps the first deletion time, and restores rows a later sweep sees again', async () => {
    await page(w, registrants, eventScope(7), [reg(1), reg(2)]);
    const sweep = async (walkId: string, ids: number[], at: string) => {
      await page(w, registrants, eventScope(7), [], { upsert: false, seen: { walkId, ids } });
      return w.markMissing({ stream: registrants, scope: eventScope(7), walkId, runId: walkId, at });
    };
    expect(await sweep('s1', [1], '2024-02-01 00:00:00')).toEqual({ deleted: 1, restored: 0 });
    expect(await sweep('s2', [1], '2024-03-01 00:00:00')).toEqual({ deleted: 0, restored: 0 });
    expect(await rows(w, `SELECT _deleted_at FROM registrants WHERE id = 2`)).toEqual([
      { _deleted_at: '2024-02-01 00:00:00' },
    ]);
    expect(await sweep('s3', [1, 2], '2024-04-01 00:00:00')).toEqual({ deleted: 0, restored: 1 });
    expect(await rows(w, `SELECT id FROM registrants WHERE _deleted_at IS NOT NULL`)).toEqual([]);
  });

  it('covers the whole table for account scope, and other walks keep their seen ids', async () => {
    await page(w, events, accountScope, [
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
    ]);
    await page(w, events, accountScope, [], { upsert: false, seen: { walkId: 'old', ids: [1] } });
    await page(w, events, accountScope, [], { upsert: false, seen: { walkId: 'new', ids: [2] } });
    const r = await w.markMissing({ stream: events, scope: accountScope, walkId: 'new', runId: 'r', at: '2024-01-01' });
    expect(r).toEqual({ deleted: 1, restored: 0 });
    expect(await rows(w, `SELECT walk_id, id FROM _evsync.seen`)).toEqual([{ walk_id: 'old', id: '1' }]);
    expect(await w.cursors.dropSeen('events', 'account')).toBe(1);
  });
});
