/**
 * The daemon's publisher on a `medium` warehouse (every stream): what one publish costs in time, CPU, bytes and
 * peak RSS, for a first (full) publish and for an incremental one (a few touched partitions), Parquet and snapshot
 * together; and the snapshot's copy method (CREATE TABLE AS per table against COPY FROM DATABASE).
 *
 *   npx tsx bench/publish.ts [--size medium] [--db path] [--json out.json]
 *
 * The warehouse is built once (kept with --db, reused when the file exists) by a backfill of every stream from the
 * unthrottled simulator; the measurement runs in a child process (publish-child.ts) so its memory is its own.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ApiClient } from '../src/api/index.js';
import type { SimulatorSize } from '../src/simulator/index.js';
import { runSync } from '../src/sync/index.js';
import { type BenchOptions, figure, round, type ScenarioResult, seconds, stderrLog, tempDir } from './lib.js';
import type { PublishReport } from './publish-child.js';
import { withSimulatorAndWarehouse } from './sim-warehouse.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const EXT = extname(fileURLToPath(import.meta.url));
const CHILD = join(HERE, `publish-child${EXT}`);

async function buildWarehouse(db: string, size: SimulatorSize, log: (m: string) => void): Promise<void> {
  const options = { size, seed: 7, port: 0, rateLimit: { credits: 1_000_000, windowSeconds: 1 } };
  await withSimulatorAndWarehouse(options, db, async (sim, w) => {
    const account = sim.accounts[0]!;
    const client = new ApiClient({
      baseUrl: sim.baseUrl,
      credentials: { clientId: account.clientId, clientSecret: account.clientSecret },
      rateLimit: { limit: 1_000_000, windowMs: 1000 },
    });
    try {
      const r = await runSync(client, w, { mode: 'backfill', streams: 'all', lagSeconds: 0 });
      log(`built ${size}: ${r.status}, ${Object.keys(r.streams).length} streams`);
      await w.buildAnalyticsViews();
    } finally {
      await client.close();
    }
  });
}

async function measure(db: string, out: string): Promise<PublishReport> {
  const args = [...(EXT === '.ts' ? ['--import', 'tsx'] : []), CHILD, '--db', db, '--out', out];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  child.stdout.on('data', (d: Buffer) => (text += d.toString()));
  const [code] = await once(child, 'exit');
  const line = text.trim().split('\n').pop() ?? '';
  if (code !== 0 || !line.startsWith('{')) throw new Error(`publish-child exited with ${String(code)}`);
  return JSON.parse(line) as PublishReport;
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? 0;
const mib = (bytes: number | null) => round((bytes ?? 0) / 1024 / 1024, 1);

export interface PublishBenchOptions extends BenchOptions {
  size?: SimulatorSize;
  db?: string;
}

export async function publishScenarios(o: PublishBenchOptions): Promise<ScenarioResult[]> {
  const size: SimulatorSize = o.size ?? (o.quick ? 'small' : 'medium');
  const tmp = tempDir('evsync-bench-publish-');
  try {
    const db = o.db ?? tmp.path('publish.duckdb');
    if (!existsSync(db)) {
      const started = Date.now();
      await buildWarehouse(db, size, o.log);
      o.log(`warehouse (${size}) built in ${seconds(Date.now() - started)}`);
    }
    const r = await measure(db, tmp.dir);
    const total = Object.values(r.rows).reduce((a, b) => a + b, 0);
    const load = loadavg()[0]?.toFixed(2);
    const name = (what: string) => `publish: ${what} (${size})`;
    const detail = (s: PublishReport['full']) =>
      `Parquet ${mib(s.lastParquet?.bytes ?? 0)} MiB in ${seconds(s.lastParquet?.ms ?? 0)} (${s.lastParquet?.tables ?? 0} tables), snapshot ${mib(s.lastSnapshot?.bytes ?? 0)} MiB in ${seconds(s.lastSnapshot?.ms ?? 0)}`;
    return [
      figure(
        name('first publish, every table to Parquet + snapshot'),
        's',
        round((r.full.lastDurationMs ?? 0) / 1000, 2),
        null,
        null,
        `${detail(r.full)}; CPU ${seconds(r.full.lastCpuMs ?? 0)}; ${total} rows in ${Object.keys(r.rows).length} tables (warehouse ${mib(statSync(db).size)} MiB); load average ${load} on ${cpus().length} cores`,
      ),
      figure(
        name('first publish'),
        'peak RSS MB',
        r.fullPeakRssMb,
        null,
        null,
        `RSS after opening the warehouse ${r.rssAfterOpenMb} MB`,
      ),
      figure(
        name('incremental publish, 3 partitions + snapshot'),
        's',
        round((r.incremental.lastDurationMs ?? 0) / 1000, 2),
        null,
        null,
        `${detail(r.incremental)}; CPU ${seconds(r.incremental.lastCpuMs ?? 0)}; touched ${JSON.stringify(r.touched)}`,
      ),
      figure(
        name('incremental publish'),
        'peak RSS MB',
        r.incrementalPeakRssMb,
        null,
        null,
        `4 more alike: ${r.repeated.map((x) => `${x.ms} ms, snapshot ${mib(x.snapshotBytes)} MiB`).join('; ')}`,
      ),
      figure(
        name('snapshot copy, CREATE TABLE AS per table'),
        's',
        round(median(r.copyMethods.ctasMs) / 1000, 2),
        null,
        null,
        `runs ${r.copyMethods.ctasMs.join(', ')} ms (views included); COPY FROM DATABASE runs ${r.copyMethods.copyDatabaseMs.join(', ')} ms (every _evsync table, no views rebuilt)`,
      ),
      figure(
        name('snapshot copy, COPY FROM DATABASE'),
        's',
        round(median(r.copyMethods.copyDatabaseMs) / 1000, 2),
        null,
        null,
      ),
    ];
  } finally {
    tmp.remove();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: { size: { type: 'string', default: 'medium' }, db: { type: 'string' }, json: { type: 'string' } },
  });
  const results = await publishScenarios({
    quick: false,
    log: stderrLog,
    size: values.size as SimulatorSize,
    ...(values.db ? { db: values.db } : {}),
  });
  const text = `${JSON.stringify({ node: process.version, results }, null, 2)}\n`;
  if (values.json) writeFileSync(values.json, text);
  process.stdout.write(text);
}
