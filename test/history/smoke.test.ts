import { afterAll, beforeAll, expect, it } from 'vitest';
import { type CaptureHarness, mutateEach, startCaptureHarness } from '../capture/helpers.js';

let h: CaptureHarness;
beforeAll(async () => {
  h = await startCaptureHarness({ sim: { size: 'tiny', seed: 11 } });
  for (let i = 0; i < 3; i++) {
    h.sim.mutate(5, { streams: ['registrants'] });
    h.sim.advanceClock(1);
  }
  await h.settle();
  const rep = await h.warehouse.buildAnalyticsViews();
  console.log(rep.history, rep.warnings);
}, 120_000);
afterAll(async () => {
  await h?.stop();
});
it('smoke', async () => {
  const r = await h.warehouse.query(`SELECT count(*) n FROM _history.registrants`);
  console.log(r.rows);
  const v = await h.warehouse.query(
    `SELECT id, registration_status, updated_at, _valid_from, _valid_to, _is_deleted, _observed_by, _follows_previous FROM history.registrants WHERE id IN (SELECT id FROM _history.registrants) ORDER BY id, _valid_from LIMIT 30`,
  );
  console.table(v.rows);
  const t = await h.warehouse.query(`SELECT * FROM history.registrants_transitions LIMIT 10`);
  console.table(t.rows);
  const a = await h.warehouse.query(`SELECT count(*) n FROM history.registrants_as_of('2030-01-01')`);
  console.log(a.rows, h.sim.now());
  expect(1).toBe(1);
});
