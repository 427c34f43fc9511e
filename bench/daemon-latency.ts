/**
 * 3. Deliveries while queries run through serve (issue 32): serve on a backfilled warehouse with webhooks installed,
 * changes at 5/s for `seconds` in each of three phases: no query, 4 endless queries at once, 50 at once (each with
 * the phase's length as its time limit, sent on the daemon's socket as `evsync query` sends them). Each delivery
 * try's answer time is the simulator's own record of it (from sending to the complete answer). Memory: serve's
 * VmRSS and the sum over its query worker processes, sampled every 250 ms, from /proc.
 *
 * Then what a query costs now that it runs in a process of its own: a new worker process's first answer to
 * `select 1` (fork, load, open the copy) against a warm worker's, and `evsync query "select 1"` through serve end to
 * end (the CLI's own start included).
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { QueryWorkerProcess } from '../src/daemon/query-worker-process.js';
import { socketPathFor } from '../src/daemon/socket.js';
import type { Simulator } from '../src/simulator/index.js';
import { runCli } from './cli-process.js';
import { CAPTURED, changeSteadily, installWebhooks, sleep, startDaemonBench, startServe } from './daemon-serve.js';
import { quantile } from './freshness-measure.js';
import { figure, round, type ScenarioResult } from './lib.js';
import { childrenOf } from './processes.js';

const RATE = 5;
const ENDLESS = 'select count(*) from range(1000000000000)';
const CONCURRENCY = [0, 4, 50] as const;

export interface Answers {
  changes: number;
  tries: number;
  p50: number;
  p99: number;
  max: number;
  /** Tries that got no 2xx answer (a timeout, an error, another status). */
  failed: number;
}

export interface QueryPhase {
  queries: number;
  answers: Answers;
  /** Queries answered with their time limit (the rest: another error). */
  endedByLimit: number;
  serveRssMb: number;
  workersRssMb: number;
  workers: number;
}

export interface QueryStartCost {
  /** A new worker process: fork to its answer to `select 1`, median ms. */
  newWorkerMs: number;
  /** A warm worker's answer to `select 1`, median ms. */
  warmWorkerMs: number;
  /** `evsync query "select 1"` through serve, the CLI's start included, median ms. */
  cliThroughServeMs: number;
}

export interface DaemonLatency {
  phases: QueryPhase[];
  start: QueryStartCost;
  peakRssMb: number;
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

/** A field of /proc/<pid>/status in MB (VmRSS, VmHWM); 0 when the process is gone. */
function procMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

/** One query on serve's socket, as `evsync query` sends it; resolves with its answer's error (null when ok). */
function socketQuery(db: string, sql: string, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connect(socketPathFor(db));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      try {
        const answer = JSON.parse(text.split('\n')[0] ?? '') as { ok: boolean; error?: string };
        resolve(answer.ok ? null : (answer.error ?? 'error'));
      } catch {
        resolve('no answer');
      }
    });
    socket.write(`${JSON.stringify({ op: 'query', sql, form: 'json', allowRead: [], timeoutMs })}\n`);
  });
}

async function phase(
  b: Awaited<ReturnType<typeof startDaemonBench>>,
  servePid: number,
  queries: number,
  seconds: number,
): Promise<QueryPhase> {
  const since = b.sim.webhooks.deliveries().at(-1)?.id ?? 0;
  const sent = Array.from({ length: queries }, () => socketQuery(b.db, ENDLESS, seconds * 1000));
  let serveRssMb = 0;
  let workersRssMb = 0;
  let workers = 0;
  let running = true;
  const sampler = (async () => {
    while (running) {
      serveRssMb = Math.max(serveRssMb, procMb(servePid, 'VmRSS'));
      const children = childrenOf(servePid);
      workers = Math.max(workers, children.length);
      workersRssMb = Math.max(
        workersRssMb,
        children.reduce((n, pid) => n + procMb(pid, 'VmRSS'), 0),
      );
      await sleep(250);
    }
  })();
  const changes = await changeSteadily(b.sim, RATE, seconds);
  const errors = await Promise.all(sent);
  running = false;
  await sampler;
  return {
    queries,
    answers: await answers(b.sim, since, changes),
    endedByLimit: errors.filter((e) => e !== null && /time limit/.test(e)).length,
    serveRssMb,
    workersRssMb,
    workers,
  };
}

const median = (values: number[]) =>
  round(
    quantile(
      [...values].sort((x, y) => x - y),
      0.5,
    ),
    1,
  );

