/**
 * Day one on an account that differs from the simulator: paths the account does not serve are a recorded state
 * (no credit spent on them again), and a record the walk cannot key is quarantined without losing its neighbours.
 * The odd answers come from a real proxy on loopback in front of the simulator (whose defaults stay faithful).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runSync, type SyncOptions } from '../../src/sync/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';

const DEFINITION_PATHS = new Set(['/event-questions', '/sessions/fields', '/contacts/fields', '/sponsors/fields']);

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function storedIds(harness: Harness, table: string, where = 'TRUE'): Promise<number[]> {
  const r = await harness.warehouse.query(`SELECT id FROM ${table} WHERE _deleted_at IS NULL AND ${where} ORDER BY id`);
  return r.rows.map((row) => Number(row.id));
}

function sourceIds(harness: Harness, stream: string, filter: (r: Record<string, unknown>) => boolean = () => true) {
  return harness.sim
    .truth(stream)
    .records.filter(filter)
    .map((r) => Number(r.id))
    .sort((a, b) => a - b);
}

describe('a service that serves none of the custom-field definition paths', () => {
  const streams = ['events', 'contacts', 'registrants', 'sessions'];
  const base: SyncOptions = { mode: 'backfill', streams: streams.join(','), lagSeconds: 0 };

  it('loads every requested row, exits done, pays once per refused path, and nothing on the next run', async () => {
    h = await startHarness();
    const { proxy, client } = await h.proxied({ notFound: (p) => DEFINITION_PATHS.has(p) });
    const first = await runSync(client, h.warehouse, base);
    expect(first.errors).toEqual([]);
    expect(first.status).toBe('done');
    expect(first.unavailable.map((u) => [u.stream, u.status, u.named, u.recorded])).toEqual([
      ['contact_fields', 404, false, 'now'],
      ['event_questions', 404, false, 'now'],
      ['session_fields', 404, false, 'now'],
    ]);
    // One call per refused path: event_questions has a scope per event, but only the first was asked.
    expect(Object.fromEntries(proxy.refused)).toEqual({
      '/contacts/fields': 1,
      '/event-questions': 1,
      '/sessions/fields': 1,
    });
    expect(first.unavailable.find((u) => u.stream === 'event_questions')?.hint).toMatch(
      /streams\.event_questions\.path in evsync\.config\.json/,
    );
    for (const stream of streams) expect(await storedIds(h, stream), stream).toEqual(sourceIds(h, stream));
    // The documented fields load; the warning says so once per stream, not once per scope.
    const notes = first.warnings.filter((w) => w.includes('custom fields not requested'));
    expect(notes.map((w) => w.split(':')[0]).sort()).toEqual(['contacts', 'registrants', 'sessions']);
    expect(await h.warehouse.unavailable.list()).toHaveLength(3);

    const second = await runSync(client, h.warehouse, { ...base, mode: 'incremental' });
    expect(second.status).toBe('done');
    expect(second.errors).toEqual([]);
    expect(Object.fromEntries(proxy.refused)).toEqual({
      '/contacts/fields': 1,
      '/event-questions': 1,
      '/sessions/fields': 1,
    });
    expect(second.unavailable.every((u) => u.recorded === 'earlier' && u.since !== null)).toBe(true);
    expect(second.unavailable.find((u) => u.stream === 'event_questions')?.skipped).toBeGreaterThan(0);
  });

  it('tries again once the retry hours have passed, or at once when the path is changed', async () => {
    h = await startHarness();
    const { proxy, client } = await h.proxied({ notFound: (p) => DEFINITION_PATHS.has(p) });
    await runSync(client, h.warehouse, base);
    await runSync(client, h.warehouse, { ...base, mode: 'incremental', unavailableRetryHours: 0 });
    expect(proxy.refused.get('/event-questions')).toBe(2);
    // A new path is a new question: asked at once (here the simulator has no such path either).
    const moved = await runSync(client, h.warehouse, {
      ...base,
      mode: 'incremental',
      overrides: { event_questions: { path: '/questions-elsewhere' } },
    });
    expect(moved.unavailable.find((u) => u.stream === 'event_questions')).toMatchObject({
      path: '/questions-elsewhere',
      recorded: 'now',
    });
    expect(h.sim.counters().byPath['GET (unmatched)']).toBe(1);
  });

  it('a stream named one by one that is not served fails the run (exit 1) and says which key fixes it', async () => {
    h = await startHarness();
    const { client } = await h.proxied({ notFound: (p) => DEFINITION_PATHS.has(p) });
    const result = await runSync(client, h.warehouse, { mode: 'backfill', streams: 'events,event_questions' });
    expect(result.status).toBe('failed');
    expect(result.unavailable).toMatchObject([{ stream: 'event_questions', named: true }]);
    expect(result.errors.join('\n')).toMatch(
      /event_questions: \/event-questions answered 404: set streams\.event_questions\.path/,
    );
    expect(await storedIds(h, 'events')).toEqual(sourceIds(h, 'events'));
  });

  it('a stream that answers again is cleared from the unavailable record', async () => {
    h = await startHarness();
    let refuse = true;
    const { client } = await h.proxied({ notFound: (p) => refuse && p === '/contacts/fields' });
    await runSync(client, h.warehouse, { mode: 'backfill', streams: 'contacts', lagSeconds: 0 });
    expect((await h.warehouse.unavailable.list()).map((u) => u.stream)).toEqual(['contact_fields']);
    refuse = false;
    const again = await runSync(client, h.warehouse, {
      mode: 'incremental',
      streams: 'contacts',
      lagSeconds: 0,
      unavailableRetryHours: 0,
    });
    expect(again.unavailable).toEqual([]);
    expect(await h.warehouse.unavailable.list()).toEqual([]);
  });
});

describe('a record the walk cannot key', () => {
  function plantBadId(target: number, bad: (items: { id: unknown }[]) => void) {
    return (path: string, body: string): string | null => {
      if (!path.startsWith('/sessions?') || !path.includes(`event_id=${target}&`)) return null;
      const parsed = JSON.parse(body) as { items: { id: unknown }[] };
      if (parsed.items.length < 2) return null;
      bad(parsed.items);
      return JSON.stringify(parsed);
    };
  }

  it('is quarantined once; every other row of its page and scope loads and the run is done', async () => {
    h = await startHarness();
    const events = h.sim.truth('events').records.map((e) => Number(e.id));
    const perEvent = events.map((id) => ({
      id,
      n: sourceIds(h!, 'sessions', (r) => Number(r.event_id) === id).length,
    }));
    const target = perEvent.sort((a, b) => b.n - a.n)[0]!.id;
    let victim: unknown = null;
    const { client } = await h.proxied({
      rewrite: plantBadId(target, (items) => {
        victim = items[1]!.id;
        items[1]!.id = 'abc';
      }),
    });
    const options: SyncOptions = { mode: 'backfill', streams: 'sessions', lagSeconds: 0, customFields: false };
    const result = await runSync(client, h.warehouse, options);
    expect(result.errors).toEqual([]);
    expect(result.status).toBe('done');
    expect(result.streams.sessions?.rejected).toBe(1);
    const expected = sourceIds(h, 'sessions', (r) => Number(r.event_id) === target).filter((id) => id !== victim);
    expect(await storedIds(h, 'sessions', `event_id = ${target}`)).toEqual(expected);
    const rejected = await h.warehouse.query(
      `SELECT stream, scope, reason, raw->>'id' AS id FROM _evsync.rejected ORDER BY rejected_at`,
    );
    expect(rejected.rows).toEqual([
      { stream: 'sessions', scope: `event:${target}`, reason: 'no integer id ("abc")', id: 'abc' },
    ]);
    // Seen again on the next run: not inserted twice.
    await runSync(client, h.warehouse, options);
    const again = await h.warehouse.query(`SELECT count(*) AS n FROM _evsync.rejected`);
    expect(Number(again.rows[0]?.n)).toBe(1);
  });

  it('a page with no valid id fails only its scope, after one call, with its records kept', async () => {
    h = await startHarness();
    const events = h.sim.truth('events').records.map((e) => Number(e.id));
    const withSessions = events.filter((id) => sourceIds(h!, 'sessions', (r) => Number(r.event_id) === id).length > 1);
    const target = withSessions[0]!;
    const { client } = await h.proxied({
      rewrite: plantBadId(target, (items) => {
        for (const item of items) item.id = 'x';
      }),
    });
    const calls: string[] = [];
    const result = await runSync(client, h.warehouse, {
      mode: 'backfill',
      streams: 'sessions',
      lagSeconds: 0,
      customFields: false,
      onProgress: (e) => {
        if (e.type === 'page' && e.scope === `event:${target}`) calls.push(e.scope);
      },
    });
    expect(result.status).toBe('failed');
    expect(result.errors.join('\n')).toMatch(
      new RegExp(`sessions\\[event:${target}\\]: .*none of the \\d+ items has a usable id`),
    );
    expect(calls).toHaveLength(1);
    for (const id of events.filter((e) => e !== target)) {
      expect(await storedIds(h, 'sessions', `event_id = ${id}`)).toEqual(
        sourceIds(h, 'sessions', (r) => Number(r.event_id) === id),
      );
    }
    const kept = await h.warehouse.query(`SELECT count(*) AS n FROM _evsync.rejected WHERE scope = ?`, [
      `event:${target}`,
    ]);
    expect(Number(kept.rows[0]?.n)).toBeGreaterThan(1);
  });
});
