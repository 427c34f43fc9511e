/**
 * Every trigger object and occasion, delivered by the simulator's real webhooks to the real receiver, lands in the
 * warehouse, and the warehouse ends equal to the source without a poll. JSON deliveries of every field carry whole
 * records: applying them costs no API call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSync } from '../../src/sync/index.js';
import { CAPTURED, type CaptureHarness, mutateEach, OBJECTS, startCaptureHarness } from './helpers.js';

let h: CaptureHarness;
beforeAll(async () => {
  h = await startCaptureHarness();
});
afterAll(async () => {
  await h?.stop();
});

describe('deliveries to evsync serve', () => {
  it('lands every trigger object and occasion, with no API call', async () => {
    const since = h.sim.webhooks.changes().at(-1)?.seq ?? 0;
    // One change per simulated second: two changes of a record within one second could not be ordered by their
    // timestamps, and would be re-read (see ties.test.ts).
    mutateEach(h.sim, 30);
    await h.settle();
    const changes = h.sim.webhooks.changes(since).filter((c) => c.object !== null);
    // What the simulator's changes can be: events are only updated; streams without updated_at never are.
    const occasions = new Map<string, Set<string>>();
    for (const c of changes) occasions.set(c.object!, (occasions.get(c.object!) ?? new Set()).add(c.action));
    expect([...occasions.keys()].sort()).toEqual([...OBJECTS].sort());
    expect(occasions.get('registrant')).toEqual(new Set(['insert', 'update', 'delete']));
    expect(occasions.get('registrant_line_item')).toEqual(new Set(['insert', 'delete']));

    const delivered = h.sim.webhooks.deliveries().filter((d) => d.status === 'delivered');
    expect(delivered.length).toBeGreaterThanOrEqual(changes.length);
    expect(h.capture.metrics.deliveries.get({ outcome: 'journaled' })).toBe(delivered.length);
    expect(await h.differences()).toEqual({});
    // The measurement behind writing payloads as they are: JSON deliveries of every field carry every column a
    // list returns, for every stream fed by webhooks (the warehouse equals the source and nothing was re-read).
    for (const stream of CAPTURED) {
      expect(h.capture.metrics.applied.get({ stream, outcome: 'payload' }), stream).toBeGreaterThan(0);
      expect(h.capture.metrics.applied.get({ stream, outcome: 'reread' }), stream).toBe(0);
    }
    expect(h.listCalls()).toBe(0);
    expect(h.capture.applier.calls).toBe(0);
  });

  it('leaves nothing for a reconciliation to find', async () => {
    const before = h.sim.counters().listCalls;
    const r = await runSync(h.client(), h.warehouse, { mode: 'incremental', streams: CAPTURED.join(',') });
    expect(r.status).toBe('done');
    const written = Object.entries(r.streams).filter(([, s]) => s.inserted + s.updated > 0);
    expect(written).toEqual([]);
    // The reconciliation's own calls are the polling's usual price, not the capture's.
    expect(h.sim.counters().listCalls - before).toBeGreaterThan(0);
  });
});
