/**
 * Freshness with webhooks (DESIGN.md, "Limits to reach"): how long a change at the service takes to reach the
 * warehouse, and at what price, (a) with scheduled polling and (b) with `evsync serve`, both under the real limit of
 * 2000 credits per 600 s, while the simulator changes the streams webhooks cover steadily.
 *
 *   npx tsx bench/freshness.ts            medium, 5 changes/s for 5 minutes per scenario (about an hour in all)
 *   npx tsx bench/freshness.ts --quick    small, 5 changes/s for 1 minute
 *   (also `npm run bench -- --only freshness`; `--only poll,serve,faults` and `--keep` when run directly)
 *
 * Per scenario: a warehouse backfilled once from an unthrottled simulator of the same seed (so the limit is spent on
 * the scenario only), copied and bound to the scenario's own simulator; `evsync schedule` or `evsync serve` in a
 * process of its own (the CLI as a user runs it); changes at `rate`/s through the simulator's mutator for `seconds`;
 * the deliveries drain and the process stops. Each window runs alone on the machine. Then every scenario's final
 * reconciliation (incremental windows and delete sweeps; several credit windows long) runs side by side, and each
 * warehouse is compared with its source. Freshness: see freshness-measure.ts. Credits per 1,000 changes count what
 * the service charged from the first change to the drained end (the set-up and the final reconciliation, the same
 * for both, are reported apart). (b) runs twice: with the simulator's default deliveries (no injected fault: retries,
 * timeouts, ordering as they are) and with the documented fault mix (5% each of dropped, duplicated, reordered and
 * 2 s delayed deliveries), whose dropped deliveries only reconciliation can find.
 */
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { ApiClient } from '../src/api/index.js';
import {
  type CallCounters,
  parseFaults,
  type Simulator,
  type SimulatorSize,
  startSimulator,
  type WebhookChange,
} from '../src/simulator/index.js';
import { installWebhooks } from '../src/sync/capture/install.js';
import { capturedObjects } from '../src/sync/capture/objects.js';
import { runSync } from '../src/sync/index.js';
import { Warehouse } from '../src/warehouse/index.js';
import { changeSteadily } from './change-stream.js';
import { cli, evsyncEnv, ROOT, serveListening, stopChild } from './cli-process.js';
import { differences, freshness } from './freshness-measure.js';
import { type BenchOptions, figure, round, type ScenarioResult, seconds, stderrLog, tempDir } from './lib.js';
import { machineInfo } from './machine.js';
import { simulatorClient } from './sim-client.js';
import { withSimulatorAndWarehouse } from './sim-warehouse.js';

const STREAMS = capturedObjects().map((c) => c.stream.name);
const LIMIT = { credits: 2000, windowSeconds: 600 };
const SECRET = 'bench-freshness-secret-5e0c1a7b9d2f';
/** The fault mix the simulator documents (README, "The simulator"). */
const DOCUMENTED_FAULTS = 'hook-drop=0.05,hook-dup=0.05,hook-reorder=0.05,hook-delay=0.05:2000';

interface Plan {
  size: SimulatorSize;
  seconds: number;
  rate: number;
}

interface Outcome {
  label: string;
  changes: number;
  credits: number;
  creditsPer1000: number;
  setupCredits: number;
  reconcileCredits: number;
  rejected429: number;
  freshness: Awaited<ReturnType<typeof freshness>>;
  differences: Record<string, number>;
  dropped: number;
  /** Rows the final reconciliation wrote, per stream (what capture or polling had not brought). */
  reconciled: Record<string, number>;
  wallSeconds: number;
}

