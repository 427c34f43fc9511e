/**
 * `plan --estimate` against the simulator: it reads the events list whole, page 1 of every account stream and page 1
 * of every per-event stream on a sample of the events, keeps those pages for the backfill, and extrapolates the other
 * events. Every call it makes is counted here, and its figure is held to within 25% of what the backfill that
 * resumes it then spends: by the events' own size figure (tiny, small), by their status when the events carry none,
 * at the page size the service grants when it grants less than asked. Answers without `_meta.totalCount` make it a
 * lower bound that says why; a path answering 404 is a state it reports, for one call.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/api/index.js';
import { type PlanReport, planSync, runSync, type SyncOptions } from '../../src/sync/index.js';
import { resolveSelection } from '../../src/sync/selection.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import type { ProxyRules } from '../helpers/proxy.js';

const CORE: SyncOptions = { mode: 'backfill', streams: 'core', lagSeconds: 0 };

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The list calls an estimate makes before a first sync: each account stream's page 1 (the events list in one
 * page here), then page 1 of every per-event stream on each sampled event. */
function expectedListCalls(sampled: number): number {
  const s = resolveSelection('core', { customFields: true });
  const perEvent = [...s.dependentPhase, ...s.eventPhase].filter((d) => d.scope === 'event').length;
  return s.accountPhase.length + perEvent * sampled;
}

function within25(planned: number, spent: number): void {
  expect(Math.abs(planned - spent), `estimated ${planned}, the backfill spent ${spent}`).toBeLessThanOrEqual(
    spent * 0.25,
  );
}

/**
 * Estimates on a fresh warehouse, checks its spend against the simulator's counters, then backfills (with the same
 * client, its figures started afresh: a proxied warehouse belongs to that proxy's address).
 */
async function estimateThenBackfill(
  harness: Harness,
  client: ApiClient,
  sampleEvents: number,
): Promise<{ report: PlanReport; spent: number }> {
  const report = await planSync(client, harness.warehouse, { ...CORE, estimate: { sampleEvents } });
  const counters = harness.sim.counters();
  expect(counters.listCalls).toBe(expectedListCalls(sampleEvents));
  expect(counters.tokenCalls).toBe(1);
  expect(counters.otherCalls).toBe(0);
  expect(report.spentCredits).toBe(counters.credits);
  expect(report.spentListCalls).toBe(counters.listCalls);
  expect(report.estimate?.sampled).toHaveLength(sampleEvents);
  client.beginRun();
  const backfill = await runSync(client, harness.warehouse, CORE);
  expect(backfill.status).toBe('done');
  expect(backfill.resumed).toBe(report.countRunId);
  expect(backfill.credits.list).toBe((harness.sim.counters().listCalls - counters.listCalls) * 10);
  return { report, spent: backfill.credits.list };
}

/** A proxy rule: every `/events` answer without the events' size figures (an account that leaves them empty). */
function withoutSizes(path: string, body: string): string | null {
  if (!path.startsWith('/events?')) return null;
  const page = JSON.parse(body) as { items: Record<string, unknown>[] };
  const items = page.items.map((e) => ({ ...e, target_attendance: null, capacity: null }));
  return JSON.stringify({ ...page, items });
}

