/**
 * The measured side of the local-pipeline scenario, in a process of its own (so its peak RSS is its own and it
 * shares no event loop with the simulator or the bench driver). Prints one JSON line on stdout.
 *
 *   node dist/bench/pipeline-child.js sync --db <file> --events 1,2 --requests <file> [--concurrency 2]
 *                                      [--merge-each-item]   (merge as a daemon's runs do: each item when it completes)
 *                                      [--archive on|off]    (the warehouse's archive of every page: on by default)
 *   node dist/bench/pipeline-child.js baseline --requests <file> [--concurrency 2]
 *
 * Connection details come from EVSYNC_BASE_URL, EVSYNC_CLIENT_ID, EVSYNC_CLIENT_SECRET and EVSYNC_CREDENTIALS.
 * `sync` runs a backfill of registrants of the given events and records its list requests to `--requests`;
 * `baseline` replays them, discarding the bodies.
 */
// First, as the binary does: Node's heap policy while the heap is small (src/cli/apply-heap-policy.ts).
import '../src/cli/apply-heap-policy.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ApiClient } from '../src/api/index.js';
import { runSync } from '../src/sync/index.js';
import { Warehouse } from '../src/warehouse/index.js';
import { downloadWalks, walksFromRequests } from './baseline-download.js';

export interface ChildReport {
  mode: 'sync' | 'baseline';
  wallMs: number;
  pages: number;
  rows: number;
  bytes: number;
  /** CPU time of the process (user + system, DuckDB's threads included). */
  cpuMs: number;
  /** Of cpuMs, the kernel's share (system time: writes, fsyncs, page faults). */
  systemMs: number;
  /** process.resourceUsage().maxRSS: kilobytes. */
  maxRssKb: number;
  /** At the end, for telling V8's share from native memory (DuckDB): MB. */
  endMemoryMb: { rss: number; heapUsed: number; external: number };
  status: string;
}

function endMemory(): ChildReport['endMemoryMb'] {
  const m = process.memoryUsage();
  const mb = (n: number) => Math.round(n / 1024 / 1024);
  return { rss: mb(m.rss), heapUsed: mb(m.heapUsed), external: mb(m.external) };
}

function cpuMs(): number {
  const c = process.cpuUsage();
  return Math.round((c.user + c.system) / 1000);
}

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

async function syncMode(
  db: string,
  events: number[],
  requestsFile: string,
  concurrency: number,
  mergeEachItem: boolean,
  archive: boolean,
): Promise<ChildReport> {
  // The memory settings of the bin: the heap policy was applied by the first import; the warehouse sets its own.
  const warehouse = await Warehouse.open(db, { archive });
  const client = new ApiClient({
    baseUrl: env('EVSYNC_BASE_URL'),
    credentials: { clientId: env('EVSYNC_CLIENT_ID'), clientSecret: env('EVSYNC_CLIENT_SECRET') },
    rateLimit: { limit: 10_000_000, windowMs: 600_000 },
  });
  const paths: string[] = [];
  client.on('request', (e) => {
    if (e.method === 'GET' && e.cost === 10 && e.status === 200) paths.push(e.path);
  });
  const t0 = Date.now();
  const result = await runSync(client, warehouse, {
    mode: 'backfill',
    streams: 'registrants',
    // No list means every event (an empty list would select none).
    events: events.length > 0 ? events : undefined,
    lagSeconds: 0,
    concurrency,
    mergeEachItem,
  });
  const wallMs = Date.now() - t0;
  const memory = endMemory();
  const counted = await warehouse.query('SELECT count(*) AS n FROM registrants WHERE _deleted_at IS NULL');
  await client.close();
  await warehouse.close();
  writeFileSync(requestsFile, paths.join('\n'));
  return {
    mode: 'sync',
    wallMs,
    pages: paths.length,
    rows: Number(counted.rows[0]?.n ?? 0),
    bytes: 0,
    cpuMs: cpuMs(),
    systemMs: Math.round(process.cpuUsage().system / 1000),
    maxRssKb: process.resourceUsage().maxRSS,
    endMemoryMb: memory,
    status: result.status === 'done' ? 'done' : `${result.status}: ${result.errors.slice(0, 2).join('; ')}`,
  };
}

async function baselineMode(requestsFile: string, concurrency: number): Promise<ChildReport> {
  const paths = readFileSync(requestsFile, 'utf8').split('\n').filter(Boolean);
  const r = await downloadWalks(
    env('EVSYNC_BASE_URL'),
    env('EVSYNC_CREDENTIALS'),
    walksFromRequests(paths),
    concurrency,
  );
  return {
    mode: 'baseline',
    wallMs: r.wallMs,
    pages: r.pages,
    rows: 0,
    bytes: r.bytes,
    cpuMs: cpuMs(),
    systemMs: Math.round(process.cpuUsage().system / 1000),
    maxRssKb: process.resourceUsage().maxRSS,
    endMemoryMb: endMemory(),
    status: 'done',
  };
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    db: { type: 'string' },
    events: { type: 'string', default: '' },
    requests: { type: 'string' },
    concurrency: { type: 'string', default: '2' },
    'merge-each-item': { type: 'boolean', default: false },
    archive: { type: 'string', default: 'on' },
  },
});
const mode = positionals[0];
const concurrency = Number(values.concurrency);
if (!values.requests) throw new Error('--requests is required');
const report =
  mode === 'sync'
    ? await syncMode(
        values.db ?? env('EVSYNC_DB'),
        values.events
          .split(',')
          .filter(Boolean)
          .map((s) => Number(s)),
        values.requests,
        concurrency,
        values['merge-each-item'] === true,
        values.archive !== 'off',
      )
    : await baselineMode(values.requests, concurrency);
process.stdout.write(`${JSON.stringify(report)}\n`);