function client(sim: Simulator, unthrottled = false): ApiClient {
  return simulatorClient(sim, {
    ...(unthrottled ? { rateLimit: { limit: 10_000_000, windowMs: 600_000 } } : {}),
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Backfills the streams from an unthrottled simulator of the same seed (the scenarios start from this state). */
async function backfill(plan: Plan, db: string, log: (m: string) => void): Promise<void> {
  const options = { size: plan.size, seed: 1, rateLimit: { credits: 10_000_000, windowSeconds: 600 } };
  await withSimulatorAndWarehouse(options, db, async (sim, warehouse) => {
    const c = client(sim, true);
    try {
      const t = Date.now();
      const r = await runSync(c, warehouse, { mode: 'backfill', streams: STREAMS.join(',') });
      if (r.status !== 'done') throw new Error(`backfill ended ${r.status}: ${r.errors.join('; ')}`);
      log(
        `freshness: backfill of ${STREAMS.length} streams (${plan.size}): ${r.credits.total} credits, ${seconds(Date.now() - t)}`,
      );
    } finally {
      await c.close();
    }
  });
}

/** A scenario whose window is over: what its final reconciliation and the figures need. */
interface Measured {
  label: string;
  sim: Simulator;
  db: string;
  changes: WebhookChange[];
  setup: CallCounters;
  window: CallCounters;
  dropped: number;
  started: number;
}

/**
 * The measured part of a scenario, run alone on the machine: its simulator (same seed, so the same state as the
 * backfill; the copy of the warehouse is bound to its address), the evsync process, the changes, the drain.
 */
async function measure(
  mode: 'poll' | 'serve',
  faults: string | null,
  plan: Plan,
  db: string,
  dir: string,
  log: (m: string) => void,
): Promise<Measured> {
  const label =
    mode === 'poll' ? '(a) scheduled polling' : `(b) serve with webhooks${faults ? ', documented faults' : ''}`;
  const started = Date.now();
  const sim = await startSimulator({ size: plan.size, seed: 1, rateLimit: LIMIT });
  if (faults) sim.setFaults(parseFaults(faults));
  {
    // One account at another address: the same data, so the binding follows it (no call is made here).
    const c = client(sim);
    const w = await Warehouse.open(db);
    await w.account.bind({ baseUrl: c.baseUrl, clientId: c.clientId });
    await w.close();
    await c.close();
  }
  const env = evsyncEnv(sim, db, SECRET);
  const logFile = join(dir, `${mode}${faults ? '-faults' : ''}.log`);
  let child: ChildProcess;
  let metricsUrl: string | null = null;
  if (mode === 'serve') {
    // The warehouse was just backfilled from this very state: nothing to catch up on.
    child = cli(
      [
        'serve',
        '--listen',
        '127.0.0.1:0',
        '--admin-listen',
        '127.0.0.1:0',
        '--streams',
        STREAMS.join(','),
        '--no-catch-up',
        '--json',
      ],
      env,
      dir,
      logFile,
    );
    const info = await serveListening(child, logFile);
    metricsUrl = info.metrics;
    const installer = client(sim);
    await installWebhooks(installer, {
      url: info.listening,
      secret: SECRET,
      secretHeader: 'X-Evsync-Secret',
      groupName: 'evsync',
      objects: capturedObjects().map((c) => c.object),
      paths: { webhooks: '/webhooks', groups: '/webhook-groups' },
    });
    await installer.close();
  } else {
    child = cli(
      ['schedule', '--cron', '* * * * *', '--run-now', '--streams', STREAMS.join(','), '--json'],
      env,
      dir,
      logFile,
    );
  }
  let died: string | null = null;
  child.once('exit', (code, signal) => {
    if (signal !== 'SIGTERM')
      died = `the evsync process exited (${code ?? signal}) during the scenario; see ${logFile}`;
  });
  const setup = sim.counters();
  const since = sim.webhooks.changes().at(-1)?.seq ?? 0;
  log(`freshness: ${label}: ${plan.rate} changes/s for ${plan.seconds} s`);
  await changeSteadily(sim, plan.rate, plan.seconds, STREAMS);
  if (metricsUrl) {
    await sim.webhooks.idle();
    const url = metricsUrl;
    while (!(await (await fetch(url)).text()).includes('\nevsync_webhook_pending 0\n')) await sleep(100);
  }
  const window = sim.counters();
  if (died) throw new Error(died);
  await stopChild(child);
  const changes = sim.webhooks.changes(since).filter((c) => c.object !== null && STREAMS.includes(c.stream));
  const dropped = sim.webhooks.deliveries().filter((d) => d.status === 'dropped').length;
  return { label, sim, db, changes, setup, window, dropped, started };
}

/**
 * The final reconciliation (incremental windows, delete sweeps, every event), then the figures. Its credits are not
 * the scenario's; under the real limit it takes several windows, so the three scenarios' run side by side, after
 * every measured window.
 */
async function finish(m: Measured, log: (m: string) => void): Promise<Outcome> {
  const { label, sim, db, changes, setup, window, dropped, started } = m;
  // The windows end 5 s before the service's now.
  await sleep(6000);
  const warehouse = await Warehouse.open(db);
  const c = client(sim);
  try {
    log(`freshness: ${label}: final reconciliation`);
    const reconciled: Record<string, number> = {};
    // A run the stopped process left partial is resumed first (its signpost): then one more reads up to now.
    for (let i = 0; i < 3; i++) {
      const r = await runSync(c, warehouse, {
        mode: 'incremental',
        streams: STREAMS.join(','),
        deletes: true,
        pastEventPollHours: 0,
      });
      if (r.status !== 'done') throw new Error(`final reconciliation ended ${r.status}: ${r.errors.join('; ')}`);
      for (const [name, st] of Object.entries(r.streams)) {
        const n = st.inserted + st.updated + st.deleted;
        if (n > 0 && STREAMS.includes(name)) reconciled[name] = (reconciled[name] ?? 0) + n;
      }
      if (r.resumed === null) break;
    }
    const after = sim.counters();
    const f = await freshness(warehouse, changes, STREAMS);
    const credits = window.credits - setup.credits;
    return {
      label,
      changes: changes.length,
      credits,
      creditsPer1000: round((credits / Math.max(1, changes.length)) * 1000, 1),
      setupCredits: setup.credits,
      reconcileCredits: after.credits - window.credits,
      rejected429: after.rejected429,
      freshness: f,
      differences: await differences(sim, warehouse, STREAMS),
      dropped,
      reconciled,
      wallSeconds: Math.round((Date.now() - started) / 1000),
    };
  } finally {
    await c.close();
    await warehouse.close();
    await sim.close();
  }
}

function figures(o: Outcome, targets: boolean): ScenarioResult[] {
  const f = o.freshness;
  const found = Object.values(o.reconciled).reduce((a, b) => a + b, 0);
  const detail = `${o.changes} changes, ${f.measured} records measured (their last change), ${f.missing} not shown; p50 ${f.p50} s, max ${f.max} s, ${Math.round(f.within5s * 100)}% within 5 s; ${o.credits} credits in the window, ${o.setupCredits} to set up, ${o.reconcileCredits} for the final reconciliation, which wrote ${found} rows; ${o.dropped} deliveries dropped; ${o.wallSeconds} s`;
  const equal = Object.values(o.differences).reduce((a, b) => a + b, 0);
  return [
    figure(`freshness: ${o.label}`, 'p95 seconds', f.p95, targets ? 5 : null, targets ? '<=' : null, detail),
    figure(
      `freshness: ${o.label}`,
      'credits per 1,000 changes',
      o.creditsPer1000,
      targets ? 150 : null,
      targets ? '<=' : null,
    ),
    figure(
      `freshness: ${o.label}`,
      'rows differing from the source after the final reconciliation',
      equal,
      targets ? 0 : null,
      targets ? '==' : null,
      equal ? JSON.stringify(o.differences) : undefined,
    ),
    figure(`freshness: ${o.label}`, '429 answers', o.rejected429, targets ? 0 : null, targets ? '==' : null),
  ];
}

const SCENARIOS = { poll: ['poll', null], serve: ['serve', null], faults: ['serve', DOCUMENTED_FAULTS] } as const;

export async function freshnessScenarios(
  o: BenchOptions,
  only: readonly (keyof typeof SCENARIOS)[] = ['poll', 'serve', 'faults'],
  keep = false,
): Promise<ScenarioResult[]> {
  const plan: Plan = o.quick ? { size: 'small', seconds: 60, rate: 5 } : { size: 'medium', seconds: 300, rate: 5 };
  const tmp = tempDir('evsync-freshness-');
  try {
    const base = tmp.path('base.duckdb');
    await backfill(plan, base, o.log);
    const measured: Measured[] = [];
    try {
      for (const [mode, faults] of only.map((k) => SCENARIOS[k])) {
        const db = tmp.path(`${mode}${faults ? '-faults' : ''}.duckdb`);
        copyFileSync(base, db);
        measured.push(await measure(mode, faults, plan, db, tmp.dir, o.log));
      }
    } catch (err) {
      await Promise.all(measured.map((x) => x.sim.close()));
      throw err;
    }
    const outcomes = await Promise.all(measured.map((x) => finish(x, o.log)));
    const results = outcomes.flatMap((x) => figures(x, x.label.startsWith('(b)')));
    const out = join(ROOT, 'bench', 'results');
    mkdirSync(out, { recursive: true });
    const report = {
      machine: machineInfo(),
      mode: o.quick ? 'quick' : 'full',
      plan,
      streams: STREAMS,
      outcomes,
      results,
    };
    // Only a run of every scenario replaces the stored figures.
    if (only.length === Object.keys(SCENARIOS).length) {
      writeFileSync(
        join(out, o.quick ? 'freshness-quick.json' : 'freshness.json'),
        `${JSON.stringify(report, null, 2)}\n`,
      );
    } else o.log(`freshness: ${JSON.stringify(outcomes)}`);
    return results;
  } finally {
    if (keep) o.log(`freshness: kept ${tmp.dir}`);
    else tmp.remove();
  }
}

// Run directly: `npx tsx bench/freshness.ts [--quick]`.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      keep: { type: 'boolean', default: false },
    },
  });
  const only = (values.only?.split(',') ?? Object.keys(SCENARIOS)) as (keyof typeof SCENARIOS)[];
  for (const k of only) if (!(k in SCENARIOS)) throw new Error(`--only: ${k}? (${Object.keys(SCENARIOS).join(', ')})`);
  const results = await freshnessScenarios(
    { quick: values.quick === true, log: stderrLog },
    only,
    values.keep === true,
  );
  for (const r of results) {
    process.stdout.write(
      `${r.ok ? 'ok  ' : 'MISS'} ${r.name}: ${r.metric} = ${r.value}${r.target === null ? '' : ` (target ${r.op} ${r.target})`}\n`,
    );
    if (r.detail) process.stdout.write(`     ${r.detail}\n`);
  }
  if (!existsSync(join(ROOT, 'bench', 'results'))) process.exitCode = 1;
}