/** A new worker's first answer against a warm one's, on serve's query copy. */
async function workerCosts(copyPath: string): Promise<{ newWorkerMs: number; warmWorkerMs: number }> {
  const ask = (w: QueryWorkerProcess, id: number) =>
    w.ask(
      {
        id,
        copyPath,
        sql: 'select 1',
        form: 'json',
        allowRead: [],
        maxRows: 10,
        maxBytes: 1 << 20,
        memoryLimit: '512MB',
      },
      new AbortController().signal,
    );
  const fresh: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    const w = new QueryWorkerProcess(500);
    await ask(w, 1);
    fresh.push(performance.now() - t);
    w.kill('done');
    await w.exited;
  }
  const w = new QueryWorkerProcess(500);
  await ask(w, 0);
  const warm: number[] = [];
  for (let i = 1; i <= 20; i++) {
    const t = performance.now();
    await ask(w, i);
    warm.push(performance.now() - t);
  }
  w.kill('done');
  await w.exited;
  return { newWorkerMs: median(fresh), warmWorkerMs: median(warm) };
}

export async function latencyScenario(
  seconds: number,
  log: (m: string) => void,
): Promise<{ outcome: DaemonLatency; results: ScenarioResult[] }> {
  const b = await startDaemonBench('small');
  try {
    await b.evsync(['backfill', '--streams', CAPTURED.join(',')]);
    // Just backfilled: nothing to catch up on. A line long enough for the 50 (the default is 32).
    const serve = await startServe(b, 'latency', ['--no-catch-up', '--query-queue', '64']);
    try {
      await installWebhooks(b, serve.url);
      const phases: QueryPhase[] = [];
      for (const queries of CONCURRENCY) {
        log(`daemon: latency: ${queries} endless queries through serve for ${seconds} s, ${RATE} changes/s`);
        phases.push(await phase(b, serve.pid, queries, seconds));
        await serve.applied();
      }
      const cli: number[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await runCli(['query', 'select 1'], b.env, b.tmp.dir);
        if (r.code !== 0) throw new Error(`evsync query through serve: ${r.stderr}`);
        cli.push(r.ms);
      }
      const start: QueryStartCost = { ...(await workerCosts(`${b.db}.query-copy`)), cliThroughServeMs: median(cli) };
      const outcome: DaemonLatency = { phases, start, peakRssMb: procMb(serve.pid, 'VmHWM') };
      log(`daemon: latency: ${JSON.stringify(outcome)}`);
      return { outcome, results: latencyFigures(outcome, seconds) };
    } finally {
      await serve.stop();
    }
  } finally {
    await b.close();
  }
}

function latencyFigures(o: DaemonLatency, limit: number): ScenarioResult[] {
  const what = (x: Answers) =>
    `${x.tries} tries for ${x.changes} changes (${x.failed} not answered 2xx); p50 ${x.p50} s, p99 ${x.p99} s, max ${x.max} s`;
  const out: ScenarioResult[] = [];
  for (const p of o.phases) {
    const name =
      p.queries === 0
        ? 'daemon: deliveries with no query running'
        : `daemon: deliveries while ${p.queries} endless queries run through serve (${limit} s limit)`;
    const ended = p.queries === 0 ? '' : `; ${p.endedByLimit} of ${p.queries} queries ended by their time limit`;
    out.push(
      figure(name, 'delivery answer p99 seconds', p.answers.p99, 1, '<', `${what(p.answers)}${ended}`),
      figure(
        name,
        'serve RSS MB',
        p.serveRssMb,
        null,
        null,
        `VmRSS sampled every 250 ms; its ${p.workers} child process(es) (query workers) ${p.workersRssMb} MB together`,
      ),
    );
    if (p.queries > 0) out.push(figure(name, 'queries ended by their time limit', p.endedByLimit, p.queries, '=='));
  }
  out.push(
    figure(
      'daemon: a query in a process of its own',
      'new worker: first answer ms',
      o.start.newWorkerMs,
      null,
      null,
      `fork, load and open the copy, then select 1 (median of 5); a warm worker answers in ${o.start.warmWorkerMs} ms; ` +
        `\`evsync query "select 1"\` through serve takes ${o.start.cliThroughServeMs} ms end to end (median of 5, the CLI's own start included)`,
    ),
    figure('daemon: serve over the scenario', 'peak RSS MB', o.peakRssMb, null, null, 'VmHWM at the end'),
  );
  return out;
}
