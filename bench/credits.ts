/**
 * Scenarios 1, 2 and 6: credits of a full backfill of `core`, then of an incremental after a known set of
 * mutations, each against its lower bound from the simulator's ground truth; and the naive client's credits for
 * the same two reads. The simulator is unthrottled so that only credits, not waits, are measured.
 */
import { STREAM_SETS } from '../connectors/index.js';
import type { ApiClient } from '../src/api/index.js';
import { type Simulator, type SimulatorSize, startSimulator } from '../src/simulator/index.js';
import { runSync, type SyncResult } from '../src/sync/index.js';
import { Warehouse } from '../src/warehouse/index.js';
import { backfillBound, eventIdsOf, incrementalBound, ScopeCounter } from './bounds.js';
import { type BenchOptions, figure, round, type ScenarioResult, seconds, tempDir } from './lib.js';
import { naiveSync } from './naive-client.js';
import { simulatorClient } from './sim-client.js';

const UNTHROTTLED = { credits: 10_000_000, windowSeconds: 600 };
const TOKEN_TTL_SECONDS = 1800;
const CORE = STREAM_SETS.core;

/** Token calls a run of this length cannot avoid: one, plus one per full token lifetime it outlasts. */
function tokensNeeded(wallMs: number): number {
  return 1 + Math.floor(wallMs / (TOKEN_TTL_SECONDS * 1000));
}

/**
 * Current rows per table against the source's record count; names of the tables that differ. Records deleted at
 * the source are left out on our side: finding them takes a delete sweep, which the scheduled sweeps do with their
 * own credits (not part of what an incremental's changes need).
 */
async function countMismatches(sim: Simulator, warehouse: Warehouse): Promise<string[]> {
  const differ: string[] = [];
  for (const name of CORE) {
    const { records, deletedIds } = sim.truth(name);
    const gone = deletedIds.length > 0 ? ` AND id NOT IN (${deletedIds.join(',')})` : '';
    const r = await warehouse.query(`SELECT count(*) AS n FROM "${name}" WHERE _deleted_at IS NULL${gone}`);
    if (Number(r.rows[0]?.n) !== records.length) differ.push(name);
  }
  return differ;
}

function client(sim: Simulator): ApiClient {
  return simulatorClient(sim, {
    rateLimit: { limit: UNTHROTTLED.credits, windowMs: UNTHROTTLED.windowSeconds * 1000 },
  });
}

/** Scenario 6: the naive client's credits for a read of the current state, against the `ours` our run spent. */
async function naiveFigure(sim: Simulator, read: string, ours: number): Promise<ScenarioResult> {
  sim.resetCounters();
  const r = await naiveSync({ baseUrl: sim.baseUrl, encoded: sim.accounts[0]!.encoded, streams: CORE });
  const credits = sim.counters().credits;
  return figure(
    `naive client: ${read}`,
    'credits (contrast)',
    credits,
    null,
    null,
    `${r.calls} list calls; ours ${ours}: the naive client spends ${round(credits / ours, 1)}x`,
  );
}

function syncFailed(label: string, r: SyncResult): Error | null {
  if (r.status === 'done' && r.errors.length === 0) return null;
  return new Error(`${label}: sync ended ${r.status}: ${r.errors.slice(0, 3).join('; ')}`);
}

