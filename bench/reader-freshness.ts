/**
 * The freshness an analyst sees while `evsync serve --parquet-out --snapshot` runs (issue 24): from a change at the
 * service to that change being visible to another process (a) in the snapshot and (b) in the Parquet, at the default
 * cadence (60 s) and at `--publish-every 10` on medium (publish.ts), at `--publish-every 5` on large
 * (publish-large.ts); how long deliveries wait for their answer while publishes run, and serve's CPU for publishing.
 *
 * Per cadence: a copy of a backfilled warehouse (every stream), the simulator of the same seed in this process,
 * `evsync serve` in a process of its own with webhooks for registrants installed by `evsync webhooks install`; a
 * reader process (publish-reader.ts) reopening the snapshot and the Parquet every second; registrant changes at
 * `rate`/s for `seconds`. A change's freshness is the start of the first read that shows it (its `updated_at` or a
 * newer one) minus its time at the service. The answer time of a delivery is the simulator's own measure of each try
 * (sent to complete answer). Peak RSS is serve's VmHWM; the number of publishes comes from `evsync status --json`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, extname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { type Simulator, type SimulatorSize, startSimulator, type WebhookChange } from '../src/simulator/index.js';
import { Warehouse } from '../src/warehouse/index.js';
import { changeSteadily } from './change-stream.js';
import { cli, evsyncEnv, serveListening, stopChild } from './cli-process.js';
import { figure, round, type ScenarioResult } from './lib.js';
import { simulatorClient } from './sim-client.js';
import { BACKFILL_SEED } from './sim-warehouse.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const EXT = extname(fileURLToPath(import.meta.url));
const READER = join(HERE, `publish-reader${EXT}`);
const SECRET = 'bench-reader-freshness-secret-8c1d2e';
const STREAM = 'registrants';
/** The reader's polling interval. */
const EVERY_MS = 1000;

export interface ReaderPlan {
  size: SimulatorSize;
  seconds: number;
  rate: number;
}

