/**
 * A catch-up ordered by value (issue 33, "Done when"): after an outage of some minutes with changes at the service to
 * registrants of live and of past events, deletes included, none delivered, the daemon's catch-up (driven as the
 * daemon drives it, bench/catch-up-ticks.ts, over windows of the simulator's own clock) makes the live and upcoming
 * events' webhook-fed stream exact with the first window's credits, everything exact when it ends, and costs no more
 * than one pass over the selection, a delete check per webhook-fed scope and the sweeps of the scopes that lost
 * records. Nothing here reads today's date: events are judged against the simulator's clock.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillByWindows, CatchUpTicks, catchUpLoop } from '../../bench/catch-up-ticks.js';
import { getStream } from '../../connectors/index.js';
import type { ApiClient } from '../../src/api/index.js';
import { eventRank, type PlanContext } from '../../src/sync/plan.js';
import { classifyListCalls, compareStream, type Harness, startHarness } from '../helpers/harness.js';

const WINDOW_SECONDS = 600;
/**
 * A window of 30 list calls, the catch-up's share 22: on `small` the first events' work (the events list, every
 * event's definitions, the first events' polls and checks and the live event's sweep: 21 calls) fits the first
 * window; the past events' polls, checks and sweeps do not.
 */
const LIMIT = 300;
const STREAMS = 'registrants,transactions';
/** Registrants are fed by webhooks; transactions are polled. */
const FED = 'registrants';
/** The largest page of the fed stream (a sweep's and a poll's). */
const PAGE = getStream(FED).maxPerPage;

let h: Harness;
let client: ApiClient;
let heartbeat: Date;
/** Events whose work comes first: live and upcoming (eventRank 0) against the simulator's clock. */
let first: Set<number>;
/** Registrant ids the outage changed, by event (the events that lost records apart). */
const changedIn = new Map<number, number>();
const losing = new Set<number>();

/** The event of each registrant, at the service and in the warehouse (a record deleted at the service is only there). */
async function registrantEvents(): Promise<Map<string, number>> {
  const { rows } = await h.warehouse.query(`SELECT id, event_id FROM registrants`);
  const of = new Map(rows.map((r) => [String(r.id), Number(r.event_id)]));
  for (const r of h.sim.truth(FED).records) of.set(String(r.id), Number(r.event_id));
  return of;
}

/** The outage's changes to registrants, until they touch first and past events, deletes in both kinds. */
async function outage(): Promise<void> {
  const before = new Map(h.sim.truth(FED).records.map((r) => [String(r.id), JSON.stringify(r)]));
  h.sim.mutate(60, { streams: [FED] });
  const after = new Map(h.sim.truth(FED).records.map((r) => [String(r.id), JSON.stringify(r)]));
  const of = await registrantEvents();
  for (const id of new Set([...before.keys(), ...after.keys()])) {
    if (before.get(id) === after.get(id)) continue;
    const event = of.get(id)!;
    changedIn.set(event, (changedIn.get(event) ?? 0) + 1);
    if (!after.has(id)) losing.add(event);
  }
}

beforeAll(async () => {
  h = await startHarness({
    size: 'small',
    seed: 7,
    rateLimit: { credits: LIMIT, windowSeconds: WINDOW_SECONDS, clock: 'simulated' },
  });
  const now = () => h.sim.now().getTime();
  const rateLimit = { limit: LIMIT, windowMs: WINDOW_SECONDS * 1000 };
  await backfillByWindows(h.sim, h.warehouse, h.client({ now, rateLimit, maxWaitMs: 0 }), STREAMS, WINDOW_SECONDS);
  h.sim.advanceClock(60);
  heartbeat = h.sim.now();
  await outage();
  // Ten minutes of silence: the daemon comes back on a fresh window.
  h.sim.advanceClock(WINDOW_SECONDS);
  const ctx = { now: h.sim.now(), pastEventDays: 30 } as PlanContext;
  first = new Set((await h.warehouse.current.events()).filter((e) => eventRank(e, ctx) === 0).map((e) => e.id));
  client = h.client({ now, rateLimit });
});

afterAll(async () => {
  await h?.close();
});

