/**
 * Saying what waits (issue 23, item 8): while deliveries wait for credits, a log line says how many and when the
 * window resets, `/healthz` answers 200 and says the applier is waiting, its metrics text (what serve's admin address serves as `/metrics`) gives the pending deliveries,
 * the oldest one's age and the credits left; once the window resets, a log line says they resumed and all of it
 * clears. The simulator's small window (50 credits) runs on its own clock: the test ends it with `advanceClock`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/api/index.js';
import { creditMetricsText } from '../../src/cli/status-page/credit-metrics.js';
import { liveReading } from '../../src/cli/status-page/sections.js';
import { captureMetricsText, type RunningCapture, startCapture } from '../../src/sync/capture/server.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { deliverBare, SECRET } from './helpers.js';

const WINDOW_SECONDS = 600;
let h: Harness;
let client: ApiClient;
let capture: RunningCapture;
const logs: string[] = [];
/** Resolves the first log line matching each pattern registered, once it is logged. */
const awaited: { pattern: RegExp; resolve: (line: string) => void }[] = [];

function logged(pattern: RegExp): Promise<string> {
  const seen = logs.find((l) => pattern.test(l));
  if (seen) return Promise.resolve(seen);
  return new Promise((resolve) => awaited.push({ pattern, resolve }));
}

beforeAll(async () => {
  h = await startHarness({
    seed: 7,
    rateLimit: { credits: 50, windowSeconds: WINDOW_SECONDS, clock: 'simulated' },
  });
  client = h.client();
  capture = await startCapture({
    warehouse: h.warehouse,
    client,
    secret: SECRET,
    streams: ['registrants'],
    listen: '127.0.0.1:0',
    // Started once the deliveries are journaled, so that one batch weighs all three.
    applyNow: false,
    log: (level, message) => {
      const line = `${level} ${message}`;
      logs.push(line);
      for (const a of awaited.filter((w) => w.pattern.test(line))) {
        awaited.splice(awaited.indexOf(a), 1);
        a.resolve(line);
      }
    },
  });
});

afterAll(async () => {
  await capture?.close();
  await h?.close();
});

/** Deliveries naming the record only: each must be re-read (a list call, 10 credits). */
const deliver = (records: readonly Record<string, unknown>[]) => deliverBare(capture.url, records);

async function health(): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${capture.origin}/healthz`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function gauges(): Promise<Record<string, number>> {
  // The text the admin address serves as /metrics (serve puts it there, apart from the receiver): capture's, and the
  // credit window as the service last reported it to the client.
  const text =
    (await captureMetricsText(capture, h.warehouse)) +
    creditMetricsText(liveReading(client.ledger.reading(), 'test'), null);
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^(evsync_(?:deliveries_\w+|credits_remaining)) (\S+)$/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

describe('deliveries waiting for credits', () => {
  it('are said to wait (log, /healthz, /metrics, waitState) and to resume once the window resets', async () => {
    // A reconciliation spent the window: the token call (1 credit) and four list calls leave 9, short of a re-read.
    for (let i = 0; i < 4; i++) await client.list('/events', { perPage: 1 });
    expect(client.ledger.snapshot().remaining).toBe(9);
    const spent = h.sim.counters().listCalls;

    const event = h.sim.truth('registrants').records[0]!.event_id;
    const three = h.sim
      .truth('registrants')
      .records.filter((r) => r.event_id === event)
      .slice(0, 3);
    await deliver(three);
    capture.applier.start();
    const waits = await logged(/deliveries wait for credits/);
    await capture.applier.idle();
    expect(waits).toMatch(
      /^info deliveries wait for credits: 3 pending \(their re-reads do not fit the window: 9 credits left\); the window resets in \d+ s \(\d\d:\d\d:\d\d UTC\)$/,
    );
    const resetsIn = Number(/resets in (\d+) s/.exec(waits)![1]);
    expect(resetsIn).toBeGreaterThan(0);
    expect(resetsIn).toBeLessThanOrEqual(WINDOW_SECONDS);
    expect(h.sim.counters().listCalls).toBe(spent);

    const state = capture.applier.waitState();
    expect(state).toMatchObject({ waiting: true, pending: 3, creditsRemaining: 9 });
    expect(state.oldestPendingSeconds).toBeGreaterThanOrEqual(0);
    expect(state.since).toBeInstanceOf(Date);

    const waiting = await health();
    expect(waiting.status).toBe(200);
    expect(waiting.body.ok).toBe(true);
    expect(waiting.body.applier).toMatch(/^waiting for credits \(3 pending, oldest \d+ s, window resets in \d+ s\)$/);

    const during = await gauges();
    expect(during).toMatchObject({
      evsync_deliveries_pending: 3,
      evsync_deliveries_waiting_for_credits: 3,
      evsync_credits_remaining: 9,
    });
    expect(during.evsync_deliveries_oldest_pending_seconds).toBeGreaterThanOrEqual(0);

    // The window ends on the service's clock; the next call through the client (as the next reconciliation run
    // makes) brings the new window's count, and what waited is re-read at once.
    h.sim.advanceClock(WINDOW_SECONDS);
    await client.get(`/events/${String(event)}`);
    expect(await logged(/deliveries resumed/)).toMatch(
      /^info deliveries resumed: credits are back after \d+ s of waiting$/,
    );
    await capture.applier.idle();

    expect(h.sim.counters().listCalls).toBe(spent + 1);
    expect(capture.applier.waitState()).toMatchObject({ waiting: false, pending: 0, oldestPendingSeconds: null });
    expect((await health()).body).toEqual({ ok: true, journal: 'ok', applier: 'ok' });
    expect(await gauges()).toMatchObject({
      evsync_deliveries_pending: 0,
      evsync_deliveries_oldest_pending_seconds: 0,
      evsync_deliveries_waiting_for_credits: 0,
      evsync_credits_remaining: 50 - 1 - 10,
    });
    const applied = await h.warehouse.query(
      `SELECT count(*) AS n FROM _evsync.deliveries WHERE status = 'applied' AND outcome = 'reread'`,
    );
    expect(Number(applied.rows[0]?.n)).toBe(3);
  });
});