async function onSize(size: SimulatorSize, mutations: number, o: BenchOptions): Promise<ScenarioResult[]> {
  const out: ScenarioResult[] = [];
  const sim = await startSimulator({ size, seed: 1, rateLimit: UNTHROTTLED, tokenTtlSeconds: TOKEN_TTL_SECONDS });
  const tmp = tempDir();
  const warehouse = await Warehouse.open(tmp.path('bench.duckdb'));
  try {
    // 1. Full backfill.
    o.log(`credits/${size}: backfill of core`);
    const c1 = client(sim);
    const t0 = Date.now();
    const backfill = await runSync(c1, warehouse, { mode: 'backfill', streams: 'core', lagSeconds: 0 });
    const wall1 = Date.now() - t0;
    await c1.close();
    const failed1 = syncFailed('backfill', backfill);
    if (failed1) throw failed1;
    const spent1 = sim.counters();
    const events = eventIdsOf(sim);
    const counter = new ScopeCounter(sim.baseUrl, sim.accounts[0]!.encoded);
    const bound1 = await backfillBound(sim, counter, CORE, events);
    const tokens1 = tokensNeeded(wall1);
    const mismatch1 = await countMismatches(sim, warehouse);
    out.push(
      figure(
        `credits: backfill core (${size})`,
        'spent / lower bound',
        round(spent1.credits / (bound1.list + tokens1), 4),
        1,
        '==',
        `spent ${spent1.credits} (list ${spent1.listCalls} calls, token ${spent1.tokenCalls}, other ${spent1.otherCalls}); ` +
          `bound ${bound1.list} list over ${bound1.scopes} scopes + ${tokens1} token; ${seconds(wall1)}` +
          (mismatch1.length ? `; ROW COUNTS DIFFER: ${mismatch1.join(',')}` : '; row counts equal the source'),
      ),
    );
    if (mismatch1.length) out[out.length - 1]!.ok = false;

    // 6a. The naive client reading the same state.
    o.log(`credits/${size}: naive client, full read`);
    out.push(await naiveFigure(sim, `backfill core (${size})`, spent1.credits));

    // 2. Incremental after a known set of mutations.
    o.log(`credits/${size}: ${mutations} mutations, then incremental`);
    const summary = sim.mutate(mutations);
    sim.advanceClock(2);
    sim.resetCounters();
    const c2 = client(sim);
    const t1 = Date.now();
    // pastEventPollHours 0: every scope is polled, so the bound does not depend on the engine's skipping policy.
    const incremental = await runSync(c2, warehouse, {
      mode: 'incremental',
      streams: 'core',
      lagSeconds: 0,
      pastEventPollHours: 0,
    });
    const wall2 = Date.now() - t1;
    await c2.close();
    const failed2 = syncFailed('incremental', incremental);
    if (failed2) throw failed2;
    const spent2 = sim.counters();
    const window = { from: backfill.signpost, to: incremental.signpost };
    const bound2 = await incrementalBound(sim, counter, CORE, events, window);
    const tokens2 = tokensNeeded(wall2);
    const mismatch2 = await countMismatches(sim, warehouse);
    const changes = (m: Record<string, number>) => Object.values(m).reduce((a, b) => a + b, 0);
    out.push(
      figure(
        `credits: incremental core after ${mutations} mutations (${size})`,
        'spent / what the changes need',
        round(spent2.credits / (bound2.list + tokens2), 4),
        1,
        '==',
        `spent ${spent2.credits} (list ${spent2.listCalls}, token ${spent2.tokenCalls}, other ${spent2.otherCalls}); ` +
          `bound ${bound2.list} list over ${bound2.scopes} scopes + ${tokens2} token; window [${window.from}, ${window.to}); ` +
          `${changes(summary.inserted)} inserted, ${changes(summary.updated)} updated, ${changes(summary.deleted)} deleted; ` +
          seconds(wall2) +
          (mismatch2.length ? `; ROW COUNTS DIFFER: ${mismatch2.join(',')}` : '; row counts equal the source'),
      ),
    );
    if (mismatch2.length) out[out.length - 1]!.ok = false;

    // 6b. The naive client has no state: its "incremental" is another full read.
    o.log(`credits/${size}: naive client, second run`);
    out.push(await naiveFigure(sim, `incremental core after ${mutations} mutations (${size})`, spent2.credits));
  } finally {
    await warehouse.close().catch(() => undefined);
    await sim.close();
    tmp.remove();
  }
  return out;
}

export async function creditScenarios(o: BenchOptions): Promise<ScenarioResult[]> {
  const sizes: [SimulatorSize, number][] = o.quick
    ? [['small', 200]]
    : [
        ['small', 200],
        ['medium', 1000],
      ];
  const out: ScenarioResult[] = [];
  for (const [size, mutations] of sizes) out.push(...(await onSize(size, mutations, o)));
  return out;
}
