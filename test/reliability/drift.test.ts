/**
 * Drift: the source changes heavily while the sync runs (inserts, updates, deletes). Whatever a backfill saw
 * half-way, the next incremental run (server clock moved on, delete sweeps on) must leave the warehouse exactly
 * equal to the source.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { STREAM_SETS } from '../../connectors/index.js';
import { runSync, type SyncOptions } from '../../src/sync/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { expectEqualToSource, FULL } from '../helpers/reliability.js';

const CORE = STREAM_SETS.core;
const SEEDS = FULL ? [7, 11, 12] : [7];

let h: Harness | undefined;
let timer: NodeJS.Timeout | undefined;
afterEach(async () => {
  if (timer) clearInterval(timer);
  timer = undefined;
  await h?.close();
  h = undefined;
});

// Past events are polled at most every pastEventPollHours by default (a credit-saving policy); the mutations reach
// them too, so every scope is polled here: what is checked is that nothing the run reads is lost to drift.
const base: Omit<SyncOptions, 'mode'> = { streams: 'core', lagSeconds: 0, pastEventPollHours: 0 };

async function catchUp(harness: Harness): Promise<void> {
  harness.sim.advanceClock(2);
  const result = await runSync(harness.client(), harness.warehouse, { ...base, mode: 'incremental', deletes: true });
  expect(result.errors).toEqual([]);
  expect(result.status).toBe('done');
}

describe.each(SEEDS)('drift (seed %i)', (seed) => {
  it('mutations on every page of the backfill: equal after the next incremental', async () => {
    h = await startHarness({ seed });
    const sim = h.sim;
    let changes = 0;
    const first = await runSync(h.client(), h.warehouse, {
      ...base,
      mode: 'backfill',
      onProgress: (e) => {
        if (e.type === 'page') {
          sim.mutate(15);
          changes += 15;
        }
      },
    });
    expect(first.status).toBe('done');
    expect(changes).toBeGreaterThan(100);
    await catchUp(h);
    await expectEqualToSource(h.sim, h.warehouse, CORE);
  });

  it('continuous background mutation during the backfill: equal after the next incremental', async () => {
    h = await startHarness({ seed });
    const sim = h.sim;
    // ~400 changes per second, as the simulator's background mutations do, but stoppable before the check.
    timer = setInterval(() => sim.mutate(8), 20);
    const first = await runSync(h.client(), h.warehouse, { ...base, mode: 'backfill' });
    clearInterval(timer);
    timer = undefined;
    expect(first.status).toBe('done');
    await catchUp(h);
    await expectEqualToSource(h.sim, h.warehouse, CORE);
  });

  it.runIf(FULL)('mutations during the incremental too: equal after one more incremental', async () => {
    h = await startHarness({ seed });
    const sim = h.sim;
    await runSync(h.client(), h.warehouse, { ...base, mode: 'backfill' });
    sim.mutate(200);
    sim.advanceClock(2);
    await runSync(h.client(), h.warehouse, {
      ...base,
      mode: 'incremental',
      deletes: true,
      onProgress: (e) => {
        if (e.type === 'page') sim.mutate(10);
      },
    });
    await catchUp(h);
    await expectEqualToSource(h.sim, h.warehouse, CORE);
  });
});
