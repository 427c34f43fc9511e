/**
 * What the daemon costs (issue 23, "Done when"): `evsync serve` as a user runs it, in a process of its own, against
 * the simulator (in this process: its counters, mutator, ground truth and delivery journal).
 *
 *   npm run bench -- --only daemon [--quick]      (not in the default set: about 10 minutes in full)
 *   npx tsx bench/daemon.ts [--quick] [--only start,burst,latency]
 *
 * 1. start: the list calls serve spends at start (its catch-up) right after a `sync`, beside one pass over the
 *    selected streams (the (stream, scope) items of every event, past ones included) and the delete sweeps owed.
 * 2. burst: changes at the service with serve SIGKILLed after half of them; the service gives up delivering the rest
 *    (2 tries); serve restarted; once it has caught up and applied what it had journaled, the warehouse against the
 *    source for every captured stream, past events included; and the credits the restart spent.
 * 3. latency: see daemon-latency.ts.
 *
 * Credits are counted by the simulator, whose limit is lifted so that no scenario waits for a window.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { SimulatorSize } from '../src/simulator/index.js';
import { ROOT } from './cli-process.js';
import { type DaemonLatency, latencyScenario } from './daemon-latency.js';
import {
  CAPTURED,
  type DaemonBench,
  installWebhooks,
  sleep,
  spent,
  startDaemonBench,
  startServe,
  withWarehouse,
} from './daemon-serve.js';
import { type DifferenceCount, differenceCounts } from './freshness-measure.js';
import { type BenchOptions, figure, type ScenarioResult, seconds, stderrLog } from './lib.js';
import { machineInfo } from './machine.js';

interface SyncJson {
  items: { total: number };
  credits: { list: number };
}

type Cursors = Map<string, { at: string; pages: number }>;

/** Each cursor's last poll or sweep time and its pages (a delete sweep's cursor scope ends in `/sweep`). */
async function cursors(b: DaemonBench): Promise<Cursors> {
  return withWarehouse(b.db, async (w) => {
    const { rows } = await w.query('SELECT stream, scope, last_sweep_at, last_pages FROM _evsync.cursors');
    return new Map(
      rows.map((r) => [
        `${String(r.stream)}|${String(r.scope)}`,
        { at: String(r.last_sweep_at ?? ''), pages: Number(r.last_pages ?? 0) },
      ]),
    );
  });
}

/** The delete sweeps run since `before` was read: how many (stream, scope) and their list calls. */
async function sweepsSince(b: DaemonBench, before: Cursors): Promise<{ items: number; calls: number }> {
  const out = { items: 0, calls: 0 };
  for (const [k, now] of await cursors(b)) {
    if (!k.endsWith('/sweep') || !now.at || now.at === before.get(k)?.at) continue;
    out.items++;
    out.calls += now.pages;
  }
  return out;
}

interface StartOutcome {
  size: SimulatorSize;
  serveList: number;
  serveCredits: number;
  syncItems: number;
  syncList: number;
  sweepItems: number;
  sweepCalls: number;
  catchUpSeconds: number;
}

/**
 * 1. Backfill, one incremental sync over every event (past ones included, as the catch-up polls them; a plain sync
 * polls them once a day), then serve with its default catch-up: what that start spends until `catch-up complete`.
 */
async function startScenario(size: SimulatorSize, log: (m: string) => void): Promise<StartOutcome> {
  const b = await startDaemonBench(size);
  try {
    const streams = ['--streams', CAPTURED.join(',')];
    await b.evsync(['backfill', ...streams]);
    const everyEvent = b.tmp.path('every-event.json');
    writeFileSync(everyEvent, JSON.stringify({ pastEventPollHours: 0 }));
    const sync = JSON.parse(
      (await b.evsync(['--config', everyEvent, 'sync', ...streams, '--json'])).stdout,
    ) as SyncJson;
    const before = await cursors(b);
    const counters = b.sim.counters();
    const t = Date.now();
    const serve = await startServe(b, `start-${size}`);
    await serve.caughtUp();
    const catchUpSeconds = (Date.now() - t) / 1000;
    const used = spent(counters, b.sim.counters());
    await serve.stop();
    const sweeps = await sweepsSince(b, before);
    const out: StartOutcome = {
      size,
      serveList: used.list,
      serveCredits: used.credits,
      syncItems: sync.items.total,
      syncList: sync.credits.list / 10,
      sweepItems: sweeps.items,
      sweepCalls: sweeps.calls,
      catchUpSeconds,
    };
    log(`daemon: start after sync (${size}): ${JSON.stringify(out)}`);
    return out;
  } finally {
    await b.close();
  }
}

