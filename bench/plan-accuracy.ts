/**
 * Does `plan` price what the run then spends? On `small` and `medium` (core streams, unthrottled simulator):
 * (1) from an empty warehouse, `plan --backfill --count`, then the backfill (which resumes the counted pages);
 * (2) after that backfill, `plan --backfill` without --count (no call), then a second backfill.
 * Figures: planned / spent for each (target within 10%), and counting + backfill / a backfill alone (target 1.00:
 * no page bought twice). Run alone with `npx tsx bench/plan-accuracy.ts [--quick]`.
 */
import { ApiClient } from '../src/api/index.js';
import { type SimulatorSize, startSimulator } from '../src/simulator/index.js';
import { planSync, runSync, type SyncOptions } from '../src/sync/index.js';
import { Warehouse } from '../src/warehouse/index.js';
import { type BenchOptions, figure, round, type ScenarioResult, stderrLog, tempDir } from './lib.js';

const UNTHROTTLED = { credits: 1_000_000, windowSeconds: 600 };
const CORE: SyncOptions = { mode: 'backfill', streams: 'core', lagSeconds: 0 };

async function onSize(size: SimulatorSize, o: BenchOptions): Promise<ScenarioResult[]> {
  const sim = await startSimulator({ size, seed: 1, rateLimit: UNTHROTTLED });
  const tmp = tempDir();
  const clients: ApiClient[] = [];
  const client = () => {
    const a = sim.accounts[0]!;
    const c = new ApiClient({
      baseUrl: sim.baseUrl,
      credentials: { clientId: a.clientId, clientSecret: a.clientSecret },
      rateLimit: { limit: UNTHROTTLED.credits, windowMs: UNTHROTTLED.windowSeconds * 1000 },
    });
    clients.push(c);
    return c;
  };
  const warehouse = await Warehouse.open(tmp.path('plan.duckdb'));
  try {
    o.log(`plan/${size}: plan --backfill --count on an empty warehouse`);
    const counted = await planSync(client(), warehouse, { ...CORE, count: true });
    const countCalls = sim.counters().listCalls;
    o.log(`plan/${size}: the backfill it priced`);
    const first = await runSync(client(), warehouse, CORE);
    const together = sim.counters().listCalls;
    o.log(`plan/${size}: plan --backfill (no call), then a second backfill`);
    const dry = await planSync(client(), warehouse, CORE);
    const before = sim.counters().listCalls;
    const second = await runSync(client(), warehouse, CORE);
    const secondCalls = sim.counters().listCalls - before;
    // The second backfill re-reads everything the way a backfill alone from empty would: the reference cost.
    const ratio = (planned: number, spent: number) => round(planned / Math.max(1, spent), 3);
    const error = (planned: number, spent: number) => round(Math.abs(planned - spent) / Math.max(1, spent), 3);
    const rows: [string, number, number, string][] = [
      [
        '|plan --count - backfill spent| / spent',
        error(counted.totalCredits, first.credits.list),
        0.1,
        `planned ${counted.totalCredits} after counting ${counted.spentCredits}; the backfill spent ${first.credits.list} (resumed ${first.resumed === counted.countRunId})`,
      ],
      [
        'count + backfill calls / a backfill alone',
        ratio(together, secondCalls),
        1,
        `${countCalls} counting + ${together - countCalls} backfill calls vs ${secondCalls} for a full backfill`,
      ],
      [
        '|plan (no --count, after a backfill) - next backfill spent| / spent',
        error(dry.totalCredits, second.credits.list),
        0.1,
        `planned ${dry.totalCredits}, spent ${second.credits.list}`,
      ],
    ];
    return rows.map(([metric, value, target, detail]) => figure(`plan/${size}`, metric, value, target, '<=', detail));
  } finally {
    for (const c of clients) await c.close();
    await warehouse.close();
    await sim.close();
    tmp.remove();
  }
}

export async function planAccuracy(o: BenchOptions): Promise<ScenarioResult[]> {
  const sizes: SimulatorSize[] = o.quick ? ['small'] : ['small', 'medium'];
  const out: ScenarioResult[] = [];
  for (const size of sizes) out.push(...(await onSize(size, o)));
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const results = await planAccuracy({ quick: process.argv.includes('--quick'), log: stderrLog });
  console.log(JSON.stringify(results, null, 2));
}