/** Registrant ids of `events` that differ from the service (missing, deleted there, or changed). */
async function behindIn(events: ReadonlySet<number>): Promise<string[]> {
  const diff = await compareStream(h.sim, h.warehouse, FED);
  const of = await registrantEvents();
  const keys = [...diff.missing, ...diff.extra, ...diff.changed.map((c) => c.key)];
  return [...new Set(keys)].filter((k) => events.has(of.get(k)!));
}

/** One pass, the checks and the owed sweeps, in list calls: what the catch-up may spend at most. */
async function bound(): Promise<{ pass: number; checks: number; sweeps: number }> {
  const { rows } = await h.warehouse.query(`SELECT stream, scope FROM _evsync.cursors WHERE scope NOT LIKE '%/sweep'`);
  const eventOfScope = (scope: string) => Number(/^event:(\d+)$/.exec(scope)?.[1] ?? Number.NaN);
  // One call per (stream, scope), more where what changed fills more than a page.
  const pass = rows.reduce((n, r) => {
    const changed = r.stream === FED ? (changedIn.get(eventOfScope(String(r.scope))) ?? 0) : 0;
    return n + Math.max(1, Math.ceil(changed / PAGE));
  }, 0);
  const scopes = rows.filter((r) => r.stream === FED).length;
  const size = (event: number) => h.sim.truth(FED).records.filter((r) => Number(r.event_id) === event).length;
  // A keyset sweep reads ceil(n / page) pages, one more when the last is full.
  const sweeps = [...losing].reduce((n, e) => n + Math.floor(size(e) / PAGE) + 1, 0);
  return { pass, checks: scopes, sweeps };
}

describe('a catch-up ordered by value, after an outage', () => {
  it('makes live and upcoming events exact in the first window, all exact at the end, within one pass and the owed sweeps', async () => {
    // The outage touched both kinds of events, deletes in both.
    const past = [...changedIn.keys()].filter((e) => !first.has(e));
    expect(past.length).toBeGreaterThan(0);
    expect([...changedIn.keys()].some((e) => first.has(e))).toBe(true);
    expect([...losing].some((e) => first.has(e))).toBe(true);
    expect([...losing].some((e) => !first.has(e))).toBe(true);
    expect((await behindIn(first)).length).toBeGreaterThan(0);

    const sent: string[] = [];
    client.on('request', (r) => sent.push(r.path));
    const loop = catchUpLoop(h.sim, h.warehouse, STREAMS);
    await loop.start(heartbeat);
    const ticks = new CatchUpTicks(h.sim, h.warehouse, client, loop, WINDOW_SECONDS);
    let atFirstWindow: { behind: string[]; pending: boolean; pastBehind: number } | null = null;
    await ticks.untilCaughtUp(async (wait) => {
      if (atFirstWindow) return;
      expect(wait).toMatchObject({ reason: 'share', lane: { name: 'the catch-up', limit: LIMIT } });
      const allEvents = new Set([...changedIn.keys(), ...first]);
      atFirstWindow = {
        behind: await behindIn(first),
        pending: loop.pending,
        pastBehind: (await behindIn(new Set([...allEvents].filter((e) => !first.has(e))))).length,
      };
    });

    // Once the first window's credits are spent, the catch-up still owed (past events still behind).
    expect(atFirstWindow).toMatchObject({ behind: [], pending: true });
    expect(ticks.waits.length).toBeGreaterThan(0);
    // Everything exact when it ends.
    for (const stream of STREAMS.split(','))
      expect(await compareStream(h.sim, h.warehouse, stream)).toEqual({ missing: [], extra: [], changed: [] });
    // What it spent: one pass, a check per webhook-fed scope, sweeps only of the scopes that lost records.
    const owed = await bound();
    const calls = classifyListCalls(sent, `/${FED}`);
    expect(calls.checks.length).toBe(owed.checks);
    const eventOf = (path: string) => Number(/event_id=(\d+)/.exec(path)?.[1]);
    expect(new Set(calls.sweeps.map(eventOf))).toEqual(losing);
    const { slices } = ticks.credits();
    expect(slices).toBeLessThanOrEqual(10 * (owed.pass + owed.checks + owed.sweeps));
  });
});