describe('plan --estimate before a first backfill', () => {
  it('tiny: one event counted, two extrapolated by target_attendance; counting + backfill buy each page once', async () => {
    h = await startHarness({ size: 'tiny', seed: 3 });
    const { report, spent } = await estimateThenBackfill(h, h.client(), 1);
    expect(report.estimate).toMatchObject({ events: 3, unread: 3, by: 'target_attendance', lowerBound: [] });
    expect(report.complete).toBe(true);
    within25(report.totalCredits, spent);
    const alone = await startHarness({ size: 'tiny', seed: 3 });
    try {
      const reference = await runSync(alone.client(), alone.warehouse, CORE);
      expect(h.sim.counters().listCalls * 10).toBe(reference.credits.list);
    } finally {
      await alone.close();
    }
  });

  it('small: three events counted, three extrapolated; the time is priced at the limit the service reported', async () => {
    h = await startHarness({ size: 'small', seed: 1, rateLimit: { credits: 2000, windowSeconds: 600 } });
    const { report, spent } = await estimateThenBackfill(h, h.client(), 3);
    within25(report.totalCredits, spent);
    expect(report.estimate!.lowCredits).toBeLessThanOrEqual(report.totalCredits);
    expect(report.estimate!.highCredits).toBeGreaterThanOrEqual(report.totalCredits);
    // The client was configured with nothing: the limit is the service's, and so is what is left of the window.
    expect(report.rateLimit).toMatchObject({ limit: 2000, limitSource: 'reported', windowSeconds: 600 });
    expect(report.rateLimit.remaining).toBe(2000 - report.spentCredits);
    expect(report.rateLimit.resetInSeconds).toBeGreaterThan(0);
    expect(report.rateLimit.resetInSeconds).toBeLessThanOrEqual(600);
  });

  it('small, events without target_attendance or capacity: extrapolated by status, still within 25%', async () => {
    h = await startHarness({ size: 'small', seed: 2 });
    const { client } = await h.proxied({ rewrite: withoutSizes });
    const { report, spent } = await estimateThenBackfill(h, client, 2);
    expect(report.estimate?.by).toBe('status');
    within25(report.totalCredits, spent);
  });

  it('small, a service granting 200 rows a page when 1000 are asked: pages priced at the size granted', async () => {
    h = await startHarness({ size: 'small', seed: 1 });
    const rules: ProxyRules = {
      forward: (path) =>
        path.replace(
          /([?&])per-page=(\d+)/,
          (_, sep: string, n: string) => `${sep}per-page=${Math.min(200, Number(n))}`,
        ),
    };
    const { client } = await h.proxied(rules);
    const { report, spent } = await estimateThenBackfill(h, client, 2);
    within25(report.totalCredits, spent);
    // The live event's 1,150 registrants: 6 pages of 200, not 2 of 1000.
    expect(report.streams.registrants!.calls).toBeGreaterThan(6);
  });
});

describe('plan --estimate on answers the spec leaves open', () => {
  it('answers without _meta.totalCount: a lower bound, and why; the backfill still pages by pageCount', async () => {
    h = await startHarness({ size: 'tiny', seed: 3 });
    const { client } = await h.proxied({
      rewrite: (_path, body) => {
        const page = JSON.parse(body) as { _meta?: Record<string, unknown> };
        if (!page._meta) return null;
        const { totalCount: _, ...meta } = page._meta;
        return JSON.stringify({ ...page, _meta: meta });
      },
    });
    const { report, spent } = await estimateThenBackfill(h, client, 1);
    expect(report.complete).toBe(false);
    expect(report.estimate!.lowerBound.join('\n')).toMatch(/no _meta\.totalCount/);
    expect(report.totalCredits).toBeLessThanOrEqual(spent);
  });

  it('a path answering 404: reported unavailable after one call, neither counted again nor extrapolated', async () => {
    h = await startHarness({ size: 'tiny', seed: 3 });
    const { proxy, client } = await h.proxied({ notFound: (path) => path === '/event-questions' });
    const report = await planSync(client, h.warehouse, { ...CORE, estimate: { sampleEvents: 2 } });
    expect(proxy.refused.get('/event-questions')).toBe(1);
    expect(report.unavailable.map((u) => u.stream)).toEqual(['event_questions']);
    expect(report.streams.event_questions).toBeUndefined();
    // The refused call (answered by the proxy, charged by the client) replaces both sampled events' pages.
    expect(h.sim.counters().listCalls).toBe(expectedListCalls(2) - 2);
    expect(report.spentCredits).toBe(h.sim.counters().credits + 10);
    client.beginRun();
    const backfill = await runSync(client, h.warehouse, CORE);
    within25(report.totalCredits, backfill.credits.list);
  });
});
