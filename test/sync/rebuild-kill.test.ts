/**
 * A rebuild SIGKILLed midway (issue 36), in a process of its own: killed at its n-th window of ops (counted, never
 * timed), then run again, it resumes where the scratch got to and ends with every table equal to what it was
 * (every column, the system ones included), with no request to the service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSync } from '../../src/sync/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { type TablesText, tablesAsText } from '../helpers/tables-text.js';
import { runTsxChild } from '../helpers/tsx-child.js';

let h: Harness;
let before: TablesText;
const STREAMS = 'events,registrants,sessions,contacts';

beforeAll(async () => {
  h = await startHarness({ seed: 23, rateLimit: { credits: 1_000_000, windowSeconds: 600 } });
  expect((await runSync(h.client(), h.warehouse, { mode: 'backfill', streams: STREAMS })).status).toBe('done');
  h.sim.mutate(20, { streams: ['registrants', 'sessions', 'contacts'] });
  h.sim.advanceClock(120);
  const poll = await runSync(h.client(), h.warehouse, {
    mode: 'incremental',
    streams: STREAMS,
    lagSeconds: 0,
    sweepEveryHours: 0,
    snapshotEveryHours: 0,
  });
  expect(poll.status).toBe('done');
  before = await tablesAsText(h.warehouse);
  // The child takes the file: this process lets go of it.
  await h.warehouse.close();
}, 120_000);

afterAll(async () => {
  await h?.close();
});

describe('a rebuild killed midway', () => {
  it('resumes when run again and ends equal, with no request', async () => {
    const calls = JSON.stringify(h.sim.counters());
    const killed = await runTsxChild('test/sync/fixtures/rebuild-kill-child.ts', [h.dbPath, '4']);
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const again = await runTsxChild('test/sync/fixtures/rebuild-kill-child.ts', [h.dbPath, '0']);
    expect(again.code, again.stderr).toBe(0);
    const result = JSON.parse(again.stdout.trim()) as { resumed: boolean; pages: number };
    expect(result.resumed).toBe(true);
    expect(result.pages).toBeGreaterThan(0);
    const w = await Warehouse.open(h.dbPath, { readOnly: true });
    try {
      expect(await tablesAsText(w)).toEqual(before);
    } finally {
      await w.close();
    }
    expect(JSON.stringify(h.sim.counters())).toBe(calls);
  }, 120_000);
});
