/**
 * Delete checks (src/sync/delete-check.ts): what the daemon's catch-up owes a webhook-fed scope after a silence.
 * One call per scope (`sort=-id`, `fields=id`) says whether the scope lost records the warehouse holds live; only a
 * scope that did is swept. Observed against the simulator: every call is classified as it is sent, and the
 * warehouse ends equal to the source, deletes included.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { deleteCheckVerdict } from '../../src/sync/delete-check.js';
import { runSync } from '../../src/sync/index.js';
import { classifyListCalls as classify, type Harness, startHarness } from '../helpers/harness.js';
import { expectEqualToSource } from '../helpers/reliability.js';

let h: Harness;
afterEach(async () => {
  await h?.close();
});

function eventOf(path: string): number {
  return Number(/event_id=(\d+)/.exec(path)?.[1]);
}

describe('the delete check rule', () => {
  const stored = (live: number, ids: number[]) => ({ live, liveAmong: new Set(ids) });

  it('passes when the count adds up and the page reaches a live row', () => {
    // Service: 1..10 and new 11, 12; warehouse: 1..10 live. Page (newest first, 5): 12, 11, 10, 9, 8.
    const v = deleteCheckVerdict({ ids: [12, 11, 10, 9, 8], totalCount: 12, pageCount: 3 }, stored(10, [10, 9, 8]));
    expect(v).toMatchObject({ pageCoversNew: true, unknownOnPage: 2, missed: 0 });
  });

  it('finds a loss the count shows', () => {
    // Record 4 deleted at the service: 11 records, the warehouse still holds 10 live.
    const v = deleteCheckVerdict({ ids: [12, 11, 10, 9, 8], totalCount: 11, pageCount: 3 }, stored(10, [10, 9, 8]));
    expect(v.missed).toBe(1);
  });

  it('decides nothing when new records may lie past the page', () => {
    // Seven records created since: the page holds only new ids, so an eighth may lie beyond it.
    const v = deleteCheckVerdict({ ids: [17, 16, 15, 14, 13], totalCount: 17, pageCount: 4 }, stored(10, []));
    expect(v).toMatchObject({ pageCoversNew: false, missed: null });
  });

  it('an answer without a count decides nothing (the spec lets it leave totalCount out)', () => {
    const v = deleteCheckVerdict({ ids: [3, 2], totalCount: null, pageCount: 1 }, stored(2, [3, 2]));
    expect(v.missed).toBeNull();
  });

  it('a page that holds the whole scope decides on its own', () => {
    const v = deleteCheckVerdict({ ids: [3, 2], totalCount: 2, pageCount: 1 }, stored(3, [3, 2]));
    expect(v).toMatchObject({ pageCoversNew: true, missed: 1 });
  });
});

describe('delete checks against the simulator', () => {
  it('one call per scope when nothing was deleted; a sweep only of the scopes that lost records', async () => {
    // A limit far above what the test spends: it counts calls, it does not wait for windows.
    h = await startHarness({ size: 'small', rateLimit: { credits: 1_000_000, windowSeconds: 600 } });
    // Small pages, so a sweep is several calls and the check saves them.
    const overrides = { registrants: { maxPerPage: 20 } };
    const backfill = { mode: 'backfill', streams: 'registrants', lagSeconds: 0, overrides } as const;
    expect((await runSync(h.client(), h.warehouse, backfill)).status).toBe('done');
    const events = new Set(h.sim.truth('events').records.map((e) => Number(e.id)));

    const caughtUp = {
      mode: 'incremental',
      streams: 'registrants',
      lagSeconds: 0,
      overrides,
      pastEventPollHours: 0,
      deletes: 'due',
      deleteChecks: ['registrants'],
    } as const;
    const sent: string[] = [];
    // A client per run, as each run of the daemon reads the service's clock afresh (the simulator's jumps ahead).
    const watched = () => {
      const client = h.client();
      client.on('request', (r) => sent.push(r.path));
      return client;
    };
    h.sim.advanceClock(60);
    expect((await runSync(watched(), h.warehouse, caughtUp)).status).toBe('done');
    const quiet = classify(sent);
    expect(new Set(quiet.checks.map(eventOf))).toEqual(events);
    expect(quiet.checks.length).toBe(events.size);
    expect(quiet.sweeps).toEqual([]);
    // A passed check counts as a sweep: the scope's sweep cursor records it.
    const { rows } = await h.warehouse.query(
      "SELECT count(*) AS n FROM _evsync.cursors WHERE stream = 'registrants' AND scope LIKE '%/sweep' AND last_sweep_at IS NOT NULL",
    );
    expect(Number(rows[0]?.n)).toBe(events.size);

    // Records deleted at the service (no delivery reaches the warehouse): only the scopes that lost some are swept.
    const before = new Set(h.sim.truth('registrants').deletedIds);
    h.sim.mutate(60, { streams: ['registrants'] });
    h.sim.advanceClock(60);
    const lost = h.sim.truth('registrants').deletedIds.filter((id) => !before.has(id));
    expect(lost.length).toBeGreaterThan(0);
    const stored = await h.warehouse.query(`SELECT DISTINCT event_id FROM registrants WHERE id IN (${lost.join(',')})`);
    const losing = new Set(stored.rows.map((r) => Number(r.event_id)));
    sent.length = 0;
    expect((await runSync(watched(), h.warehouse, caughtUp)).status).toBe('done');
    const after = classify(sent);
    expect(after.checks.length).toBe(events.size);
    expect(new Set(after.sweeps.map(eventOf))).toEqual(losing);
    await expectEqualToSource(h.sim, h.warehouse, ['registrants']);
    const marked = await h.warehouse.query(
      `SELECT count(*) AS n FROM registrants WHERE _deleted_at IS NOT NULL AND id IN (${lost.join(',')})`,
    );
    expect(Number(marked.rows[0]?.n)).toBe(lost.length);
  });
});
