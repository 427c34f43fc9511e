/**
 * A walk that starts on a scope holding no live row (the first backfill of an event) has nothing to mark deleted at
 * its end: it records no seen ids and settles no deletes (src/sync/walk.ts, FRESH). A walk over a scope that holds
 * rows still does both, and finds the records deleted at the service. Observed on a real warehouse against the
 * simulator: the warehouse's own markMissing and page loads are counted as they pass, nothing is replaced.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runSync } from '../../src/sync/index.js';
import type { LoadPageInput, MarkMissingInput } from '../../src/warehouse/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { expectEqualToSource } from '../helpers/reliability.js';

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/** Counts the warehouse's markMissing calls and the seen ids its page loads carry, and lets each through. */
function observe(h: Harness): { settled: MarkMissingInput[]; seenIds: () => number; walkIds: Set<string> } {
  const settled: MarkMissingInput[] = [];
  const walkIds = new Set<string>();
  let seen = 0;
  const markMissing = h.warehouse.markMissing.bind(h.warehouse);
  h.warehouse.markMissing = (input) => {
    settled.push(input);
    return markMissing(input);
  };
  const loadPage = h.warehouse.loadPage.bind(h.warehouse);
  h.warehouse.loadPage = (input: LoadPageInput) => {
    seen += input.seen?.ids.length ?? 0;
    const walkId = input.cursor?.walk?.walkId;
    if (walkId) walkIds.add(walkId);
    return loadPage(input);
  };
  return { settled, seenIds: () => seen, walkIds };
}

describe('walks over empty scopes', () => {
  it('a first backfill records no seen ids and settles no deletes; the next one over the same scopes does both', async () => {
    // `small`: an event with more registrants than a page holds, so a walk's open cursor (its id) is seen.
    h = await startHarness({ size: 'small' });
    const first = observe(h);
    const options = { mode: 'backfill', streams: 'registrants', lagSeconds: 0 } as const;
    expect((await runSync(h.client(), h.warehouse, options)).status).toBe('done');
    await expectEqualToSource(h.sim, h.warehouse, ['registrants']);
    expect(first.walkIds.size).toBeGreaterThan(0);
    expect([...first.walkIds].every((id) => id.startsWith('fresh-'))).toBe(true);
    expect(first.seenIds()).toBe(0);
    expect(first.settled.filter((s) => s.stream.name === 'registrants')).toEqual([]);

    // Records deleted at the service: the next backfill walks scopes that hold rows, so it tracks and settles.
    h.sim.mutate(40, { streams: ['registrants'] });
    h.sim.advanceClock(2);
    expect(h.sim.truth('registrants').deletedIds.length).toBeGreaterThan(0);
    const second = observe(h);
    expect((await runSync(h.client(), h.warehouse, options)).status).toBe('done');
    expect([...second.walkIds].some((id) => id.startsWith('fresh-'))).toBe(false);
    expect(second.seenIds()).toBeGreaterThan(0);
    expect(second.settled.filter((s) => s.stream.name === 'registrants').length).toBeGreaterThan(0);
    await expectEqualToSource(h.sim, h.warehouse, ['registrants']);
    const deleted = h.sim.truth('registrants').deletedIds;
    const { rows } = await h.warehouse.query(
      `SELECT count(*) AS n FROM registrants WHERE _deleted_at IS NOT NULL AND id IN (${deleted.join(',')})`,
    );
    expect(Number(rows[0]?.n)).toBe(deleted.length);
  });
});