interface Quantiles {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Seconds from change to visible in one output; `missing` never became visible before the end. */
type SourceFreshness = Quantiles & {
  missing: number;
  readErrors: number;
  firstReadError: string | null;
  readMsP50: number;
};

export interface ReaderOutcome {
  /** --publish-every, seconds. */
  cadence: number;
  changes: number;
  /** Deletes, and changes of records deleted later in the window. */
  unmeasured: number;
  /** Per source: seconds from change to visible; `missing` never became visible before the end. */
  snapshot: SourceFreshness;
  parquet: SourceFreshness;
  /** Publishes during the changes and the drain (not the first, whole publish at start). */
  publishes: number;
  /** Publishes that failed in that time (the partitions they owed wait for the next one); lastPublish has the error. */
  failedPublishes: number;
  firstPublishSeconds: number;
  /** serve's CPU while publishing (the publisher's totalCpuMs, from `evsync status --json`): the first, whole publish
   * and the readers' first reads; then the publishes during the changes and the drain. */
  firstPublishCpuSeconds: number;
  publishCpuSeconds: number;
  /** Wall time of those publishes, added up (how much of the window serve spent publishing). */
  publishWallSeconds: number;
  /** Seconds from the first change to the drain's end: the window the publishes above ran in. */
  windowSeconds: number;
  /** List calls serve made by the time its first outputs were read (none: it served the copy, no backfill), and in all. */
  listCallsAtStart: number;
  listCalls: number;
  lastPublish: unknown;
  /** Milliseconds from sending a delivery to its complete answer, as the simulator measured each try. */
  answerMs: Quantiles;
  deliveriesNotDelivered: number;
  peakRssMb: number;
  /** Serve's peak RSS once its first, whole publish was done (before any change). */
  peakRssAfterFirstPublishMb: number;
  loadAverage: string;
}

function quantiles(values: number[], digits = 1): Quantiles {
  const v = [...values].sort((a, b) => a - b);
  const q = (p: number) => v[Math.min(v.length - 1, Math.max(0, Math.ceil(p * v.length) - 1))] ?? Number.NaN;
  return {
    n: v.length,
    p50: round(q(0.5), digits),
    p95: round(q(0.95), digits),
    p99: round(q(0.99), digits),
    max: round(v.at(-1) ?? Number.NaN, digits),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Source = 'snapshot' | 'parquet';
type ReaderLine = { src: Source; t: number; ms?: number; baseline?: number; rows?: [string, string][]; error?: string };

/** The reader process and what it has seen so far: per source, per id, each (read start, updated_at) in order. */
function startReader(snapshot: string, parquet: string) {
  const args = [...(EXT === '.ts' ? ['--import', 'tsx'] : []), READER, '--snapshot', snapshot, '--parquet', parquet];
  const child = spawn(process.execPath, [...args, '--every', String(EVERY_MS)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  const seen: Record<Source, Map<string, [number, string][]>> = { snapshot: new Map(), parquet: new Map() };
  const baseline: Record<Source, boolean> = { snapshot: false, parquet: false };
  const errors: Record<Source, number> = { snapshot: 0, parquet: 0 };
  const errorSample: Record<Source, string | null> = { snapshot: null, parquet: null };
  const readMs: Record<Source, number[]> = { snapshot: [], parquet: [] };
  createInterface({ input: child.stdout }).on('line', (line) => {
    const r = JSON.parse(line) as ReaderLine;
    if (r.error !== undefined) {
      // Before its first read the file may not be there yet; later, a failed read is what a reader meets.
      if (baseline[r.src]) {
        errors[r.src] += 1;
        errorSample[r.src] ??= r.error.slice(0, 300);
      }
      return;
    }
    if (r.ms !== undefined) readMs[r.src].push(r.ms);
    if (r.baseline !== undefined) baseline[r.src] = true;
    for (const [id, u] of r.rows ?? []) {
      const list = seen[r.src].get(id) ?? [];
      list.push([r.t, u]);
      seen[r.src].set(id, list);
    }
  });
  return {
    seen,
    errors,
    errorSample,
    readMs,
    ready: () => baseline.snapshot && baseline.parquet,
    /** When `c` first showed in `src` (a read with its updated_at or a newer one), or null. */
    visibleAt(src: Source, c: WebhookChange): number | null {
      const hit = (seen[src].get(String(c.id)) ?? []).find(([, u]) => u >= c.datetime);
      return hit ? hit[0] : null;
    },
    async stop() {
      process.off('exit', kill);
      const exited = once(child, 'exit');
      child.stdin.end();
      await exited;
    },
  };
}

async function runCli(args: string[], env: Record<string, string>, dir: string, log: string): Promise<string> {
  const child = cli(args, env, dir, log);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`evsync ${args[0]} exited with ${String(code)} (see ${log})`);
  return out;
}

async function publishStats(env: Record<string, string>, dir: string, log: string) {
  const s = JSON.parse(await runCli(['status', '--json'], env, dir, log)) as {
    daemon?: {
      publish?: {
        publishes: number;
        failures: number;
        totalCpuMs: number;
        totalDurationMs: number;
        lastError: string | null;
      } & Record<string, unknown>;
    };
  };
  if (!s.daemon?.publish) throw new Error('evsync status shows no publishing daemon');
  return s.daemon.publish;
}

function peakRssMb(pid: number): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Math.round(Number(kb ?? 0) / 1024);
}

async function waitFor(what: string, condition: () => boolean, child: ChildProcess, limitMs: number): Promise<void> {
  const end = Date.now() + limitMs;
  while (!condition()) {
    if (child.exitCode !== null) throw new Error(`evsync serve exited while waiting for ${what}`);
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

async function bindTo(sim: Simulator, db: string): Promise<void> {
  const c = simulatorClient(sim);
  const w = await Warehouse.open(db);
  await w.account.bind({ baseUrl: c.baseUrl, clientId: c.clientId });
  await w.close();
  await c.close();
}

/** One cadence: `base` (a backfilled warehouse of BACKFILL_SEED) is copied into `dir`; `cadence` null: the default. */
export async function readerFreshness(
  plan: ReaderPlan,
  cadence: number | null,
  base: string,
  dir: string,
  log: (m: string) => void,
): Promise<ReaderOutcome> {
  const label = `reader-freshness (${cadence ?? 'default'} s)`;
  const db = join(dir, `reader-${cadence ?? 'default'}.duckdb`);
  copyFileSync(base, db);
  const parquet = join(dir, `parquet-${cadence ?? 'default'}`);
  const snapshot = join(dir, `snapshot-${cadence ?? 'default'}.duckdb`);
  const logFile = join(dir, `serve-${cadence ?? 'default'}.log`);
  const sim = await startSimulator({
    size: plan.size,
    seed: BACKFILL_SEED,
    port: 0,
    rateLimit: { credits: 1_000_000, windowSeconds: 1 },
  });
  let serve: ChildProcess | null = null;
  let reader: ReturnType<typeof startReader> | null = null;
  try {
    await bindTo(sim, db);
    const env = evsyncEnv(sim, db, SECRET);
    const every = cadence === null ? [] : ['--publish-every', String(cadence)];
    const started = Date.now();
    const child = cli(
      ['serve', '--listen', '127.0.0.1:0', '--streams', STREAM, '--no-catch-up', '--json'].concat(
        ['--parquet-out', parquet, '--snapshot', snapshot],
        every,
      ),
      env,
      dir,
      logFile,
    );
    serve = child;
    const url = (await serveListening(child, logFile)).listening;
    // New outputs are published whole at start: the readers begin once both are there.
    await waitFor('the first publish', () => existsSync(snapshot) && existsSync(join(parquet, STREAM)), child, 900_000);
    const r = startReader(snapshot, parquet);
    reader = r;
    await waitFor("the reader's first reads", r.ready, child, 300_000);
    const firstPublishSeconds = round((Date.now() - started) / 1000, 1);
    // Serve's peak so far: its start and the first, whole publish (the VmHWM high-water mark).
    const peakAfterFirstPublish = peakRssMb(child.pid!);
    const listCallsAtStart = sim.counters().listCalls;
    await runCli(['webhooks', 'install', '--url', url, '--streams', STREAM], env, dir, join(dir, 'install.log'));
    const before = await publishStats(env, dir, join(dir, 'status.log'));
    const sinceChange = sim.webhooks.changes().at(-1)?.seq ?? 0;
    const sinceDelivery = sim.webhooks.deliveries().at(-1)?.id ?? 0;
    const windowStart = Date.now();
    log(
      `${label}: ${plan.rate} changes/s for ${plan.seconds} s (first publish and reads after ${firstPublishSeconds} s)`,
    );
    await changeSteadily(sim, plan.rate, plan.seconds, [STREAM]);
    const window = sim.webhooks.changes(sinceChange).filter((c) => c.stream === STREAM && c.id !== null);
    // A record deleted later never shows its earlier change (readers see live rows): those are not measured.
    const deletedAt = new Map(window.filter((c) => c.action === 'delete').map((c) => [c.id, c.seq]));
    const changes = window.filter((c) => c.action !== 'delete' && (deletedAt.get(c.id) ?? 0) < c.seq);
    const unmeasured = window.length - changes.length;
    await sim.webhooks.idle();
    // Every change visible in both, or two cadences and a minute after the last one.
    const drainEnd = Date.now() + (2 * (cadence ?? 60) + 60) * 1000;
    const shown = () => changes.every((c) => r.visibleAt('snapshot', c) !== null && r.visibleAt('parquet', c) !== null);
    while (!shown() && Date.now() < drainEnd) await sleep(500);
    const stats = await publishStats(env, dir, join(dir, 'status.log'));
    const windowSeconds = round((Date.now() - windowStart) / 1000, 1);
    const peak = peakRssMb(child.pid!);
    const loadAverage = loadavg()
      .map((x) => x.toFixed(2))
      .join(' ');
    await r.stop();
    reader = null;
    await stopChild(child);
    serve = null;
    const deliveries = sim.webhooks.deliveries(sinceDelivery).filter((d) => d.url === url);
    const perSource = (src: Source) => {
      const seconds: number[] = [];
      let missing = 0;
      for (const c of changes) {
        const t = r.visibleAt(src, c);
        if (t === null) missing += 1;
        else seconds.push(Math.max(0, (t - Date.parse(c.at)) / 1000));
      }
      return {
        ...quantiles(seconds),
        missing,
        readErrors: r.errors[src],
        firstReadError: r.errorSample[src],
        readMsP50: quantiles(r.readMs[src], 0).p50,
      };
    };
    return {
      cadence: cadence ?? 60,
      changes: changes.length,
      unmeasured,
      snapshot: perSource('snapshot'),
      parquet: perSource('parquet'),
      publishes: stats.publishes - before.publishes,
      failedPublishes: stats.failures - before.failures,
      firstPublishSeconds,
      firstPublishCpuSeconds: round(before.totalCpuMs / 1000, 1),
      publishCpuSeconds: round((stats.totalCpuMs - before.totalCpuMs) / 1000, 1),
      publishWallSeconds: round((stats.totalDurationMs - before.totalDurationMs) / 1000, 1),
      windowSeconds,
      listCallsAtStart,
      listCalls: sim.counters().listCalls,
      lastPublish: Object.fromEntries(Object.entries(stats).filter(([k]) => k.startsWith('last'))),
      answerMs: quantiles(deliveries.flatMap((d) => d.attempts.map((x) => x.ms))),
      deliveriesNotDelivered: deliveries.filter((d) => d.status !== 'delivered').length,
      peakRssMb: peak,
      peakRssAfterFirstPublishMb: peakAfterFirstPublish,
      loadAverage: `${loadAverage} on ${cpus().length} cores`,
    };
  } finally {
    await reader?.stop();
    if (serve) await stopChild(serve);
    await sim.close();
  }
}

export function readerFigures(size: SimulatorSize, plan: ReaderPlan, o: ReaderOutcome): ScenarioResult[] {
  const name = `publish: reader-freshness, --publish-every ${o.cadence} (${size})`;
  const s = o.snapshot;
  const p = o.parquet;
  return [
    figure(
      name,
      'snapshot p95 s',
      s.p95,
      null,
      null,
      `${o.changes} registrant changes measured (${plan.rate}/s for ${plan.seconds} s; ${o.unmeasured} deletes or changes of records deleted later not), reader reopening both every ${EVERY_MS / 1000} s; snapshot p50 ${s.p50} s, p95 ${s.p95} s, max ${s.max} s, ${s.missing} never shown, ${s.readErrors} failed reads (read ${s.readMsP50} ms); Parquet p50 ${p.p50} s, p95 ${p.p95} s, max ${p.max} s, ${p.missing} never shown, ${p.readErrors} failed reads (read ${p.readMsP50} ms); ${o.publishes} publishes, ${o.failedPublishes} failed (first, whole: ${o.firstPublishSeconds} s after start); load average ${o.loadAverage}`,
    ),
    figure(name, 'Parquet p95 s', p.p95, null, null),
    figure(
      name,
      'delivery answer p99 ms',
      o.answerMs.p99,
      null,
      null,
      `${o.answerMs.n} tries, p50 ${o.answerMs.p50} ms, max ${o.answerMs.max} ms (the simulator's send-to-answer time per try); ${o.deliveriesNotDelivered} not delivered`,
    ),
    figure(name, 'serve peak RSS MB', o.peakRssMb, null, null),
  ];
}
