/**
 * The arithmetic of `plan --estimate`, without a service: which events it counts (spread over their size figure, or
 * their statuses when the events carry none), how a stream's rows are extrapolated to the others and the range the
 * sample allows, and what credits mean in time at the rate limit the service reported.
 */
import { describe, expect, it } from 'vitest';
import type { EventInfo } from '../../src/sync/plan.js';
import { extrapolate, type StreamObservation } from '../../src/sync/plan-extrapolate.js';
import { chooseSample, type EventSample, sizeFigures, spreadPositions } from '../../src/sync/plan-sample.js';
import { type RateLimitView, timeAtLimit } from '../../src/sync/plan-time.js';
import type { EventSize } from '../../src/warehouse/index.js';

const event = (id: number, status: string): EventInfo => ({
  id,
  status,
  startDate: null,
  endDate: null,
  createdAt: null,
});
const size = (id: number, targetAttendance: number | null, capacity: number | null = null): EventSize => ({
  id,
  targetAttendance,
  capacity,
});

describe('which events an estimate counts', () => {
  it('spreads k picks over n: the first, the last and evenly between; all when k >= n', () => {
    expect(spreadPositions(20, 3)).toEqual([0, 10, 19]);
    expect(spreadPositions(6, 2)).toEqual([0, 5]);
    expect(spreadPositions(5, 1)).toEqual([0]);
    expect(spreadPositions(3, 5)).toEqual([0, 1, 2]);
    expect(spreadPositions(0, 3)).toEqual([]);
  });

  it('scales by target_attendance when every event gives it (above 0 on most), largest first', () => {
    const events = [event(1, 'live'), event(2, 'draft'), event(3, 'completed'), event(4, 'live')];
    const sizes = [size(1, 300, 400), size(2, 0, 50), size(3, 900, 1000), size(4, 500, 600)];
    const sample = chooseSample(events, sizes, 2);
    expect(sample.by).toBe('target_attendance');
    // The largest and the smallest above 0: an event of size 0 says nothing of rows per unit.
    expect(sample.events).toEqual([3, 1]);
    expect(sample.keys.get(4)).toBe(500);
    // Picked only when the others do not fill the sample.
    expect(chooseSample(events, sizes, 4).events).toEqual([3, 4, 1, 2]);
  });

  it('falls back to capacity, then to statuses, when a figure is missing on an event or 0 on most', () => {
    const events = [event(1, 'live'), event(2, 'live'), event(3, 'completed')];
    expect(sizeFigures(events, [size(1, 10, 100), size(2, null, 200), size(3, 30, 300)])?.field).toBe('capacity');
    expect(sizeFigures(events, [size(1, 0, 0), size(2, 0, 0), size(3, 30, null)])).toBeNull();
    const sample = chooseSample(events, [], 2);
    expect(sample.by).toBe('status');
    // Grouped by status, the largest group first: the picks cover both statuses.
    expect(sample.events).toEqual([1, 3]);
    expect(sample.keys.get(3)).toBe('completed');
  });
});

const observed = (eventId: number, rows: number, perPage = 100, rowsExact = true): StreamObservation => ({
  eventId,
  rows,
  rowsExact,
  perPage,
});

describe('a stream extrapolated over the events not counted', () => {
  const events = [event(1, 'live'), event(2, 'live'), event(3, 'completed'), event(4, 'draft')];

  it('by size: rows per unit of the figure on the sample, each event at least one call; the range from the rates seen', () => {
    const keys = new Map([
      [1, 1000],
      [2, 500],
      [3, 200],
      [4, 0],
    ]);
    const sample: EventSample = { events: [1, 4], by: 'target_attendance', keys };
    // Event 1 shows 2 rows per unit: event 2 (500) ~ 1000 rows = 10 pages, event 3 (200) ~ 400 rows = 4 pages.
    const x = extrapolate({ sample, observed: [observed(1, 2000), observed(4, 0)], targets: [2, 3], maxPerPage: 1000 });
    expect(x).toMatchObject({ calls: 14, low: 14, high: 14, rate: { min: 2, max: 2 }, lowerBound: false });
    // One counted event with a figure above 0: the range rests on it alone, and says so.
    expect(x.spreadUnknown).toBe(true);
  });

  it('by size with two informative events: low and high price the others at the smallest and largest rate', () => {
    const sample = chooseSample(events, [size(1, 1000), size(2, 500), size(3, 200), size(4, 100)], 3);
    const x = extrapolate({
      sample,
      observed: [observed(1, 1000), observed(3, 400)],
      targets: [2, 4],
      maxPerPage: 1000,
    });
    // Rates 1 and 2 per unit; overall 1400 / 1200.
    expect(x.rate).toEqual({ min: 1, max: 2 });
    expect(x.low).toBe(5 + 1);
    expect(x.high).toBe(10 + 2);
    expect(x.calls).toBe(Math.ceil((500 * 1400) / 1200 / 100) + Math.ceil((100 * 1400) / 1200 / 100));
    expect(x.spreadUnknown).toBe(false);
  });

  it('by status: the mean of the counted events of that status, else of all counted; the granted page size', () => {
    const sample = chooseSample(events, [], 2);
    expect(sample.by).toBe('status');
    const x = extrapolate({
      sample,
      observed: [observed(1, 450, 200), observed(3, 150, 200)],
      targets: [2, 4],
      maxPerPage: 1000,
    });
    // Event 2 is live like event 1: 450 rows at the 200 granted = 3 calls; the draft has no counted peer: mean 300 = 2.
    expect(x.calls).toBe(3 + 2);
    expect(x.low).toBe(3 + 1);
    expect(x.high).toBe(3 + 3);
  });

  it('rows known only from the page count make a lower bound; nothing counted prices one call per event', () => {
    const sample = chooseSample(events, [], 1);
    const partial = extrapolate({ sample, observed: [observed(1, 101, 100, false)], targets: [2, 3], maxPerPage: 100 });
    expect(partial.lowerBound).toBe(true);
    const none = extrapolate({ sample, observed: [], targets: [2, 3, 4], maxPerPage: 100 });
    expect(none).toMatchObject({ calls: 3, low: 3, high: 3, rate: null, lowerBound: true, spreadUnknown: true });
  });
});

describe('credits in time at the rate limit', () => {
  const reported: RateLimitView = {
    limit: 2000,
    limitSource: 'reported',
    remaining: 1600,
    resetInSeconds: 300,
    windowSeconds: 600,
  };

  it('no wait while the credits left suffice: the calls alone', () => {
    expect(timeAtLimit(1000, 100, reported, 2)).toEqual({ windows: 1, seconds: Math.round((100 * 0.25) / 2) });
  });

  it('past them: the reset the service announced, then whole windows, then the last window’s calls', () => {
    // 6,100 credits: 1,600 now, 2,000 after the reset in 300 s, 2,000 a window later, 500 in the last window.
    const t = timeAtLimit(6100, 610, reported, 2);
    expect(t.windows).toBe(4);
    expect(t.seconds).toBe(Math.round(300 + 2 * 600 + (50 * 0.25) / 2));
  });

  it('with no reset known (no answer yet), the first wait is a whole window', () => {
    const configured: RateLimitView = { ...reported, limitSource: 'configured', remaining: 2000, resetInSeconds: null };
    expect(timeAtLimit(2500, 250, configured, 1).seconds).toBe(Math.round(600 + 50 * 0.25));
  });
});