function startFigures(o: StartOutcome): ScenarioResult[] {
  return [
    figure(
      `daemon: serve started right after a sync (${o.size})`,
      'list calls until catch-up complete',
      o.serveList,
      o.syncList + o.sweepCalls,
      '<=',
      `${o.serveList} list calls (${o.serveCredits} credits) in ${seconds(o.catchUpSeconds * 1000)}; bound = one pass ` +
        `over the selected streams (the incremental sync just before, every event included: ${o.syncItems} ` +
        `(stream, scope) items, ${o.syncList} list calls) + the delete sweeps owed (${o.sweepItems} (stream, scope), ` +
        `${o.sweepCalls} list calls, as the catch-up recorded them)`,
    ),
  ];
}

interface BurstOutcome {
  changes: number;
  beforeKill: number;
  givenUp: number;
  delivered: number;
  restartList: number;
  restartCredits: number;
  restartSeconds: number;
  pastEventChanges: number;
  differences: Record<string, DifferenceCount>;
  /** For the rows that differ: their changes at the service, what the journal holds of them, their row. */
  evidence?: unknown[];
}

/** Rows as JSON can hold them (DuckDB's BIGINT and TIMESTAMP come back as bigint and Date). */
function plain(rows: readonly Record<string, unknown>[]): unknown {
  return JSON.parse(JSON.stringify(rows, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v)));
}

/** What a reader needs to tell why a row differs: the record's history at the service and in the warehouse. */
async function evidence(b: DaemonBench, diffs: Record<string, DifferenceCount>): Promise<unknown[]> {
  const out: unknown[] = [];
  const changes = b.sim.webhooks.changes();
  const status = new Map(b.sim.webhooks.deliveries().map((d) => [d.id, d.status]));
  await withWarehouse(b.db, async (w) => {
    for (const [stream, d] of Object.entries(diffs)) {
      for (const key of [...d.keys.missing, ...d.keys.extra, ...d.keys.changed]) {
        const id = Number(key);
        const journal = await w.query(
          'SELECT seq, received_at, status, action, datetime, outcome, reason, applied_at FROM _evsync.deliveries ' +
            'WHERE stream = ? AND record_id = ? ORDER BY seq',
          [stream, id],
        );
        const row = await w.query(`SELECT _synced_at, _run_id, _deleted_at FROM "${stream}" WHERE id = ?`, [id]);
        out.push({
          stream,
          id,
          service: changes
            .filter((c) => c.stream === stream && c.id === id)
            .map((c) => ({ seq: c.seq, action: c.action, deliveries: c.deliveries.map((x) => status.get(x)) })),
          journal: plain(journal.rows),
          row: plain(row.rows),
        });
      }
    }
  });
  return out;
}

/** Events that ended more than 30 days before the simulator's now (a plain sync polls them once a day). */
function pastEvents(b: DaemonBench): Set<number> {
  const now = b.sim.now().getTime();
  const ended = (e: Record<string, unknown>) =>
    typeof e.end_date === 'string' && now - Date.parse(`${e.end_date}T23:59:59Z`) > 30 * 86_400_000;
  return new Set(
    b.sim
      .truth('events')
      .records.filter(ended)
      .map((e) => Number(e.id)),
  );
}

/** 2. A burst of changes, serve SIGKILLed after half of them and restarted once the service gave up the rest. */
async function burstScenario(total: number, log: (m: string) => void): Promise<BurstOutcome> {
  // Two tries 100 ms apart: the service gives up a delivery nobody answers within the scenario.
  const b = await startDaemonBench('small', { attempts: 2, retryBaseMs: 100 });
  try {
    await b.evsync(['backfill', '--streams', CAPTURED.join(',')]);
    const first = await startServe(b, 'burst-first');
    await first.caughtUp();
    await installWebhooks(b, first.url);
    const since = b.sim.webhooks.changes().at(-1)?.seq ?? 0;
    const sinceDelivery = b.sim.webhooks.deliveries().at(-1)?.id ?? 0;
    // Batches of 10 changes every 200 ms (50 changes/s, a pace serve keeps up with), the service's clock a second on
    // after each (its changes are ordered by time).
    const batches = Math.ceil(total / 10);
    let made = 0;
    let beforeKill = 0;
    for (let i = 0; i < batches; i++) {
      const n = Math.min(10, total - made);
      b.sim.mutate(n, { streams: CAPTURED });
      b.sim.advanceClock(1);
      made += n;
      if (i === Math.floor(batches / 2)) {
        await first.kill();
        beforeKill = made;
        log(`daemon: burst: serve killed after ${made} changes`);
      }
      await sleep(200);
    }
    await b.sim.webhooks.idle();
    // A poll reads up to 5 s before the service's now (the engine's lag): a change given up on within the last 5 s
    // (here two tries 100 ms apart; the real service retries for longer) is left to the next reconciliation.
    await sleep(6000);
    const deliveries = b.sim.webhooks.deliveries(sinceDelivery);
    const before = b.sim.counters();
    const t = Date.now();
    const second = await startServe(b, 'burst-restart');
    await second.caughtUp();
    await second.applied();
    const restartSeconds = (Date.now() - t) / 1000;
    const used = spent(before, b.sim.counters());
    await second.stop();
    const past = pastEvents(b);
    const changes = b.sim.webhooks.changes(since);
    const out: BurstOutcome = {
      changes: made,
      beforeKill,
      givenUp: deliveries.filter((d) => d.status === 'failed').length,
      delivered: deliveries.filter((d) => d.status === 'delivered').length,
      restartList: used.list,
      restartCredits: used.credits,
      restartSeconds,
      pastEventChanges: changes.filter((c) => c.eventId !== null && past.has(c.eventId)).length,
      differences: await withWarehouse(b.db, (w) => differenceCounts(b.sim, w, CAPTURED)),
    };
    if (Object.keys(out.differences).length > 0) out.evidence = await evidence(b, out.differences);
    log(`daemon: burst: ${JSON.stringify(out)}`);
    return out;
  } finally {
    await b.close();
  }
}

