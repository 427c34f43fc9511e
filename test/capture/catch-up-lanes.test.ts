/**
 * A catch-up longer than one window beside the rest of the daemon (issue 33): the catch-up runs in the bulk lane,
 * leaving a quarter of each window; webhook re-reads that arrive while it waits for the window are answered in that
 * window; at the tick it stops after its pages in flight, the tick polls the stream no webhook feeds (a change made
 * at the service meanwhile lands, the catch-up still owed) and the catch-up then goes on where it stopped, spending
 * no more credits in its slices than it did in one run.
 *
 * The pieces are the daemon's own (ReconcileLoop, the engine, the applier, one client); the ticks are played here as
 * the scheduler plays them (src/cli/scheduler.ts, src/daemon/cron-job.ts: a tick closes the running slice's lane, then its runs
 * follow). The simulator's windows run on its clock, and so does the client's: a window ends when the test advances
 * it. Nothing waits for real time: a tick comes when the slice says it waits for the window.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillByWindows, CatchUpTicks, catchUpLoop } from '../../bench/catch-up-ticks.js';
import type { ApiClient } from '../../src/api/index.js';
import { CATCH_UP_KIND } from '../../src/daemon/catch-up.js';
import { type RunningCapture, startCapture } from '../../src/sync/capture/server.js';
import { runSync } from '../../src/sync/index.js';
import { compareStream, type Harness, startHarness } from '../helpers/harness.js';
import { deliverBare, SECRET } from './helpers.js';

const WINDOW_SECONDS = 600;
const LIMIT = 100;
const STREAMS = 'registrants,transactions';
const SEED = 7;

/**
 * The simulator with a window of `limit` credits on its own clock, a warehouse backfilled, a daemon that ran and
 * died (its last heartbeat), then an outage's changes: the catch-up owes a pass and the delete sweeps.
 */
async function afterOutage(limit: number): Promise<{ h: Harness; client: ApiClient; heartbeat: Date }> {
  const h = await startHarness({
    size: 'tiny',
    seed: SEED,
    rateLimit: { credits: limit, windowSeconds: WINDOW_SECONDS, clock: 'simulated' },
  });
  const simNow = () => h.sim.now().getTime();
  const rateLimit = { limit, windowMs: WINDOW_SECONDS * 1000 };
  // The backfill goes window by window: each run stops where the window ends, the clock moves, the next resumes.
  const backfiller = h.client({ now: simNow, rateLimit, maxWaitMs: 0 });
  await backfillByWindows(h.sim, h.warehouse, backfiller, STREAMS, WINDOW_SECONDS);
  h.sim.advanceClock(60);
  const heartbeat = h.sim.now();
  h.sim.mutate(12, { streams: ['registrants', 'transactions'] });
  h.sim.advanceClock(3 * WINDOW_SECONDS); // the daemon starts on a fresh window
  return { h, client: h.client({ now: simNow, rateLimit }), heartbeat };
}

/** The ids of the changed, missing or deleted records of a stream, with the event each belongs to (-1: unknown). */
async function behind(h: Harness, stream: string): Promise<{ key: string; eventId: number }[]> {
  const diff = await compareStream(h.sim, h.warehouse, stream);
  const registrantEvent = new Map(h.sim.truth('registrants').records.map((r) => [String(r.id), Number(r.event_id)]));
  const eventOf = new Map(
    h.sim
      .truth(stream)
      .records.map((r) => [
        String(r.id),
        r.event_id != null ? Number(r.event_id) : (registrantEvent.get(String(r.registrant_id)) ?? -1),
      ]),
  );
  const keys = new Set([...diff.missing, ...diff.changed.map((c) => c.key), ...diff.extra]);
  return [...keys].map((key) => ({ key, eventId: eventOf.get(key) ?? -1 }));
}

/** Ids of the records `change` inserted, updated or deleted at the service. */
function changedBy(h: Harness, stream: string, change: () => void): Set<string> {
  const version = () => new Map(h.sim.truth(stream).records.map((r) => [String(r.id), JSON.stringify(r)]));
  const before = version();
  change();
  const after = version();
  const keys = new Set([...before.keys(), ...after.keys()]);
  return new Set([...keys].filter((k) => before.get(k) !== after.get(k)));
}

/**
 * Credits of the pages the catch-up buys in one run, as before it ran in slices: the same outage on a window it never
 * waits for. (Token calls are left out: a catch-up that lasts longer refreshes its token, sliced or not.)
 */
let alone = 0;
let h: Harness;
let client: ApiClient;
let heartbeat: Date;
let capture: RunningCapture;
const log: string[] = [];

