/**
 * A re-read that would have to wait for the credit window (a reconciliation spent it) leaves its deliveries pending
 * instead of holding up the rest: deletes (no call needed) still land at once, and the pending ones are applied
 * once credits are there again (here: by a daemon whose client holds no credits back).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCapture } from '../../src/sync/capture/server.js';
import { type CaptureHarness, SECRET, startCaptureHarness } from './helpers.js';

let h: CaptureHarness;
beforeAll(async () => {
  // Post bodies are re-read; the applier's client keeps all but 5 credits of the window back: no re-read fits.
  h = await startCaptureHarness({
    format: 'post',
    streams: ['registrants'],
    client: { reserveCredits: 999_995 },
  });
});
afterAll(async () => {
  await h?.stop();
});

describe('re-reads without credits', () => {
  it('are deferred (left pending) while deletes land; applied once credits are back', async () => {
    for (let i = 0; i < 30; i++) {
      h.sim.mutate(1, { streams: ['registrants'] });
      h.sim.advanceClock(1);
    }
    await h.settle();
    expect(h.listCalls()).toBe(0);
    const byStatus = async () =>
      Object.fromEntries(
        (
          await h.warehouse.query(
            `SELECT status || '/' || action AS k, count(*) AS n FROM _evsync.deliveries GROUP BY 1`,
          )
        ).rows.map((r) => [String(r.k), Number(r.n)]),
      );
    const before = await byStatus();
    expect(before['pending/update']).toBeGreaterThan(0);
    expect(before['applied/delete']).toBeGreaterThan(0);
    expect(before['applied/update']).toBeUndefined();

    // The same journal, a client with the whole window: what was deferred is applied at start.
    await h.capture.close();
    h.capture = await startCapture({
      warehouse: h.warehouse,
      client: h.client(),
      secret: SECRET,
      streams: ['registrants'],
      listen: '127.0.0.1:0',
    });
    await h.capture.applier.idle();
    const after = await byStatus();
    expect(Object.keys(after).filter((k) => k.startsWith('pending'))).toEqual([]);
    expect(h.listCalls()).toBe(h.capture.applier.calls);
    expect(await h.differences()).toEqual({});
  });
});
