/**
 * 3. Deliveries while a long query runs through serve: serve on a backfilled warehouse with webhooks installed,
 * changes at 5/s; first with no query (the baseline), then while `evsync query "select count(*) from
 * range(1000000000000)" --timeout <s>` runs for its whole time and is cancelled. Each delivery try's answer time is
 * the simulator's own record of it (from sending to the complete answer). Serve's memory: VmRSS sampled during the
 * query, VmHWM (its peak over its life) read at the end, from /proc/<pid>/status.
 */
import { readFileSync } from 'node:fs';
import type { Simulator } from '../src/simulator/index.js';
import { runCli } from './cli-process.js';
import { CAPTURED, changeSteadily, installWebhooks, sleep, startDaemonBench, startServe } from './daemon-serve.js';
import { quantile } from './freshness-measure.js';
import { figure, round, type ScenarioResult } from './lib.js';

const RATE = 5;
const QUERY = 'select count(*) from range(1000000000000)';

export interface Answers {
  changes: number;
  tries: number;
  p50: number;
  p99: number;
  max: number;
  /** Tries that got no 2xx answer (a timeout, an error, another status). */
  failed: number;
}

export interface DaemonLatency {
  baseline: Answers;
  underQuery: Answers;
  querySeconds: number;
  queryExit: number | null;
  queryStderr: string;
  peakRssMb: number;
  sampledRssMb: number;
  rssBeforeMb: number;
}

/** Every delivery try after `since` (delivery id) and its answer time, once the service's queue is empty. */
async function answers(sim: Simulator, since: number, changes: number): Promise<Answers> {
  await sim.webhooks.idle();
  const tries = sim.webhooks.deliveries(since).flatMap((d) => d.attempts);
  const ms = tries.map((a) => a.ms).sort((a, b) => a - b);
  return {
    changes,
    tries: tries.length,
    p50: round(quantile(ms, 0.5) / 1000),
    p99: round(quantile(ms, 0.99) / 1000),
    max: round((ms.at(-1) ?? Number.NaN) / 1000),
    failed: tries.filter((a) => a.outcome !== 'ok').length,
  };
}

/** A field of /proc/<pid>/status in MB (VmRSS, VmHWM). */
function procMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : Number.NaN;
}

export async function latencyScenario(
  querySeconds: number,
  log: (m: string) => void,
): Promise<{ outcome: DaemonLatency; results: ScenarioResult[] }> {
  const b = await startDaemonBench('small');
  try {
    await b.evsync(['backfill', '--streams', CAPTURED.join(',')]);
    // Just backfilled: nothing to catch up on.
    const serve = await startServe(b, 'latency', ['--no-catch-up']);
    try {
      await installWebhooks(b, serve.url);
      let since = b.sim.webhooks.deliveries().at(-1)?.id ?? 0;
      log(`daemon: latency: baseline, ${RATE} changes/s for ${querySeconds} s`);
      const baseline = await answers(b.sim, since, await changeSteadily(b.sim, RATE, querySeconds));
      await serve.applied();
      const rssBeforeMb = procMb(serve.pid, 'VmRSS');
      since = b.sim.webhooks.deliveries().at(-1)?.id ?? 0;
      log(`daemon: latency: ${querySeconds} s query through serve, ${RATE} changes/s meanwhile`);
      const query = runCli(['query', QUERY, '--timeout', String(querySeconds)], b.env, b.tmp.dir);
      let sampledRssMb = 0;
      let running = true;
      const sampler = (async () => {
        while (running) {
          sampledRssMb = Math.max(sampledRssMb, procMb(serve.pid, 'VmRSS'));
          await sleep(250);
        }
      })();
      const changes = await changeSteadily(b.sim, RATE, querySeconds);
      const q = await query;
      running = false;
      await sampler;
      const underQuery = await answers(b.sim, since, changes);
      const peakRssMb = procMb(serve.pid, 'VmHWM');
      await serve.applied();
      const outcome: DaemonLatency = {
        baseline,
        underQuery,
        querySeconds: round(q.ms / 1000, 1),
        queryExit: q.code,
        queryStderr: q.stderr.trim().split('\n').at(-1) ?? '',
        peakRssMb,
        sampledRssMb,
        rssBeforeMb,
      };
      log(`daemon: latency: ${JSON.stringify(outcome)}`);
      return { outcome, results: latencyFigures(outcome, querySeconds) };
    } finally {
      await serve.stop();
    }
  } finally {
    await b.close();
  }
}

function latencyFigures(o: DaemonLatency, limit: number): ScenarioResult[] {
  const a = o.underQuery;
  const name = `daemon: deliveries while a ${limit}-second query runs through serve`;
  const what = (x: Answers) =>
    `${x.tries} tries for ${x.changes} changes (${x.failed} not answered 2xx); p50 ${x.p50} s, p99 ${x.p99} s, max ${x.max} s`;
  return [
    figure(
      name,
      'delivery answer p99 seconds',
      a.p99,
      1,
      '<',
      `${what(a)}; the query ran ${o.querySeconds} s and ended with exit ${String(o.queryExit)} (${o.queryStderr})`,
    ),
    figure(name, 'delivery answer max seconds', a.max, null, null),
    figure(
      name,
      'serve peak RSS MB',
      o.peakRssMb,
      null,
      null,
      `VmHWM at the end (serve's peak over its life); VmRSS sampled every 250 ms during the query peaked at ` +
        `${o.sampledRssMb} MB, ${o.rssBeforeMb} MB before it`,
    ),
    figure(
      'daemon: deliveries with no query running',
      'delivery answer p99 seconds',
      o.baseline.p99,
      1,
      '<',
      what(o.baseline),
    ),
  ];
}