function burstFigures(o: BurstOutcome): ScenarioResult[] {
  const sum = (k: 'missing' | 'extra' | 'changed') => Object.values(o.differences).reduce((n, d) => n + d[k], 0);
  const name = `daemon: ${o.changes}-change burst, serve killed and restarted`;
  const detail =
    `serve SIGKILLed after ${o.beforeKill} changes; ${o.delivered} deliveries delivered, ${o.givenUp} given up by the ` +
    `service; ${o.pastEventChanges} changes to records of past events; after the restart's catch-up and applier: ` +
    `${JSON.stringify(o.differences)} (every captured stream compared with the source, past events included); ` +
    `restart to settled ${seconds(o.restartSeconds * 1000)}`;
  return [
    figure(name, 'rows missing from the warehouse', sum('missing'), 0, '==', detail),
    figure(name, 'rows extra in the warehouse', sum('extra'), 0, '=='),
    figure(name, 'rows with another value', sum('changed'), 0, '=='),
    figure(
      name,
      'list calls of the restart',
      o.restartList,
      null,
      null,
      `${o.restartCredits} credits (list calls, re-reads and tokens) from the restart until caught up and applied`,
    ),
  ];
}

const SCENARIOS = ['start', 'burst', 'latency'] as const;
type Scenario = (typeof SCENARIOS)[number];

export async function daemonScenarios(
  o: BenchOptions,
  only: readonly Scenario[] = SCENARIOS,
): Promise<ScenarioResult[]> {
  const plan = o.quick
    ? { sizes: ['small'] as SimulatorSize[], burst: 1000, querySeconds: 20 }
    : { sizes: ['small', 'medium'] as SimulatorSize[], burst: 5000, querySeconds: 60 };
  // The machine as the group starts (its load average then): timings are only comparable on like machines.
  const machine = machineInfo();
  const results: ScenarioResult[] = [];
  const outcomes: { start: StartOutcome[]; burst?: BurstOutcome; latency?: DaemonLatency } = { start: [] };
  if (only.includes('start')) {
    for (const size of plan.sizes) {
      const s = await startScenario(size, o.log);
      outcomes.start.push(s);
      results.push(...startFigures(s));
    }
  }
  if (only.includes('burst')) {
    outcomes.burst = await burstScenario(plan.burst, o.log);
    results.push(...burstFigures(outcomes.burst));
  }
  if (only.includes('latency')) {
    const l = await latencyScenario(plan.querySeconds, o.log);
    outcomes.latency = l.outcome;
    results.push(...l.results);
  }
  // A run of some scenarios only gets a file of its own (daemon-start.json...): it never mixes with a whole run's.
  const report = { machine, mode: o.quick ? 'quick' : 'full', plan, only, outcomes, results };
  const part = only.length === SCENARIOS.length ? '' : `-${only.join('-')}`;
  const file = `daemon${part}${o.quick ? '-quick' : ''}.json`;
  writeFileSync(join(ROOT, 'bench', 'results', file), `${JSON.stringify(report, null, 2)}\n`);
  return results;
}

// Run directly: `npx tsx bench/daemon.ts [--quick] [--only start,burst,latency]`.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: { quick: { type: 'boolean', default: false }, only: { type: 'string' } },
  });
  const only = (values.only?.split(',') ?? SCENARIOS) as Scenario[];
  for (const k of only) if (!SCENARIOS.includes(k)) throw new Error(`--only: ${k}? (${SCENARIOS.join(', ')})`);
  const results = await daemonScenarios({ quick: values.quick === true, log: stderrLog }, only);
  for (const r of results) {
    process.stdout.write(
      `${r.ok ? 'ok  ' : 'MISS'} ${r.name}: ${r.metric} = ${r.value}${r.target === null ? '' : ` (target ${r.op} ${r.target})`}\n`,
    );
    if (r.detail) process.stdout.write(`     ${r.detail}\n`);
  }
}
