/**
 * A warehouse a daemon publishes (`publishing`): what a run's merges and delete marks change is told to listeners
 * once committed (Warehouse.onChanged, which the daemon's publisher follows) and recorded as owed to readers in
 * `_evsync.publish_pending` in the same transaction, so a daemon killed before its publisher heard of a change, or
 * with pages staged (merged at the next open), still owes it. `mergeScope` merges one completed item's pages.
 */
import { cpSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { type Partition as PendingPartition, Warehouse } from '../../src/warehouse/index.js';
import { accountScope, eventScope, events, openTemp, page, reg, registrants, type TempWarehouse } from './helpers.js';

let t: TempWarehouse | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

/** Reads through a read-only warehouse: it never merges, so staged pages stay staged. */
async function peek(path: string, sql: string): Promise<Record<string, unknown>[]> {
  const ro = await Warehouse.open(path, { readOnly: true });
  try {
    return (await ro.query(sql)).rows;
  } finally {
    await ro.close();
  }
}

const OWED = `SELECT DISTINCT table_name, event_id FROM _evsync.publish_pending ORDER BY table_name, event_id NULLS FIRST`;
const STAGED = `SELECT stream, scope FROM _evsync.staged ORDER BY seq`;

async function told(w: Warehouse): Promise<PendingPartition[]> {
  const list: PendingPartition[] = [];
  w.onChanged((parts) => list.push(...parts));
  return list;
}

describe('a warehouse that publishes', () => {
  it('merges one completed scope on demand, tells and owes its partition only; the rest at the run end', async () => {
    t = await openTemp({ publishing: true });
    const { w, path } = t;
    const heard = await told(w);
    const runId = w.openLoad(await w.runs.start('sync', {})).runId;
    await page(w, registrants, eventScope(7), [reg(1), reg(2)], { runId });
    await page(w, registrants, eventScope(8), [reg(3)], { runId });
    await page(w, events, accountScope, [{ id: 7, name: 'E7' }], { runId });
    // Staged, not merged: nothing told, nothing owed yet.
    expect(heard).toEqual([]);
    expect(await peek(path, OWED)).toEqual([]);

    await w.mergeScope('registrants', 'event:7');
    expect(heard).toEqual([{ table: 'registrants', eventId: 7 }]);
    expect(await peek(path, OWED)).toEqual([{ table_name: 'registrants', event_id: '7' }]);
    expect(await peek(path, `SELECT id FROM registrants ORDER BY id`)).toEqual([{ id: '1' }, { id: '2' }]);
    expect(await peek(path, STAGED)).toEqual([
      { stream: 'registrants', scope: 'event:8' },
      { stream: 'events', scope: 'account' },
    ]);

    // The run's end merges the rest: counted with what the scope's merge did, told and owed.
    expect(await w.finishLoads(runId)).toEqual({
      registrants: { inserted: 3, updated: 0, unchanged: 0 },
      events: { inserted: 1, updated: 0, unchanged: 0 },
    });
    expect(heard).toEqual([
      { table: 'registrants', eventId: 7 },
      { table: 'registrants', eventId: 8 },
      { table: 'events', eventId: null },
    ]);
    expect(await peek(path, OWED)).toEqual([
      { table_name: 'events', event_id: null },
      { table_name: 'registrants', event_id: '7' },
      { table_name: 'registrants', event_id: '8' },
    ]);
  });

  it('owes and tells delete marks with the marks, and only when they changed a row', async () => {
    t = await openTemp({ publishing: true });
    const { w, path } = t;
    await page(w, registrants, eventScope(7), [reg(1), reg(2)]);
    await w.query(`DELETE FROM _evsync.publish_pending`);
    const heard = await told(w);
    const mark = (walkId: string, ids: number[]) =>
      page(w, registrants, eventScope(7), [], { upsert: false, seen: { walkId, ids } }).then(() =>
        w.markMissing({ stream: registrants, scope: eventScope(7), walkId, runId: 'r', at: '2024-06-01 00:00:00' }),
      );
    expect(await mark('all-seen', [1, 2])).toEqual({ deleted: 0, restored: 0 });
    expect(heard).toEqual([]);
    expect(await peek(path, OWED)).toEqual([]);
    expect(await mark('one-gone', [1])).toEqual({ deleted: 1, restored: 0 });
    expect(heard).toEqual([{ table: 'registrants', eventId: 7 }]);
    expect(await peek(path, OWED)).toEqual([{ table_name: 'registrants', event_id: '7' }]);
  });

  it('a killed daemon’s staged pages are owed by the next open, which merges them', async () => {
    t = await openTemp({ publishing: true });
    const { w, path, dir } = t;
    const runId = w.openLoad(await w.runs.start('sync', {})).runId;
    await page(w, registrants, eventScope(7), [reg(1)], { runId });
    await page(w, registrants, eventScope(9), [reg(2)], { runId });
    // The kill: the file (checkpointed, the staged rows are committed) and its staging folder as they are now.
    await w.checkpoint();
    const copy = `${dir}/killed.duckdb`;
    cpSync(path, copy);
    cpSync(`${path}.stage`, `${copy}.stage`, { recursive: true });
    expect(await peek(copy, OWED)).toEqual([]);
    const next = await Warehouse.open(copy, { publishing: true });
    await next.close();
    expect(await peek(copy, OWED)).toEqual([
      { table_name: 'registrants', event_id: '7' },
      { table_name: 'registrants', event_id: '9' },
    ]);
    expect(await peek(copy, `SELECT id FROM registrants ORDER BY id`)).toEqual([{ id: '1' }, { id: '2' }]);
  });

  it('one that does not publish (one-shot runs) owes nothing, and still tells its listeners', async () => {
    t = await openTemp();
    const { w, path } = t;
    const heard = await told(w);
    const runId = w.openLoad(await w.runs.start('sync', {})).runId;
    await page(w, registrants, eventScope(7), [reg(1)], { runId });
    await w.mergeScope('registrants', 'event:7');
    await w.finishLoads(runId);
    expect(heard).toEqual([{ table: 'registrants', eventId: 7 }]);
    expect(await peek(path, OWED)).toEqual([]);
  });
});
