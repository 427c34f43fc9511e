/**
 * Repairs reach readers as they land (issue 33), as a user meets it: `serve --snapshot --parquet-out` killed, changes
 * to several events while nothing listened, then the restart's catch-up. Its first completed items are in the
 * snapshot and the Parquet another process reads while the catch-up still runs (a loopback proxy holds one
 * registrants item's call, so the run cannot end before the test has looked: by count, not by time), no read ever
 * shows a partition without a row the source still has, and once the catch-up ends both equal the source.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { run } from '../cli/helpers.js';
import {
  lostRows,
  type Partitions,
  partitionKey,
  readersView,
  samePartitions,
  truthPartitions,
  unrepaired,
} from '../helpers/partitions.js';
import { holdSecondEvent, type LoopbackProxy, startProxy } from '../helpers/proxy.js';
import { eventually, useDaemons } from './daemon-process.js';
import { useServeEnv } from './helpers.js';

const SECRET = 'daemon-readers-secret-5e4d3c2b1a09';
const STREAMS = 'events,registrants,sessions';
const TABLES = ['registrants', 'sessions'];
/** Never fires during a test: the runs seen here are the catch-ups at start. */
const QUIET_CRON = '0 3 * * *';

let sim: Simulator;
let dir: string;
let env: Record<string, string>;
useServeEnv({ seed: 17, db: 'readers.duckdb', secret: SECRET }, (e) => {
  ({ sim, dir, env } = e);
});

const daemons = useDaemons();

const { hold: holdRule, state: hold } = holdSecondEvent('/registrants');
let proxy: LoopbackProxy;
beforeAll(async () => {
  proxy = await startProxy(sim.baseUrl, { hold: holdRule });
});
afterAll(async () => {
  hold.release();
  await proxy?.close();
});

const readers = (snapshot: string, parquet: string) => readersView(snapshot, parquet, TABLES);

describe('readers beside a long catch-up', () => {
  it('see the first completed items before the catch-up ends, never a partition missing a row', async () => {
    const proxied = { ...env, EVSYNC_BASE_URL: proxy.baseUrl };
    expect((await run(['backfill', '--streams', STREAMS], { cwd: dir, env: proxied })).code).toBe(0);
    const parquet = join(dir, 'parquet');
    const snapshot = join(dir, 'snapshot.duckdb');
    const argv = ['serve', '--listen', '127.0.0.1:0', '--streams', STREAMS, '--cron', QUIET_CRON];
    const outputs = ['--snapshot', snapshot, '--parquet-out', parquet, '--publish-every', '1'];
    const first = await daemons.start([...argv, ...outputs], proxied);
    await eventually(() => first.stderr().includes('catch-up complete'));
    let before: Partitions | null = null;
    await eventually(async () => {
      const now = existsSync(snapshot) ? await readers(snapshot, parquet) : null;
      before = now && samePartitions(now.snap, truthPartitions(sim, TABLES)) ? now.snap : null;
      return before !== null;
    });
    first.child.kill('SIGKILL');
    await first.exited;

    // While nothing listens: changes to registrants and sessions of every event.
    for (let i = 0; i < 10; i++) {
      sim.mutate(4, { streams: TABLES });
      sim.advanceClock(1);
    }
    sim.advanceClock(10);
    const source = truthPartitions(sim, TABLES);
    const pre = before as unknown as Partitions;
    const lost: string[] = [];
    const look = async () => {
      const now = await readers(snapshot, parquet);
      if (now) lost.push(...lostRows(now.snap, pre, source), ...lostRows(now.pq, pre, source));
      return now;
    };

    hold.armed = true;
    const second = await daemons.start([...argv, ...outputs], proxied);
    // The first registrants item done, the second held: what readers see has the first one's repairs.
    const firstKey = () => partitionKey('registrants', hold.events[0]);
    let during: { snap: Partitions; pq: Partitions } | null = null;
    await eventually(async () => {
      if (hold.held === 0) return false;
      during = await look();
      return during !== null && unrepaired(during.snap, source, firstKey()).length === 0;
    });
    const seen = during as unknown as { snap: Partitions; pq: Partitions };
    await eventually(async () => {
      const now = await look();
      return now !== null && unrepaired(now.pq, source, firstKey()).length === 0;
    });
    // The catch-up has not ended: its held call is not answered yet.
    expect(second.stderr()).not.toMatch(/reconcile #1:/);
    expect(unrepaired(pre, source, firstKey()).length).toBeGreaterThan(0);
    const heldKey = partitionKey('registrants', hold.events[1]);
    expect([...(seen.snap.get(heldKey) ?? [])].sort()).toEqual([...(pre.get(heldKey) ?? [])].sort());

    hold.armed = false;
    hold.release();
    await eventually(() => second.stderr().includes('catch-up complete'));
    expect(second.stderr()).toMatch(/reconcile #1: done/);
    await eventually(async () => {
      const now = await look();
      return now !== null && samePartitions(now.snap, source) && samePartitions(now.pq, source);
    });
    expect(lost).toEqual([]);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
  }, 180_000);
});
