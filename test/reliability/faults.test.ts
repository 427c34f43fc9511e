/**
 * Fault matrix: each fault alone, on a sync of a few core streams (every core stream in the full form). The sync
 * must end exactly equal to the source, and the requests it made must stay within the client's retry bounds:
 * at most `attempts` charged tries per page loaded, at most max(10, 2 * attempts) 429s per page.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { STREAM_SETS } from '../../connectors/index.js';
import type { ClientOptions } from '../../src/api/index.js';
import type { SimulatorOptions } from '../../src/simulator/index.js';
import { runSync, type SyncResult } from '../../src/sync/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { expectEqualToSource, FULL } from '../helpers/reliability.js';

const STREAMS: readonly string[] = FULL ? STREAM_SETS.core : ['registrants', 'sessions', 'contacts', 'transactions'];
const SEEDS = FULL ? [7, 8, 9] : [7];
const ATTEMPTS = 6;
const RETRY = { attempts: ATTEMPTS, baseDelayMs: 5, maxDelayMs: 50 };

interface FaultCase {
  name: string;
  sim: SimulatorOptions;
  client?: Partial<ClientOptions>;
  /** Move the server's clock forward by `seconds` after every `everyPages`-th loaded page: time by count, not by wall. */
  clockStep?: { everyPages: number; seconds: number };
  /** The fault was met at least once (else the case proves nothing). */
  hit: (x: { listCalls: number; pages: number; tokenCalls: number; rejected429: number; retries: number }) => boolean;
}

const CASES: FaultCase[] = [
  { name: '5xx bursts', sim: { faults: { errorRate: 0.25 } }, hit: (x) => x.listCalls > x.pages },
  { name: 'connection resets mid-body', sim: { faults: { resetRate: 0.25 } }, hit: (x) => x.listCalls > x.pages },
  { name: 'malformed JSON bodies', sim: { faults: { malformedRate: 0.25 } }, hit: (x) => x.listCalls > x.pages },
  // The token's lifetime passes on the server's clock, moved by a count of pages: the client refreshes it before or
  // at expiry however fast the machine is (a wall-clock lifetime made this case race the sync).
  {
    name: 'token expiring during the sync (server clock moves 20 s every 3 pages, lifetime 60 s)',
    sim: { tokenTtlSeconds: 60 },
    clockStep: { everyPages: 3, seconds: 20 },
    hit: (x) => x.tokenCalls > 1,
  },
  {
    name: 'token expiring early (server clock jumps past expires_at)',
    sim: { tokenTtlSeconds: 30 },
    clockStep: { everyPages: 4, seconds: 31 },
    hit: (x) => x.tokenCalls > 1,
  },
  { name: '429 storms with a reset header', sim: { faults: { storm429Rate: 0.3 } }, hit: (x) => x.rejected429 > 0 },
  {
    name: '429 storms without a reset header',
    sim: { faults: { storm429Rate: 0.3, omitResetHeader: true } },
    hit: (x) => x.rejected429 > 0,
  },
  {
    name: 'slow responses beyond the client timeout',
    sim: { faults: { slowRate: 0.2, slowMs: 1500 } },
    client: { timeouts: { headersMs: 300 } },
    hit: (x) => x.retries > 0,
  },
];

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function pagesLoaded(result: SyncResult): number {
  return Object.values(result.streams).reduce((sum, s) => sum + s.pages, 0);
}

describe.each(SEEDS)('fault matrix (seed %i)', (seed) => {
  it.each(CASES)('$name: ends equal to the source, retries within bounds', async (c) => {
    h = await startHarness({ seed, ...c.sim });
    const harness = h;
    const client = h.client({ retry: RETRY, ...c.client });
    let page = 0;
    const started = Date.now();
    const result = await runSync(client, h.warehouse, {
      mode: 'backfill',
      streams: STREAMS.join(','),
      lagSeconds: 0,
      onProgress: (e) => {
        if (e.type !== 'page') return;
        page += 1;
        if (c.clockStep && page % c.clockStep.everyPages === 0) harness.sim.advanceClock(c.clockStep.seconds);
      },
    });
    const wallMs = Date.now() - started;
    expect(result.errors).toEqual([]);
    expect(result.status).toBe('done');

    const counters = h.sim.counters();
    const pages = pagesLoaded(result);
    const retries = client.stats().retries;
    expect(c.hit({ ...counters, pages, retries })).toBe(true);
    expect(counters.listCalls).toBeGreaterThanOrEqual(pages);
    expect(counters.listCalls).toBeLessThanOrEqual(pages * ATTEMPTS);
    expect(counters.rejected429).toBeLessThanOrEqual(pages * Math.max(10, 2 * ATTEMPTS));
    expect(retries).toBeLessThanOrEqual(pages * (ATTEMPTS - 1) + counters.tokenCalls);
    // One token per half lifetime at most (the refresh margin is capped at half the lifetime), plus two per forced
    // expiry: the 401 refresh, and one more once the client's median-of-Date-headers clock catches up with the jump
    // (the token's lifetime was measured on the lagging clock, so it then looks due; reported as a minor finding).
    const ttlMs = (c.sim.tokenTtlSeconds ?? 1800) * 1000;
    const jumps = c.clockStep ? Math.floor(page / c.clockStep.everyPages) : 0;
    expect(counters.tokenCalls).toBeLessThanOrEqual(2 + Math.ceil(wallMs / (ttlMs / 2)) + 2 * jumps);

    h.sim.setFaults({});
    await expectEqualToSource(h.sim, h.warehouse, STREAMS);
  });
});

describe('a fault that never stops', () => {
  it('5xx on every call: the sync fails cleanly after `attempts` tries per item, no endless loop', async () => {
    h = await startHarness({ faults: { errorRate: 1 } });
    const client = h.client({ retry: RETRY });
    const result = await runSync(client, h.warehouse, { mode: 'backfill', streams: 'contacts', lagSeconds: 0 });
    expect(result.status).toBe('failed');
    expect(result.errors.length).toBeGreaterThan(0);
    // events, contact_fields and contacts are the items: each tried at most `attempts` times.
    expect(h.sim.counters().listCalls).toBeLessThanOrEqual(3 * ATTEMPTS);
    const cursors = await h.warehouse.cursors.list();
    expect(cursors.filter((c) => c.watermark !== null)).toEqual([]);
  });
});
