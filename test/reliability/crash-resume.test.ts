/**
 * Crash and resume: a sync in a child process is SIGKILLed at random points (after a random number of loaded
 * pages plus a random delay, so some kills land inside a page's transaction), then run again to completion. The
 * warehouse must equal the source exactly, and the list calls of the killed run and the rerun together may exceed
 * those of an uninterrupted run by at most the pages in flight at each kill: per walk (concurrency of them) the
 * page being loaded and the next one, asked for ahead.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { rebuild } from '../../src/sync/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { expectEqualToSource, expectFileEqualToSource, FULL, seeded, spawnSyncChild } from '../helpers/reliability.js';

const STREAM_LIST = ['registrants', 'sessions', 'contacts', 'transactions', 'registrant_line_items'];
const STREAMS = STREAM_LIST.join(',');
const TRIALS = FULL ? 25 : 3;
/** Kills per trial before the run is let to finish. */
const MAX_KILLS = FULL ? 3 : 1;
const CONCURRENCY = 2; // the engine's default, which the child uses
const IN_FLIGHT_PAGES = CONCURRENCY * 2;
const SEED = Number(process.env.EVSYNC_RELIABILITY_SEED ?? 20240611);

let sim: Simulator;
let dir: string;

/** A rebuild of every table from the warehouse's archive would change nothing. */
async function expectRebuiltEqual(db: string, context: string): Promise<void> {
  const warehouse = await Warehouse.open(db);
  try {
    const { changes } = await rebuild({ live: warehouse, streams: null, dryRun: true });
    expect(changes.length, context).toBeGreaterThanOrEqual(STREAM_LIST.length);
    for (const c of changes) expect(c, context).toMatchObject({ added: 0, changed: 0, removed: 0 });
  } finally {
    await warehouse.close();
  }
}
/** List calls and pages of an uninterrupted run. */
let reference: { listCalls: number; pages: number };

function runner(db: string) {
  const account = sim.accounts[0]!;
  return spawnSyncChild({
    baseUrl: sim.baseUrl,
    clientId: account.clientId,
    clientSecret: account.clientSecret,
    db,
    streams: STREAMS,
  });
}

beforeAll(async () => {
  // Unthrottled: many trials would otherwise use up the 2000-credit window and wait 10 minutes for the next one.
  sim = await startSimulator({
    size: 'tiny',
    seed: 7,
    control: true,
    rateLimit: { credits: 10_000_000, windowSeconds: 600 },
  });
  dir = mkdtempSync(join(tmpdir(), 'evsync-crash-'));
  sim.resetCounters();
  let pages = 0;
  const run = runner(join(dir, 'reference.duckdb'));
  run.child.stdout!.on('data', (d: Buffer) => {
    pages += d
      .toString()
      .split('\n')
      .filter((l) => l.startsWith('page ')).length;
  });
  const done = await run.done;
  expect(done.code).toBe(0);
  reference = { listCalls: sim.counters().listCalls, pages };
}, 120_000);

afterAll(async () => {
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('crash and resume', () => {
  it(`SIGKILL at random points over ${TRIALS} trials: the rerun ends equal, extra list calls <= pages in flight`, async () => {
    const random = seeded(SEED);
    expect(reference.pages).toBeGreaterThan(3);
    for (let trial = 0; trial < TRIALS; trial++) {
      const db = join(dir, `trial-${trial}.duckdb`);
      const kills = 1 + Math.floor(random() * MAX_KILLS);
      const where: string[] = [];
      sim.resetCounters();
      let killed = 0;
      let last: Awaited<ReturnType<typeof runner>['done']> | null = null;
      for (let k = 0; k < kills && last === null; k++) {
        const run = runner(db);
        const afterPages = 1 + Math.floor(random() * (reference.pages - 2));
        const delayMs = Math.floor(random() * 120);
        where.push(`run ${k + 1}: kill after ${afterPages} pages + ${delayMs} ms`);
        const finished = await Promise.race([run.pages(afterPages).then(() => false), run.done.then(() => true)]);
        if (!finished) {
          await new Promise((r) => setTimeout(r, delayMs));
          run.child.kill('SIGKILL');
        }
        const end = await run.done.catch((e: Error) => {
          throw new Error(`trial ${trial} (seed ${SEED}): ${where.join('; ')}: ${e.message}`);
        });
        if (end.signal === 'SIGKILL') killed += 1;
        // A run that got to the end before its kill point is the last one: another would be a new backfill.
        else last = end;
        where.push(end.signal ?? `exit ${end.code}`);
      }
      last ??= await runner(db).done.catch((e: Error) => {
        throw new Error(`trial ${trial} (seed ${SEED}): ${where.join('; ')}; final run: ${e.message}`);
      });
      const context = `trial ${trial} (seed ${SEED}): ${where.join('; ')}`;
      expect(last.code, context).toBe(0);
      expect(last.result?.status, context).toBe('done');

      const extra = sim.counters().listCalls - reference.listCalls;
      expect(extra, context).toBeLessThanOrEqual(killed * IN_FLIGHT_PAGES);

      await expectFileEqualToSource(sim, db, STREAM_LIST);
      // The archive lost nothing the warehouse holds, kills included: rebuilt from it, every table is the same.
      await expectRebuiltEqual(db, context);
    }
  }, 600_000);
});

describe('a chain of interrupted runs', () => {
  // A run that resumes another carries the first run's start forward (originStartedAt in src/sync/runs.ts): before
  // that, scopes completed by an earlier run of the chain looked older than the last run's start and were re-read.
  it('two partial runs then a complete one spend what one uninterrupted run spends', async () => {
    const { startHarness } = await import('../helpers/harness.js');
    const { runSync } = await import('../../src/sync/index.js');
    const once = await startHarness({ seed: 7 });
    const chain = await startHarness({ seed: 7 });
    try {
      const options = { mode: 'backfill' as const, streams: STREAMS, lagSeconds: 0 };
      const whole = await runSync(once.client(), once.warehouse, options);
      expect(whole.status).toBe('done');
      const first = await runSync(chain.client({ runBudget: 61 }), chain.warehouse, options);
      const second = await runSync(chain.client({ runBudget: 61 }), chain.warehouse, options);
      const third = await runSync(chain.client(), chain.warehouse, options);
      expect([first.status, second.status, third.status]).toEqual(['partial', 'partial', 'done']);
      expect(second.resumed).toBe(first.runId);
      expect(third.resumed).toBe(second.runId);
      await expectEqualToSource(chain.sim, chain.warehouse, STREAM_LIST);
      expect(first.credits.list + second.credits.list + third.credits.list).toBe(whole.credits.list);
    } finally {
      await once.close();
      await chain.close();
    }
  });
});
