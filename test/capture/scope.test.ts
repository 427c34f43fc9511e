/**
 * A delivery for an event outside the sync's scope (`--events`, `--event-status`, ...) is journaled and ignored: its
 * rows stay as the last sync left them, and the journal says why. Trigger objects come from the catalogue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRIGGER_OBJECTS } from '../../src/simulator/index.js';
import { capturedObjects, streamOfObject } from '../../src/sync/capture/objects.js';
import { compareStream } from '../helpers/harness.js';
import { type CaptureHarness, startCaptureHarness } from './helpers.js';

describe('trigger objects', () => {
  it('each map to one catalogue stream that declares it', () => {
    expect(
      capturedObjects()
        .map((c) => c.object)
        .sort(),
    ).toEqual([...TRIGGER_OBJECTS].sort());
    for (const object of TRIGGER_OBJECTS) expect(streamOfObject(object)?.webhook?.object).toBe(object);
    expect(streamOfObject('invoice')).toBeNull();
  });
});

let h: CaptureHarness;
let inScope: number;
beforeAll(async () => {
  h = await startCaptureHarness({ streams: ['registrants'], sim: { seed: 11 } });
  const events = [...new Set(h.sim.truth('registrants').records.map((r) => Number(r.event_id)))].sort((a, b) => a - b);
  inScope = events[0]!;
  // The same daemon, restarted with a narrower scope (the backfill covered every event).
  await h.capture.close();
  const { startCapture } = await import('../../src/sync/capture/server.js');
  const { installWebhooks } = await import('../../src/sync/capture/install.js');
  const { SECRET, setupFor } = await import('./helpers.js');
  h.capture = await startCapture({
    warehouse: h.warehouse,
    client: h.client(),
    secret: SECRET,
    streams: ['registrants'],
    filters: { events: [inScope] },
    listen: '127.0.0.1:0',
  });
  await installWebhooks(h.client(), setupFor(h.capture.url));
});
afterAll(async () => {
  await h?.stop();
});

describe('a delivery for an event outside the scope', () => {
  it('is journaled and ignored; the event in scope is kept current', async () => {
    const calls = h.sim.counters().listCalls;
    for (let i = 0; i < 40; i++) {
      h.sim.mutate(1, { streams: ['registrants'] });
      h.sim.advanceClock(1);
    }
    await h.settle();
    // JSON payloads: no call, in scope or not.
    expect(h.sim.counters().listCalls - calls).toBe(0);
    const ignored = await h.warehouse.query(
      `SELECT DISTINCT event_id, reason FROM _evsync.deliveries WHERE outcome = 'out-of-scope' ORDER BY 1`,
    );
    expect(ignored.rows.length).toBeGreaterThan(0);
    for (const row of ignored.rows) {
      expect(Number(row.event_id)).not.toBe(inScope);
      expect(row.reason).toBe(`event ${row.event_id} is outside the sync's scope`);
    }
    const d = await compareStream(h.sim, h.warehouse, 'registrants');
    const eventOf = new Map(h.sim.truth('registrants').records.map((r) => [String(r.id), Number(r.event_id)]));
    const stored = await h.warehouse.query(`SELECT id, event_id FROM registrants`);
    for (const r of stored.rows) eventOf.set(String(r.id), Number(r.event_id));
    const keys = [...d.missing, ...d.extra, ...d.changed.map((c) => c.key)];
    expect(keys.length).toBeGreaterThan(0);
    expect(
      keys.filter((k) => eventOf.get(k) === inScope),
      JSON.stringify(d),
    ).toEqual([]);
    const [state] = (await h.warehouse.capture.streams()).filter((s) => s.stream === 'registrants');
    expect(state!.ignored).toBe(
      Number(
        (await h.warehouse.query(`SELECT count(*) AS n FROM _evsync.deliveries WHERE status = 'ignored'`)).rows[0]!.n,
      ),
    );
  });
});
