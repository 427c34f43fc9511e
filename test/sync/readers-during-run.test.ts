/**
 * Repairs reach readers as they land (issue 33): a daemon's run (the catch-up after an outage, with the options the
 * reconcile loop gives it) merges each completed item's pages at once, and the publisher, following the warehouse,
 * publishes them: the snapshot and the Parquet show the first items' repairs while the run still walks the others;
 * no publish ever shows a partition without a row the source still has; and merging item by item costs no API call
 * (the same catch-up, batched, on a twin warehouse, makes the same list calls).
 *
 * Nothing waits for time. The run is kept from ending by a proxy holding the list call of one registrants item
 * until the test has looked; publishes are driven by flush() after each completed item, each checked before the next.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Publisher, startPublisher } from '../../src/daemon/index.js';
import { ReconcileLoop } from '../../src/daemon/reconcile-loop.js';
import { type ProgressEvent, runSync, type SyncOptions } from '../../src/sync/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { eventually } from '../capture/daemon-process.js';
import { compareStream, type Harness, startHarness } from '../helpers/harness.js';
import {
  lostRows,
  type Partitions,
  partitionKey,
  readersView,
  truthPartitions,
  unrepaired,
} from '../helpers/partitions.js';
import { holdSecondEvent } from '../helpers/proxy.js';

const STREAMS = 'events,registrants,sessions';
const TABLES = ['registrants', 'sessions'];

let h: Harness | undefined;
let publisher: Publisher | undefined;
const opened: Warehouse[] = [];
/** Lets a held call go (a failed test must not leave a run waiting on it). */
let release: (() => void) | undefined;
afterEach(async () => {
  release?.();
  release = undefined;
  await publisher?.stop();
  publisher = undefined;
  for (const w of opened.splice(0)) await w.close();
  await h?.close();
  h = undefined;
});

/** What another process reads now (publishes are never under way while this runs: each follows a flush). */
async function readers(snapshot: string, parquet: string): Promise<{ snap: Partitions; pq: Partitions }> {
  const view = await readersView(snapshot, parquet, TABLES);
  if (!view) throw new Error('a publish replaced files while nothing was publishing');
  return view;
}

/** The options of the daemon's catch-up after a silence since `heartbeat`, as its reconcile loop plans them. */
async function catchUp(harness: Harness, warehouse: Warehouse, heartbeat: Date): Promise<Partial<SyncOptions>> {
  const loop = new ReconcileLoop({
    warehouse,
    streams: STREAMS,
    webhooks: true,
    everyHours: 6,
    catchUp: true,
    retentionDays: 7,
    log: () => undefined,
    now: () => harness.sim.now().getTime(),
  });
  await loop.start(heartbeat);
  const plan = loop.plan();
  if (!plan) throw new Error('the catch-up planned nothing');
  return plan;
}

