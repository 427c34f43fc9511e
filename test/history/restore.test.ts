/**
 * A record's history through the warehouse's own writes, on the warehouse's clock: a version, a delete (a webhook's
 * mark), the record back with the same `updated_at` (restored without a change at the service: its version starts
 * when evsync saw it, after the delete), the same page again (nothing), then a real change.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Warehouse } from '../../src/warehouse/index.js';
import { eventScope, page, reg, registrants } from '../warehouse/helpers.js';

let dir: string;
let w: Warehouse;
let nowMs = Date.parse('2024-03-01T00:00:00Z');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'evsync-history-restore-'));
  w = await Warehouse.open(join(dir, 'w.duckdb'), { now: () => nowMs });
});

afterAll(async () => {
  await w.close();
  rmSync(dir, { recursive: true, force: true });
});

async function versions() {
  await w.buildAnalyticsViews();
  const r = await w.query(
    `SELECT registration_status AS s, CAST(_valid_from AS VARCHAR) AS f, CAST(_valid_to AS VARCHAR) AS t,
            _is_deleted AS d, _observed_by AS by, _follows_previous AS fp
       FROM history.registrants WHERE id = 1 ORDER BY _valid_from`,
  );
  return r.rows.map((row) => `${row.s} ${row.f} ${row.t} ${row.d} ${row.by} ${row.fp}`);
}

it('keeps a delete and a restore as versions, in order, and nothing for a page that changes nothing', async () => {
  const scope = eventScope(7);
  await page(w, registrants, scope, [reg(1, { event_id: 7 })]);
  nowMs = Date.parse('2024-03-02T00:00:00Z');
  await w.capture.markDeleted('registrants', [{ id: 1, at: '2024-02-01 00:00:00' }], 'capture');
  nowMs = Date.parse('2024-03-03T00:00:00Z');
  await page(w, registrants, scope, [reg(1, { event_id: 7 })]);
  const restored = [
    'confirmed 2024-01-01 00:00:00 2024-02-01 00:00:00 false poll null',
    'confirmed 2024-02-01 00:00:00 2024-03-03 00:00:00 true webhook true',
    'confirmed 2024-03-03 00:00:00 null false poll false',
  ];
  expect(await versions()).toEqual(restored);

  nowMs = Date.parse('2024-03-04T00:00:00Z');
  await page(w, registrants, scope, [reg(1, { event_id: 7 })]);
  expect(await versions()).toEqual(restored);

  nowMs = Date.parse('2024-04-02T00:00:00Z');
  await page(w, registrants, scope, [
    reg(1, { event_id: 7, registration_status: 'cancelled', updated_at: '2024-04-01 00:00:00' }),
  ]);
  expect(await versions()).toEqual([
    ...restored.slice(0, 2),
    'confirmed 2024-03-03 00:00:00 2024-04-01 00:00:00 false poll false',
    'cancelled 2024-04-01 00:00:00 null false poll false',
  ]);
});
