/**
 * `post` (form-encoded) deliveries: PHP's http_build_query loses types, nulls and empty lists, so their records are
 * re-read by id, one list call per stream, event and 100 ids; deletes need no call. Every call is counted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CaptureHarness, mutateEach, startCaptureHarness } from './helpers.js';

let h: CaptureHarness;
beforeAll(async () => {
  h = await startCaptureHarness({ format: 'post' });
});
afterAll(async () => {
  await h?.stop();
});

describe('post deliveries', () => {
  it('land by re-reading the changed ids, 100 per call at most, deletes for free', async () => {
    mutateEach(h.sim, 8);
    await h.settle();
    expect(await h.differences()).toEqual({});
    const r = await h.warehouse.query(
      `SELECT outcome, count(*) AS n FROM _evsync.deliveries WHERE status = 'applied' GROUP BY 1`,
    );
    const by = Object.fromEntries(r.rows.map((row) => [String(row.outcome), Number(row.n)]));
    expect(by.payload).toBeUndefined();
    expect(by.reread).toBeGreaterThan(0);
    // Every call the simulator charged is one the applier made, and no more than one per record re-read.
    expect(h.listCalls()).toBe(h.capture.applier.calls);
    expect(h.capture.applier.calls).toBeGreaterThan(0);
    expect(h.capture.applier.calls).toBeLessThanOrEqual((by.reread ?? 0) + (by.gone ?? 0));
    expect(h.sim.counters().byPath['GET /registrants']).toBeGreaterThan(0);
  });
});
