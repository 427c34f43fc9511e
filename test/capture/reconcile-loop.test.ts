/**
 * What the daemon's catch-up asks of the engine (src/daemon/reconcile-loop.ts), on a real warehouse: past events
 * always; after a daemon's silence (its heartbeat) the sweeps due by their schedule as owed work and a delete check
 * of each webhook-fed scope, not at a first start; owed again by a daemon that starts where a catch-up was left
 * pending; done once a run of it completes.
 */
import { describe, expect, it } from 'vitest';
import { CATCH_UP_KIND, CATCH_UP_LEAVES, CATCH_UP_MARK } from '../../src/daemon/catch-up.js';
import { ReconcileLoop } from '../../src/daemon/reconcile-loop.js';
import type { SyncResult } from '../../src/sync/index.js';
import { openTemp } from '../warehouse/helpers.js';

const HOUR = 3_600_000;

function loop(
  w: ConstructorParameters<typeof ReconcileLoop>[0]['warehouse'],
  now: number,
  streams = 'registrants,sessions',
): ReconcileLoop {
  return new ReconcileLoop({
    warehouse: w,
    streams,
    webhooks: true,
    everyHours: 6,
    catchUp: true,
    retentionDays: 7,
    log: () => undefined,
    now: () => now,
  });
}

/** A run's result as the engine returns it, with what the loop reads. */
function result(status: SyncResult['status']): SyncResult {
  return { status, streams: { registrants: { inserted: 0, updated: 0, deleted: 0 } } } as unknown as SyncResult;
}

describe('the catch-up', () => {
  it('at a first start: one pass over every event, no owed sweep', async () => {
    const t = await openTemp();
    try {
      const l = loop(t.w, Date.parse('2026-11-26T12:00:00Z'));
      await l.start(null);
      expect(l.plan()).toEqual({
        streams: 'registrants,sessions',
        namedStreams: ['registrants', 'sessions'],
        mergeEachItem: true,
        pastEventPollHours: 0,
      });
    } finally {
      await t.cleanup();
    }
  });

  it('after a silence: due sweeps as owed work and delete checks of the webhook-fed streams; done when a run completes', async () => {
    const t = await openTemp();
    try {
      const now = Date.parse('2026-11-26T12:00:00Z');
      const l = loop(t.w, now);
      await l.start(new Date(now - 3 * HOUR));
      const plan = l.plan();
      expect(plan).toMatchObject({ pastEventPollHours: 0, deletes: 'due', deleteChecks: ['registrants', 'sessions'] });
      // The sweeps' own schedule decides which are due: a short silence does not make every sweep due.
      expect(plan?.sweepEveryHours).toBeUndefined();
      expect(await t.w.marks.get(CATCH_UP_MARK)).toBe(new Date(now).toISOString());
      await l.after(result('partial'), new Date(now));
      expect(l.pending).toBe(true);
      await l.after(result('done'), new Date(now));
      expect(l.pending).toBe(false);
      expect(await t.w.marks.get(CATCH_UP_MARK)).toBe('');
      // Webhook-fed streams are not due again before reconcileEveryHours: nothing to poll.
      expect(l.plan()).toBeNull();
    } finally {
      await t.cleanup();
    }
  });

  it('left pending by a killed daemon: owed by the next one, checks included, even with no heartbeat', async () => {
    const t = await openTemp();
    try {
      const now = Date.parse('2026-11-26T12:00:00Z');
      await t.w.marks.set(CATCH_UP_MARK, new Date(now - 5 * HOUR).toISOString());
      const l = loop(t.w, now);
      await l.start(null);
      expect(l.pending).toBe(true);
      expect(l.plan()).toMatchObject({ deletes: 'due', deleteChecks: ['registrants', 'sessions'] });
    } finally {
      await t.cleanup();
    }
  });
});

describe('ticks during the catch-up', () => {
  it('the catch-up runs in slices of bulk work; from the second on, each tick polls its own streams first', async () => {
    const t = await openTemp();
    try {
      const now = Date.parse('2026-11-26T12:00:00Z');
      const l = loop(t.w, now, 'registrants,transactions');
      await l.start(null);
      const slice = {
        // The webhook-fed streams first: the silence left them furthest behind.
        streams: 'registrants,transactions',
        namedStreams: ['registrants', 'transactions'],
        mergeEachItem: true,
        pastEventPollHours: 0,
        runKind: CATCH_UP_KIND,
        lane: { name: 'the catch-up', leaveShare: CATCH_UP_LEAVES },
      };
      expect(l.tick()).toEqual([slice]);
      await l.after(result('partial'), new Date(now), slice);
      const tick = { streams: 'transactions', namedStreams: ['registrants', 'transactions'], mergeEachItem: true };
      expect(l.tick()).toEqual([tick, slice]);
      // The tick's own run completing is not the catch-up completing.
      await l.after(result('done'), new Date(now), tick);
      expect(l.pending).toBe(true);
      expect(await t.w.marks.get(CATCH_UP_MARK)).toBe(new Date(now).toISOString());
      await l.after(result('done'), new Date(now), slice);
      expect(l.pending).toBe(false);
      expect(await t.w.marks.get(CATCH_UP_MARK)).toBe('');
      // Then ticks are ordinary again: the streams no webhook feeds, interactive.
      expect(l.tick()).toEqual([tick]);
    } finally {
      await t.cleanup();
    }
  });
});

describe('the heartbeat', () => {
  it('is written without counting as a change: an idle daemon reuses its query copy', async () => {
    const { Heartbeat, HEARTBEAT_MARK } = await import('../../src/daemon/heartbeat.js');
    const t = await openTemp();
    try {
      const before = t.w.generation;
      const beat = await Heartbeat.start(t.w, { now: () => Date.parse('2026-11-26T12:00:00Z') });
      await beat.stop();
      expect(await t.w.marks.get(HEARTBEAT_MARK)).toBe('2026-11-26T12:00:00.000Z');
      expect(t.w.generation).toBe(before);
      // A counted write moves it (what makes the next query copy the warehouse again).
      await t.w.marks.set('other', 'x');
      expect(t.w.generation).toBeGreaterThan(before);
    } finally {
      await t.cleanup();
    }
  });
});
