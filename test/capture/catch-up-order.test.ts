/**
 * The order of a restart's catch-up (issue 33): cheapest repair first, live and upcoming events before past ones.
 * After a silence with changes no delivery reached, the catch-up's calls come in this order: the live events'
 * definitions, each webhook-fed stream's polls and then its delete checks (and the sweeps they begin), and only then
 * the live events' whole reads (line items, which have no cursor and cost more pages than every poll); every past
 * event's call after every live event's. Judged on the calls the client sent, in the order it sent them; no rate
 * limit, so nothing here depends on how fast the machine is, and events are judged against the simulator's clock.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatchUpTicks, catchUpLoop } from '../../bench/catch-up-ticks.js';
import type { ApiClient } from '../../src/api/index.js';
import { runSync } from '../../src/sync/index.js';
import { eventRank, type PlanContext } from '../../src/sync/plan.js';
import { compareStream, type Harness, startHarness } from '../helpers/harness.js';

/** Registrants are fed by webhooks, line items too (read whole: no cursor), transactions are polled. */
const STREAMS = 'registrants,registrant_line_items,transactions';

let h: Harness;
let client: ApiClient;
let heartbeat: Date;
let live: Set<number>;
const sent: string[] = [];

beforeAll(async () => {
  h = await startHarness({ size: 'small', seed: 7 });
  const now = () => h.sim.now().getTime();
  expect((await runSync(h.client({ now }), h.warehouse, { mode: 'backfill', streams: STREAMS })).status).toBe('done');
  h.sim.advanceClock(60);
  heartbeat = h.sim.now();
  h.sim.mutate(60, { streams: ['registrants'] });
  h.sim.advanceClock(120);
  const ctx = { now: h.sim.now(), pastEventDays: 30 } as PlanContext;
  live = new Set((await h.warehouse.current.events()).filter((e) => eventRank(e, ctx) === 0).map((e) => e.id));
  client = h.client({ now });
  client.on('request', (r) => sent.push(decodeURIComponent(r.path)));
});

afterAll(async () => {
  await h?.close();
});

/** The event a call is scoped to, or null for account-wide calls. */
function eventOf(path: string): number | null {
  const m = /[?&]event_id=(\d+)/.exec(path);
  return m ? Number(m[1]) : null;
}

/** Positions of the calls that match. */
function at(match: (path: string) => boolean): number[] {
  return sent.flatMap((p, i) => (match(p) ? [i] : []));
}

const isCheck = (p: string) => p.startsWith('/registrants?') && p.includes('sort=-id');
const isLineItems = (p: string) => p.startsWith('/registrant-line-items?');

describe("a restart's catch-up, cheapest repair first", () => {
  it('checks the live events right after their polls, before their whole reads, and every past event after them', async () => {
    const loop = catchUpLoop(h.sim, h.warehouse, STREAMS);
    await loop.start(heartbeat);
    const ticks = new CatchUpTicks(h.sim, h.warehouse, client, loop, 600);
    await ticks.untilCaughtUp();

    const ofLive = (p: string) => live.has(eventOf(p) ?? -1);
    const ofPast = (p: string) => eventOf(p) !== null && !live.has(eventOf(p)!);
    const liveChecks = at((p) => isCheck(p) && ofLive(p));
    const liveLineItems = at((p) => isLineItems(p) && ofLive(p));
    const liveRegistrantPolls = at((p) => p.startsWith('/registrants?') && !isCheck(p) && ofLive(p));
    const past = at(ofPast);
    expect(live.size).toBeGreaterThan(0);
    expect(liveChecks.length).toBe(live.size);
    expect(liveLineItems.length).toBeGreaterThan(0);
    expect(past.length).toBeGreaterThan(0);
    // Each live event's registrants: polled, then checked, before any line item is read whole.
    expect(Math.max(...liveRegistrantPolls.filter((i) => i < liveChecks[0]!))).toBeLessThan(liveChecks[0]!);
    expect(Math.max(...liveChecks)).toBeLessThan(Math.min(...liveLineItems));
    // Every past event's call (its definitions included) after every live event's.
    expect(Math.min(...past)).toBeGreaterThan(Math.max(...at(ofLive)));
    for (const stream of STREAMS.split(','))
      expect(await compareStream(h.sim, h.warehouse, stream)).toEqual({ missing: [], extra: [], changed: [] });
  });
});
