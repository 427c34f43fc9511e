/**
 * Does `plan` price what the run then spends? On `small` and `medium` (core streams):
 * (1) from an empty warehouse, `plan --backfill --count`, then the backfill (which resumes the counted pages);
 * (2) after that backfill, `plan --backfill` without --count (no call), then a second backfill;
 * (3) from another empty warehouse, `plan --backfill --estimate` (the events list, page 1 of the account streams and
 *     of every per-event stream on 3 events, the others extrapolated), then the backfill that resumes it, at the
 *     service's limit of 2,000 credits in windows compressed to 30 s: the estimated credits against the spend (target
 *     within 25%) and the estimated time against the backfill's wall time; the time at 10-minute windows follows
 *     from the same rule.
 * Figures: planned / spent for each (targets within 10%, 25% for the estimate), and counting + backfill / a backfill
 * alone (target 1.00: no page bought twice). (1) and (2) run unthrottled.
 *
 *   npx tsx bench/plan-accuracy.ts [--quick] [--sizes small,medium] [--only count,estimate]
 */
import { parseArgs } from 'node:util';
import type { ApiClient } from '../src/api/index.js';
import { type SimulatorOptions, type SimulatorSize, startSimulator } from '../src/simulator/index.js';
import { planSync, runSync, type SyncOptions } from '../src/sync/index.js';
import { timeAtLimit } from '../src/sync/plan-time.js';
import { Warehouse } from '../src/warehouse/index.js';
import { type BenchOptions, figure, round, type ScenarioResult, seconds, stderrLog, tempDir } from './lib.js';
import { simulatorClient } from './sim-client.js';

const UNTHROTTLED = { credits: 1_000_000, windowSeconds: 600 };
/** The service's limit, in windows of 30 s instead of 10 minutes (the headers say the limit, not the window). */
const REAL_LIMIT_FAST = { credits: 2000, windowSeconds: 30 };
const CORE: SyncOptions = { mode: 'backfill', streams: 'core', lagSeconds: 0 };

const ratio = (planned: number, spent: number) => round(planned / Math.max(1, spent), 3);
const error = (planned: number, spent: number) => round(Math.abs(planned - spent) / Math.max(1, spent), 3);

/** A simulator of `size`, a warehouse, and clients of its first account configured with its rate limit. */
async function bench(size: SimulatorSize, rateLimit: NonNullable<SimulatorOptions['rateLimit']>) {
  const sim = await startSimulator({ size, seed: 1, rateLimit });
  const tmp = tempDir();
  const clients: ApiClient[] = [];
  const client = () => {
    const c = simulatorClient(sim, {
      rateLimit: { limit: rateLimit.credits, windowMs: rateLimit.windowSeconds * 1000 },
    });
    clients.push(c);
    return c;
  };
  const warehouse = await Warehouse.open(tmp.path('plan.duckdb'));
  const close = async () => {
    for (const c of clients) await c.close();
    await warehouse.close();
    await sim.close();
    tmp.remove();
  };
  return { sim, client, warehouse, close };
}

async function countScenarios(size: SimulatorSize, o: BenchOptions): Promise<ScenarioResult[]> {
  const { sim, client, warehouse, close } = await bench(size, UNTHROTTLED);
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
    await close();
  }
}

async function estimateScenarios(size: SimulatorSize, o: BenchOptions): Promise<ScenarioResult[]> {
  const { sim, client, warehouse, close } = await bench(size, REAL_LIMIT_FAST);
  try {
    o.log(`plan/${size}: plan --backfill --estimate on an empty warehouse, at 2000 credits per 30 s`);
    const report = await planSync(client(), warehouse, { ...CORE, estimate: {} });
    const estimateCredits = sim.counters().credits;
    const e = report.estimate!;
    o.log(`plan/${size}: the backfill it priced`);
    const started = performance.now();
    const backfill = await runSync(client(), warehouse, CORE);
    const wallMs = performance.now() - started;
    const spent = backfill.credits.list;
    // The same rule at the service's real windows of 10 minutes, from the start of a window.
    const real = { ...report.rateLimit, windowSeconds: 600, resetInSeconds: 600 };
    const atReal = timeAtLimit(report.totalCredits, report.totalCalls, real, 2);
    const actualAtReal = timeAtLimit(spent, spent / 10, real, 2);
    return [
      figure(
        `plan/${size}`,
        '|plan --estimate - backfill spent| / spent',
        error(report.totalCredits, spent),
        0.25,
        '<=',
        `estimated ${report.totalCredits} (range ${e.lowCredits}-${e.highCredits}; ${e.sampled.length} of ${e.events} events counted, the others extrapolated by ${e.by}) after spending ${report.spentCredits} to estimate (${report.spentListCalls} list calls + token; simulator counted ${estimateCredits}); the backfill resumed it (${backfill.resumed === report.countRunId}) and spent ${spent} list credits, ${spent + report.spentListCalls * 10} with the estimate's pages`,
      ),
      figure(
        `plan/${size}`,
        'estimated time / backfill wall at 2000 credits per 30 s',
        ratio(report.estimatedSeconds, wallMs / 1000),
        null,
        null,
        `estimated ${report.estimatedSeconds} s (${report.windows} windows) at the reported limit of ${report.rateLimit.limit} (${report.rateLimit.limitSource}); the backfill took ${seconds(wallMs)}; at 10-minute windows the same rule says ${seconds(atReal.seconds * 1000)} for the estimate, ${seconds(actualAtReal.seconds * 1000)} for what was spent`,
      ),
    ];
  } finally {
    await close();
  }
}

export async function planAccuracy(
  o: BenchOptions,
  only: { sizes?: SimulatorSize[]; scenarios?: string[] } = {},
): Promise<ScenarioResult[]> {
  const sizes: SimulatorSize[] = only.sizes ?? (o.quick ? ['small'] : ['small', 'medium']);
  const scenarios = only.scenarios ?? ['count', 'estimate'];
  const out: ScenarioResult[] = [];
  for (const size of sizes) {
    if (scenarios.includes('count')) out.push(...(await countScenarios(size, o)));
    if (scenarios.includes('estimate')) out.push(...(await estimateScenarios(size, o)));
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { quick: { type: 'boolean', default: false }, sizes: { type: 'string' }, only: { type: 'string' } },
  });
  const list = (v: string | undefined) => v?.split(',').map((s) => s.trim());
  const started = performance.now();
  const results = await planAccuracy(
    { quick: values.quick === true, log: stderrLog },
    { sizes: list(values.sizes) as SimulatorSize[] | undefined, scenarios: list(values.only) },
  );
  stderrLog(`plan accuracy: ${seconds(performance.now() - started)}`);
  console.log(JSON.stringify(results, null, 2));
}
