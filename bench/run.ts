/**
 * `npm run bench` (builds, then runs dist/bench/run.js): every scenario of the limits in DESIGN.md, each figure
 * against its target, written to bench/results/latest.json and printed as a table.
 *
 *   npm run bench                    full sizes (medium; pipeline at 120k, 1M and 5M records; replay to 5M rows):
 *                                    about an hour on 2 cores
 *   npm run bench -- --quick         reduced sizes (pipeline to 120k, replay to 1M), a few minutes
 *   npm run bench -- --only credits,rate,pipeline,replay
 *   npm run bench -- --only daemon [--quick]   serve's costs (issue 23): about 10 minutes, not in the default set
 *   npm run bench -- --only backfill           the 5M-row backfill's peak RSS alone (xlarge), not in the default set
 *   npm run bench -- --only queries [--quick]  deliveries and memory with 0, 4 and 50 queries through serve (issue 32)
 *   npm run bench -- --only publish-large --db <file> [--quick]
 *                                    readers' copies on large (issue 35): first, unchanged and one-change publishes,
 *                                    and reader freshness at --publish-every 5 (--db: the large warehouse, built there
 *                                    when missing; --quick: small); not in the default set, run it alone
 *   npm run bench -- --only archive --db <file> [--quick]
 *                                    the archive (issue 36): its cost on the live load (replay on and off), its size
 *                                    against the raw JSON, and a rebuild of registrants on large (--db: the archived
 *                                    warehouse, built there when missing; --quick: small); not in the default set
 *
 * Exit 0 when every scenario ran (targets missed are reported, not hidden); 1 when one could not run.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { creditScenarios } from './credits.js';
import { lakeScenarios } from './lake.js';
import { type BenchOptions, formatTable, type ScenarioResult, seconds, stderrLog } from './lib.js';
import { machineInfo } from './machine.js';
import { bigBackfillScenarios, bigEventScenarios, pipelineScenarios } from './pipeline.js';
import { rateLimitScenarios } from './rate-limit.js';
import { replayScenarios } from './replay.js';

const GROUPS: Record<string, (o: BenchOptions) => Promise<ScenarioResult[]>> = {
  credits: creditScenarios,
  rate: rateLimitScenarios,
  pipeline: pipelineScenarios,
  lake: lakeScenarios,
  replay: replayScenarios,
  // One event of 400,000 registrants backfilled (peak RSS): see pipeline.ts.
  bigevent: bigEventScenarios,
  backfill: bigBackfillScenarios,
  // The daemon's publisher (Parquet + snapshot) on medium, and what a reader of its outputs sees (minutes): see publish.ts.
  publish: async (o) => (await import('./publish.js')).publishScenarios(o),
  // Webhooks against polling under the real limit (minutes per scenario): see freshness.ts.
  freshness: async (o) => (await import('./freshness.js')).freshnessScenarios(o),
  // What the daemon costs (serve at start, a killed burst, deliveries under a long query): see daemon.ts.
  daemon: async (o) => (await import('./daemon.js')).daemonScenarios(o),
  // Deliveries and serve's memory with 0, 4 and 50 queries through it, and a query's start-up cost: see daemon-latency.ts.
  queries: async (o) => (await import('./daemon.js')).daemonScenarios(o, ['latency']),
  // Readers' copies on large: publishes that cost what changed, and reader freshness at 5 s: see publish-large.ts.
  'publish-large': async (o) =>
    (await import('./publish-large.js')).publishLargeScenarios({ ...o, ...(values.db ? { db: values.db } : {}) }),
  // The archive (issue 36): its cost on the live load, its size and a rebuild on large (tens of minutes): see archive.ts.
  archive: async (o) =>
    (await import('./archive.js')).archiveScenarios({ ...o, ...(values.db ? { db: values.db } : {}) }),
  // The history of every record (issue 37): versions and bytes per 1,000 changes, live CPU on and off: see history.ts.
  history: async (o) => (await import('./history.js')).historyScenarios(o),
};

/** The repository root: from dist/bench/ or bench/, the first parent holding evsync's package.json. */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const file = join(dir, 'package.json');
    if (existsSync(file) && (JSON.parse(readFileSync(file, 'utf8')) as { name?: string }).name === 'evsync') return dir;
    dir = dirname(dir);
  }
  throw new Error('bench: repository root not found');
}

const { values } = parseArgs({
  // --db: the warehouse file of the groups that take one (publish-large).
  options: { quick: { type: 'boolean', default: false }, only: { type: 'string' }, db: { type: 'string' } },
});
const quick = values.quick === true;
/** Groups run only when named with --only (they take long and measure one part: see their files). */
// `backfill` repeats the pipeline's xlarge sync without its download (the pipeline group already measures it).
const OPT_IN = new Set(['daemon', 'backfill', 'queries', 'publish-large', 'archive', 'history']);
const defaults = Object.keys(GROUPS).filter((g) => !OPT_IN.has(g));
const only = values.only ? values.only.split(',').map((s) => s.trim()) : defaults;
for (const name of only)
  if (!GROUPS[name]) throw new Error(`unknown group ${name}; groups: ${Object.keys(GROUPS).join(', ')}`);

const machine = machineInfo();
stderrLog(
  quick
    ? 'quick run: reduced sizes (small data set, 120k records, replay to 1M rows), a few minutes'
    : 'full run: medium data set, 1M and 5M records; this takes a while (about an hour on 2 cores)',
);
const started = Date.now();
const results: ScenarioResult[] = [];
let crashed = false;
for (const name of only) {
  try {
    results.push(...(await GROUPS[name]!({ quick, log: stderrLog })));
  } catch (err) {
    crashed = true;
    const message = err instanceof Error ? err.message : String(err);
    stderrLog(`${name} failed: ${err instanceof Error ? (err.stack ?? message) : message}`);
    results.push({
      name: `${name}: could not run`,
      metric: 'error',
      value: 0,
      target: null,
      op: null,
      ok: false,
      detail: message,
    });
  }
}

const out = join(repoRoot(), 'bench', 'results');
mkdirSync(out, { recursive: true });
const report = { machine, mode: quick ? 'quick' : 'full', durationMs: Date.now() - started, scenarios: results };
// latest.json is the last run of either kind; quick.json / full.json keep the last of each for comparison.
const text = `${JSON.stringify(report, null, 2)}\n`;
writeFileSync(join(out, 'latest.json'), text);
if (only.length === defaults.length && only.every((g) => defaults.includes(g)))
  writeFileSync(join(out, `${report.mode}.json`), text);

process.stdout.write(
  `\nevsync bench (${report.mode}) on ${machine.cores} cores, ${machine.cpu}, ${machine.memoryGb} GB, Node ${machine.node}, ` +
    `load ${machine.loadAverage}; ${seconds(report.durationMs)}\n\n${formatTable(results)}\n\n`,
);
for (const r of results) if (r.detail) process.stdout.write(`- ${r.name}: ${r.detail}\n`);
process.stdout.write(`\nresults: ${join(out, 'latest.json')}\n`);
process.exitCode = crashed ? 1 : 0;
