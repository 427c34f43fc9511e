/**
 * The per-stream rows of the status document, from what `_evsync` holds: health (the newest run that covered a
 * stream decides failing; a path the service refused is unavailable), freshness from the newest change applied by
 * webhook or by poll, and times the service writes in its record zone read as such.
 */
import { describe, expect, it } from 'vitest';
import { type StreamInputs, streamRows } from '../../src/cli/status-page/streams.js';
import type { RunRecord } from '../../src/warehouse/index.js';

const NOW = Date.parse('2026-07-01T12:00:00Z');

function runOf(over: Partial<RunRecord>): RunRecord {
  return {
    runId: 'r',
    kind: 'sync',
    status: 'done',
    startedAt: '2026-07-01 11:00:00',
    finishedAt: '2026-07-01 11:01:00',
    args: {},
    credits: null,
    streams: null,
    error: null,
    resumable: false,
    requests: null,
    waitsMs: null,
    rejected429: null,
    pid: null,
    ...over,
  };
}

function inputs(over: Partial<StreamInputs>): StreamInputs {
  return {
    tables: {},
    cursors: [],
    capture: [],
    unavailable: [],
    rejected: {},
    runs: [],
    lags: [],
    zone: 'UTC',
    nowMs: NOW,
    ...over,
  };
}

const cursor = (stream: string, watermark: string, updatedAt: string) => ({
  stream,
  scope: 'account',
  watermark,
  walk: null,
  lastPages: 1,
  lastSweepAt: null,
  updatedAt,
});

describe('streamRows', () => {
  it('says failing while the newest run that covered the stream failed on it, ok once a later one did not', () => {
    const failed = runOf({
      runId: 'old',
      status: 'failed',
      streams: { packages: { inserted: 0, updated: 0, deleted: 0, rejected: 0, pages: 1 } },
      error: 'tracks: /tracks answered 404: set streams.tracks.path\npackages/event:3: socket hang up',
    });
    const rows = streamRows(inputs({ tables: { tracks: 0, packages: 4 }, runs: [failed] }));
    expect(rows.map((r) => [r.stream, r.health, r.reason])).toEqual([
      ['packages', 'failing', 'packages/event:3: socket hang up'],
      ['tracks', 'failing', 'tracks: /tracks answered 404: set streams.tracks.path'],
    ]);
    const later = runOf({
      runId: 'new',
      streams: { packages: { inserted: 1, updated: 0, deleted: 0, rejected: 0, pages: 1 } },
    });
    const after = streamRows(inputs({ tables: { tracks: 0, packages: 4 }, runs: [later, failed] }));
    expect(after.map((r) => [r.stream, r.health])).toEqual([
      ['packages', 'ok'],
      ['tracks', 'failing'],
    ]);
  });

  it('says unavailable for a refused path no run failed on, and no data for a stream with nothing yet', () => {
    const rows = streamRows(
      inputs({
        unavailable: [
          {
            stream: 'event_questions',
            path: '/event-questions',
            status: 404,
            detail: null,
            firstSeenAt: '2026-07-01 10:00:00',
            lastSeenAt: '2026-07-01 11:00:00',
          },
        ],
        capture: [
          {
            stream: 'speakers',
            applied: 0,
            ignored: 0,
            lastDeliveryAt: null,
            lastChangeAt: null,
            lastLagMs: null,
            reconciledRows: 0,
            lastReconcileAt: null,
            lastReconcileRun: null,
          },
        ],
      }),
    );
    expect(rows.map((r) => [r.stream, r.health, r.fed, r.reason])).toEqual([
      [
        'event_questions',
        'unavailable',
        'polled',
        '/event-questions answered 404 since 2026-07-01 10:00:00 UTC: set streams.event_questions.path',
      ],
      ['speakers', 'no data', 'webhook', null],
    ]);
  });

  it('takes the newest change applied, by webhook or by poll, in the record zone', () => {
    const rows = streamRows(
      inputs({
        zone: 'Europe/Paris',
        tables: { registrants: 10 },
        // Watermarks and delivery times are Paris wall time (UTC+2 in July); the cursor's own time is UTC.
        cursors: [cursor('registrants', '2026-07-01 13:50:00', '2026-07-01 11:50:30')],
        capture: [
          {
            stream: 'registrants',
            applied: 5,
            ignored: 0,
            lastDeliveryAt: '2026-07-01 11:59:00',
            lastChangeAt: '2026-07-01 13:58:59',
            lastLagMs: 1000,
            reconciledRows: 0,
            lastReconcileAt: null,
            lastReconcileRun: null,
          },
        ],
        // Wall-as-UTC lags, i.e. 2 h too small in Paris: 1.5 s and 4 s once shifted back.
        lags: [{ stream: 'registrants', count: 5, p50WallMs: 1500 - 7_200_000, p95WallMs: 4000 - 7_200_000 }],
      }),
    );
    expect(rows).toEqual([
      {
        stream: 'registrants',
        rows: 10,
        fed: 'webhook',
        health: 'ok',
        reason: null,
        newestChangeAt: '2026-07-01 11:58:59',
        freshnessSeconds: 61,
        lastPollAt: '2026-07-01 11:50:30',
        lastDeliveryAt: '2026-07-01 11:59:00',
        lagP50Seconds: 1.5,
        lagP95Seconds: 4,
        lagSamples: 5,
        rejected: 0,
      },
    ]);
  });
});
