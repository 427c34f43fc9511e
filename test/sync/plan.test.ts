/**
 * `plan` prices what the run then spends: from an empty warehouse with --count (its counted pages are reused by the
 * backfill, which resumes the counting run), and after a first sync without it (priced from the page counts the last
 * walks took, spending and writing nothing).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { planSync, runSync, type SyncOptions } from '../../src/sync/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { expectEqualToSource, FULL } from '../helpers/reliability.js';

const CORE: SyncOptions = { mode: 'backfill', streams: 'core', lagSeconds: 0 };
/** `small` takes ~1 min per case on two cores: the fuller run uses it; `bench/plan-accuracy.ts` measures medium too. */
const SIZE = FULL ? 'small' : 'tiny';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function within10(planned: number, spent: number): void {
  expect(Math.abs(planned - spent), `planned ${planned}, spent ${spent}`).toBeLessThanOrEqual(spent * 0.1);
}

describe(`plan prices what the backfill then spends (${SIZE})`, () => {
  it('from an empty warehouse with --count; the backfill resumes the counted pages', async () => {
    h = await startHarness({ size: SIZE, seed: 3 });
    const client = h.client();
    const report = await planSync(client, h.warehouse, { ...CORE, count: true });
    expect(report.complete).toBe(true);
    expect(report.events).toBe(h.sim.truth('events').records.length);
    const counting = h.sim.counters().listCalls;
    expect(report.spentCredits).toBe(counting * 10 + h.sim.counters().tokenCalls);

    const backfill = await runSync(h.client(), h.warehouse, CORE);
    expect(backfill.status).toBe('done');
    expect(backfill.resumed).toBe(report.countRunId);
    within10(report.totalCredits, backfill.credits.list);
    // Counting and backfill together bought each page once: what a backfill alone costs (its lower bound).
    const alone = await startHarness({ size: SIZE, seed: 3 });
    try {
      const reference = await runSync(alone.client(), alone.warehouse, CORE);
      expect(h.sim.counters().listCalls).toBe(reference.credits.list / 10);
    } finally {
      await alone.close();
    }
    await expectEqualToSource(h.sim, h.warehouse, ['registrants', 'sessions', 'transactions']);
  });

  it('after a first backfill, without --count: nothing spent, within 10% of the next backfill', async () => {
    h = await startHarness({ size: SIZE, seed: 3 });
    await runSync(h.client(), h.warehouse, CORE);
    const before = h.sim.counters();
    const runs = (await h.warehouse.runs.recent({ limit: 10 })).length;
    const report = await planSync(h.client(), h.warehouse, CORE);
    expect(h.sim.counters().listCalls).toBe(before.listCalls);
    expect(h.sim.counters().tokenCalls).toBe(before.tokenCalls);
    expect(await h.warehouse.runs.recent({ limit: 10 })).toHaveLength(runs);
    expect(report.complete).toBe(true);
    const next = await runSync(h.client(), h.warehouse, CORE);
    within10(report.totalCredits, next.credits.list);
  });

  it('on an empty warehouse without --count, the totals are a lower bound and say so', async () => {
    h = await startHarness({ size: SIZE, seed: 3 });
    const report = await planSync(h.client(), h.warehouse, CORE);
    expect(report.complete).toBe(false);
    expect(report.warnings.join('\n')).toMatch(/lower bound/);
    expect(h.sim.counters().listCalls + h.sim.counters().tokenCalls).toBe(0);
  });
});
