/**
 * The state the status document leads with (issue 33): "all fresh" only when it is true. A stream is stale when its
 * newest data is older than its cadence (the daemon's schedule, or the last daemon's, recorded in the warehouse)
 * plus a grace, and says by how much; waiting for the window (until when, who) and deliveries waiting for credits
 * come before staleness, failing before all; with no schedule known, freshness is not judged, and says so. Times
 * are given, never read from the machine.
 */
import { describe, expect, it } from 'vitest';
import { parseCadence, recordCadence } from '../../src/cli/status/cadence.js';
import { collectStatus } from '../../src/cli/status/document.js';
import { type Cadence, STALE_GRACE_SECONDS, statusState } from '../../src/cli/status-page/state.js';
import type { StreamRow } from '../../src/cli/status-page/streams.js';
import type { Warehouse } from '../../src/warehouse/index.js';
import { cursor, tempWarehouseEach } from '../warehouse/helpers.js';

const NOW = Date.parse('2031-05-06T12:00:00Z');

function row(stream: string, freshnessSeconds: number | null, over: Partial<StreamRow> = {}): StreamRow {
  return {
    stream,
    rows: 10,
    fed: 'polled',
    health: 'ok',
    reason: null,
    newestChangeAt: null,
    freshnessSeconds,
    lastPollAt: null,
    lastDeliveryAt: null,
    lagP50Seconds: null,
    lagP95Seconds: null,
    lagSamples: 0,
    rejected: 0,
    ...over,
  };
}

const cadence: Cadence = {
  pollSeconds: 300,
  reconcileSeconds: 21_600,
  polled: ['packages', 'transactions'],
  reconciled: ['registrants'],
  source: 'evsync serve (PID 1)',
  running: true,
};

describe('statusState', () => {
  it('says all fresh only when every judged stream is within its cadence and nothing waits or fails', () => {
    const streams = [row('packages', 300 + STALE_GRACE_SECONDS), row('registrants', 7200, { fed: 'webhook' })];
    expect(statusState({ streams, waiting: null, deliveriesWaiting: null, cadence })).toMatchObject({
      level: 'fresh',
      summary: 'all fresh: 2 streams within their cadence',
      stale: [],
    });
  });

  it('names the stale streams, stalest first, with how far past their cadence; polled and reconciled apart', () => {
    const streams = [
      row('packages', 300 + STALE_GRACE_SECONDS + 1),
      row('transactions', 1500),
      row('registrants', 30_000, { fed: 'webhook' }),
      // Not in the daemon's selection: not judged.
      row('tracks', 999_999),
    ];
    const s = statusState({ streams, waiting: null, deliveriesWaiting: null, cadence });
    expect(s.level).toBe('stale');
    expect(s.stale).toEqual([
      { stream: 'registrants', freshnessSeconds: 30_000, cadenceSeconds: 21_600, behindSeconds: 8400 },
      { stream: 'transactions', freshnessSeconds: 1500, cadenceSeconds: 300, behindSeconds: 1200 },
      { stream: 'packages', freshnessSeconds: 421, cadenceSeconds: 300, behindSeconds: 121 },
    ]);
    expect(s.summary).toBe(
      '3 streams stale (registrants 8 h 20 min old, cadence 6 h 00 min; transactions 25 min old, cadence 5 min; packages 7 min old, cadence 5 min)',
    );
  });

  it('puts failing first, then the wait for the window (until when, who) and the deliveries waiting, then staleness', () => {
    const streams = [row('packages', 1500), row('transactions', 10, { health: 'failing' })];
    const waiting = {
      who: 'evsync serve (PID 1), its catch-up',
      until: '2031-05-06T12:06:24.000Z',
      inSeconds: 384,
      reason: 'window' as const,
      since: '2031-05-06T11:58:00.000Z',
    };
    const deliveriesWaiting = { pending: 37, oldestSeconds: 384, until: waiting.until };
    const s = statusState({ streams, waiting, deliveriesWaiting, cadence });
    expect(s.level).toBe('failing');
    expect(s.summary).toBe(
      '1 failing (transactions); waiting for the window until 12:06 UTC (in 6 min): evsync serve (PID 1), its catch-up; ' +
        '37 webhook deliveries wait for credits to re-read their records, the oldest for 6 min; ' +
        '1 stream stale (packages 25 min old, cadence 5 min)',
    );
    const healthy = statusState({ streams: [row('packages', 1500)], waiting, deliveriesWaiting: null, cadence });
    expect(healthy.level).toBe('waiting');
    expect(healthy.summary).toMatch(/^waiting for the window until 12:06 UTC/);
  });

  it('does not judge freshness without a known schedule, and says so', () => {
    const s = statusState({ streams: [row('packages', 4000)], waiting: null, deliveriesWaiting: null, cadence: null });
    expect(s).toMatchObject({ level: 'unjudged', stale: [] });
    expect(s.summary).toBe(
      'freshness not judged: no daemon ran here, so no schedule is known (the stalest data is 1 h 06 min old)',
    );
  });
});

describe('the status document judged against the last daemon’s cadence', () => {
  let w: Warehouse;
  tempWarehouseEach((t) => {
    w = t.w;
  });

  it('reads the cadence the daemon recorded: stale once its streams are older than it, and says nothing polls now', async () => {
    await w.cursors.save(
      cursor('packages', 'account', { watermark: '2031-05-06 11:50:00', updatedAt: '2031-05-06 11:50:05' }),
    );
    await recordCadence(w, {
      command: 'evsync schedule',
      startedAt: '2031-05-06T08:00:00.000Z',
      pollSeconds: 900,
      reconcileSeconds: null,
      polled: ['packages'],
      reconciled: [],
    });
    const fresh = await collectStatus(w, { db: 'w.duckdb', runs: 5, nowMs: NOW });
    expect(fresh.state).toMatchObject({ level: 'fresh', cadence: { running: false, pollSeconds: 900 } });
    expect(fresh.state?.summary).toBe(
      'all fresh: 1 stream within their cadence (the last evsync schedule started 2031-05-06 08:00 UTC is not running: nothing polls now)',
    );
    const later = await collectStatus(w, { db: 'w.duckdb', runs: 5, nowMs: NOW + 3_600_000 });
    expect(later.state?.stale).toEqual([
      { stream: 'packages', freshnessSeconds: 4200, cadenceSeconds: 900, behindSeconds: 3300 },
    ]);
  });

  it('reads a damaged record as no cadence at all, or keeps what is sound', () => {
    expect(parseCadence('not json')).toBeNull();
    expect(parseCadence('{"pollSeconds":-3,"polled":["a",1]}')).toMatchObject({ pollSeconds: null, polled: ['a'] });
  });
});