beforeAll(async () => {
  const reference = await afterOutage(1_000_000);
  try {
    const loop = catchUpLoop(reference.h.sim, reference.h.warehouse, STREAMS);
    await loop.start(reference.heartbeat);
    const result = await runSync(reference.client, reference.h.warehouse, { mode: 'incremental', ...loop.plan() });
    expect(result.status).toBe('done');
    alone = result.credits.list;
  } finally {
    await reference.h.close();
  }
  ({ h, client, heartbeat } = await afterOutage(LIMIT));
  capture = await startCapture({
    warehouse: h.warehouse,
    client,
    secret: SECRET,
    streams: ['registrants'],
    listen: '127.0.0.1:0',
    log: (level, message) => log.push(`${level} ${message}`),
  });
});

afterAll(async () => {
  await capture?.close();
  await h?.close();
});

/** Deliveries naming the record only: each event's batch needs a re-read (a list call, 10 credits). */
const deliver = (records: readonly Record<string, unknown>[]) => deliverBare(capture.url, records);

async function rereadsApplied(): Promise<number> {
  const { rows } = await h.warehouse.query(
    `SELECT count(*) AS n FROM _evsync.deliveries WHERE status = 'applied' AND outcome = 'reread'`,
  );
  return Number(rows[0]?.n);
}

describe('a catch-up longer than one window', () => {
  it('leaves re-reads their share, yields to the tick, and spends no more than in one run', async () => {
    const loop = catchUpLoop(h.sim, h.warehouse, STREAMS, log);
    loop.attach(capture);
    await loop.start(heartbeat);
    const ticks = new CatchUpTicks(h.sim, h.warehouse, client, loop, WINDOW_SECONDS);
    const live = (await h.warehouse.current.events()).filter((e) => e.status === 'live').map((e) => e.id);
    expect(live.length).toBeGreaterThan(0);

    // Tick 1: the catch-up's first slice, until it waits for the share of the window it leaves.
    const first = loop.tick();
    expect(first).toHaveLength(1);
    let sliceStillWaiting = false;
    let meanwhile = new Set<string>();
    let rereads = 0;
    const slice1 = await ticks.run(first[0]!, async () => {
      // While it waits, a polled stream changes at the service, and deliveries arrive that need re-reads.
      meanwhile = changedBy(h, 'transactions', () => h.sim.mutate(20, { streams: ['transactions'] }));
      const registrants = h.sim.truth('registrants').records.filter((r) => live.includes(Number(r.event_id)));
      const before = capture.metrics.credits.get({ by: 'capture' });
      await deliver(registrants.slice(0, 3));
      await capture.applier.idle();
      rereads = capture.metrics.credits.get({ by: 'capture' }) - before;
      // Answered in this window: the clock has not moved, and the slice is still waiting.
      expect(await rereadsApplied()).toBe(3);
      sliceStillWaiting = ticks.results.length === 0;
    });
    expect(sliceStillWaiting).toBe(true);
    expect(ticks.waits[0]).toMatchObject({ reason: 'share', lane: { name: 'the catch-up', leave: 25, limit: LIMIT } });
    expect(capture.applier.waitState().waiting).toBe(false);
    expect(log.filter((l) => l.includes('deliveries wait for credits'))).toEqual([]);
    expect(slice1).toMatchObject({ status: 'partial', reason: 'the catch-up stopped: the tick is due' });
    expect(loop.pending).toBe(true);
    expect(log).toContainEqual(
      expect.stringMatching(/^info catch-up not complete \(partial\): it stopped for the tick/),
    );

    // Tick 2: the polled stream first, with a fresh signpost: its change lands while the catch-up is still owed.
    const [tick, slice] = loop.tick();
    expect(tick).toMatchObject({ streams: 'transactions' });
    expect(tick).not.toHaveProperty('lane');
    expect(slice).toMatchObject({ runKind: CATCH_UP_KIND });
    const liveBefore = (await behind(h, 'transactions')).filter((b) => live.includes(b.eventId));
    expect(liveBefore.length).toBeGreaterThan(0);
    expect((await ticks.run(tick!)).status).toBe('done');
    expect((await behind(h, 'transactions')).filter((b) => live.includes(b.eventId))).toEqual([]);
    expect(loop.pending).toBe(true);

    // Then the catch-up goes on where it stopped (resumed across the tick's run), tick after tick, until done.
    const resumed = await ticks.run(slice!);
    expect(resumed.resumed).toBe(slice1.runId);
    await ticks.untilCaughtUp();
    expect(ticks.waits.length).toBeGreaterThan(1); // it spanned several windows
    // Exact, but for what changed after the catch-up began in events no tick polls (past ones: once a day).
    expect(await compareStream(h.sim, h.warehouse, 'registrants')).toEqual({ missing: [], extra: [], changed: [] });
    const left = await behind(h, 'transactions');
    expect(left.filter((b) => !meanwhile.has(b.key) || live.includes(b.eventId))).toEqual([]);
    // What the catch-up spent in its slices, against one run of it; the ticks' runs are the cadence's price.
    // (The re-reads went through the same client during the first slice: counted apart, by the applier.)
    const { slices } = ticks.credits();
    expect(slices - rereads).toBeLessThanOrEqual(alone);
  });
});