describe('a daemon run and its readers', () => {
  it('publishes each completed item during the run, never a partition missing a row, for no extra call', async () => {
    h = await startHarness();
    const harness = h;
    const { hold, state } = holdSecondEvent('/registrants');
    const events = state.events;
    release = state.release;
    // One base URL for every run (a warehouse holds one account's data). A held call must not time out: a retry
    // would be a second call, charged when released.
    const { proxy, client } = await h.proxied({ hold }, { timeouts: { headersMs: 600_000, bodyMs: 600_000 } });
    // Each run by a client of its own, as a daemon started after an outage (its server clock calibrated afresh).
    const fresh = () => harness.client({ baseUrl: proxy.baseUrl, timeouts: { headersMs: 600_000, bodyMs: 600_000 } });
    const w = await Warehouse.open(join(h.dir, 'daemon.duckdb'), { publishing: true });
    const twin = await Warehouse.open(join(h.dir, 'batched.duckdb'));
    opened.push(w, twin);
    for (const x of [w, twin]) {
      expect((await runSync(client, x, { mode: 'backfill', streams: STREAMS })).status).toBe('done');
    }
    const snapshot = join(h.dir, 'readers.duckdb');
    const parquet = join(h.dir, 'parquet');
    const p = await startPublisher({
      warehouse: w,
      snapshot,
      parquetOut: parquet,
      // Publishes come from flush() only.
      everyMs: 3_600_000,
      publishAllAtStart: true,
      followChanges: true,
      log: () => undefined,
    });
    publisher = p;
    await p.flush();
    const before = (await readers(snapshot, parquet)).snap;

    // The daemon's last heartbeat, then an outage: changes to registrants and sessions of every event.
    const heartbeat = h.sim.now();
    h.sim.advanceClock(5);
    for (let i = 0; i < 10; i++) {
      h.sim.mutate(4, { streams: TABLES });
      h.sim.advanceClock(1);
    }
    h.sim.advanceClock(10);
    const source = truthPartitions(h.sim, TABLES);

    const options = await catchUp(h, w, heartbeat);
    expect(options.mergeEachItem).toBe(true);
    state.armed = true;
    const done: string[] = [];
    const merged: boolean[] = [];
    const checked: { lost: string[]; unrepaired: string[] }[] = [];
    let checks = Promise.resolve();
    const publishAndCheck = (completed: readonly string[]) => {
      checks = checks.then(async () => {
        await p.flush();
        const now = await readers(snapshot, parquet);
        for (const seen of [now.snap, now.pq]) {
          checked.push({
            lost: lostRows(seen, before, source),
            unrepaired: completed.flatMap((key) => unrepaired(seen, source, key)),
          });
        }
      });
    };
    const onProgress = (e: ProgressEvent) => {
      if (e.type !== 'item-done') return;
      merged.push(e.merged);
      if (TABLES.includes(e.stream) && !e.scope.endsWith('/sweep')) done.push(partitionKey(e.stream, e.eventId));
      publishAndCheck([...done]);
    };
    const listCalls = h.sim.counters().listCalls;
    let ended = false;
    const run = runSync(fresh(), w, { mode: 'incremental', ...options, onProgress }).finally(() => {
      ended = true;
    });

    // The first registrants item completed while the second is held: its repairs are what readers see now.
    await eventually(() => ended || (state.held > 0 && done.includes(`registrants/${events[0]}`)));
    await checks;
    const first = `registrants/${events[0]}`;
    const heldKey = `registrants/${events[1]}`;
    const during = await readers(snapshot, parquet);
    expect(ended).toBe(false);
    expect(unrepaired(before, source, first).length).toBeGreaterThan(0);
    expect(unrepaired(during.snap, source, first)).toEqual([]);
    expect(unrepaired(during.pq, source, first)).toEqual([]);
    expect([...(during.snap.get(heldKey) ?? [])].sort()).toEqual([...(before.get(heldKey) ?? [])].sort());

    state.armed = false;
    state.release();
    const result = await run;
    expect(result.status).toBe('done');
    await checks;
    await p.flush();
    const spent = harness.sim.counters().listCalls - listCalls;

    // Every publish: no row lost, every completed item's repairs there; at the end, the source exactly.
    expect(checked.length).toBeGreaterThan(4);
    expect(checked.filter((c) => c.lost.length > 0 || c.unrepaired.length > 0)).toEqual([]);
    expect(merged.every((m) => m)).toBe(true);
    const end = await readers(snapshot, parquet);
    expect(end.snap).toEqual(source);
    expect(end.pq).toEqual(source);

    // The same catch-up batched (one-shot merging) on the twin: the same list calls, the same tables.
    const batched = await catchUp(h, twin, heartbeat);
    const twinCalls = h.sim.counters().listCalls;
    const twinMerged: boolean[] = [];
    const again = await runSync(fresh(), twin, {
      mode: 'incremental',
      ...batched,
      mergeEachItem: false,
      onProgress: (e) => {
        if (e.type === 'item-done') twinMerged.push(e.merged);
      },
    });
    expect(again.status).toBe('done');
    expect(twinMerged.some((m) => m)).toBe(false);
    expect(h.sim.counters().listCalls - twinCalls).toBe(spent);
    for (const table of TABLES) {
      for (const x of [w, twin])
        expect(await compareStream(h.sim, x, table)).toEqual({ missing: [], extra: [], changed: [] });
    }
  });
});
