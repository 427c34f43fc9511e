/**
 * Lake export throughput: the registrants table exported to the lake on a loopback S3 API (s3rver, bench/s3-loopback.ts)
 * against the same export to a local folder, in rows/s and MB/s of Parquet. Target: the lake at >= 0.8x local.
 *
 *   npx tsx bench/lake.ts [--size large|medium|small] [--runs 3] [--db path] [--json out.json]
 *
 * The warehouse is built once (kept with --db, reused when the file exists): the simulator's records of the chosen
 * size for the first account, normalized and loaded through Warehouse.loadPage per event as a sync would, without
 * HTTP (the sync's own speed is bench/pipeline.ts's subject). `large` is 1.06M registrants over 52 events.
 *
 * Each run exports the whole table both ways, alternating which goes first so neither always gets the warm cache:
 * local = exportParquet (DuckDB COPY, rename, sha256, manifest); lake = exportToLake (the same staging export beside
 * the database, then upload, manifest commit, lease). Two ratios, medians of the runs: wall time against wall time
 * (separate minutes; noisy where the machine is shared), and, within each lake run, the staging step (which is the
 * local export) against the whole lake export: the one the 0.8x target is judged on, since both sides of it ran
 * under the same load. The s3rver serving the uploads runs in this process, so its CPU is counted too.
 */
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { getStream, resolveStream } from '../connectors/index.js';
import type { NormalizedRow, ScalarType } from '../connectors/types.js';
import { createNormalizer } from '../normalizer/normalize.js';
import { exportToLake } from '../src/outputs/lake/export-lake.js';
import { openS3Store } from '../src/outputs/lake/s3-store.js';
import type { SimulatorSize } from '../src/simulator/index.js';
import { Warehouse } from '../src/warehouse/index.js';
import { type BenchOptions, figure, round, type ScenarioResult, seconds, stderrLog, tempDir } from './lib.js';
import { startLoopbackS3 } from './s3-loopback.js';
import { withSimulatorAndWarehouse } from './sim-warehouse.js';

const PAGE = 5000;
const TARGET_RATIO = 0.8;

/** Loads events and registrants of the simulator's first account into `db`, page by page as a sync does. */
async function buildWarehouse(db: string, size: SimulatorSize, log: (m: string) => void): Promise<number> {
  const options = { size, seed: 7, port: 0, rateLimit: { credits: 1_000_000, windowSeconds: 1 } };
  return withSimulatorAndWarehouse(options, db, async (sim, w) => {
    let total = 0;
    for (const name of ['events', 'registrants']) {
      const stream = resolveStream(getStream(name));
      const normalizer = createNormalizer(stream);
      const { records } = sim.truth(name);
      const byScope = new Map<number | null, Record<string, unknown>[]>();
      for (const r of records) {
        const event = stream.scope === 'event' ? Number(r.event_id) : null;
        const list = byScope.get(event) ?? [];
        list.push(r);
        byScope.set(event, list);
      }
      const known = new Set<string>();
      for (const [event, list] of byScope) {
        const scope =
          event === null
            ? { key: 'account', column: null, value: null }
            : { key: `event:${event}`, column: 'event_id', value: event };
        for (let i = 0; i < list.length; i += PAGE) {
          const rows: NormalizedRow[] = [];
          let newColumns: Record<string, ScalarType> | undefined;
          for (const raw of list.slice(i, i + PAGE)) {
            const n = normalizer.normalize(raw);
            if (!n.ok) continue;
            rows.push(n.row);
            for (const [col, type] of Object.entries(n.extras)) {
              if (known.has(col)) continue;
              known.add(col);
              newColumns ??= {};
              newColumns[col] = type;
            }
          }
          await w.loadPage({ stream, scope, runId: 'bench-lake', rows, rejected: [], newColumns });
        }
      }
      log(`built ${name}: ${records.length} records`);
      if (name === 'registrants') total = records.length;
    }
    return total;
  });
}

interface Timing {
  ms: number;
  bytes: number;
  files: number;
  rows: number;
  /** Lake only: the same run split into staging (the local export itself), upload, and the rest. */
  parts?: { stage: number; upload: number; other: number };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export interface LakeBenchOptions extends BenchOptions {
  size?: SimulatorSize;
  runs?: number;
  db?: string;
}

export async function lakeScenarios(o: LakeBenchOptions): Promise<ScenarioResult[]> {
  const size: SimulatorSize = o.size ?? (o.quick ? 'small' : 'large');
  const runs = o.runs ?? (o.quick ? 1 : 3);
  const tmp = tempDir('evsync-bench-lake-');
  const db = o.db ?? tmp.path('lake.duckdb');
  const s3 = await startLoopbackS3(['lake']);
  try {
    if (!existsSync(db)) {
      const started = Date.now();
      await buildWarehouse(db, size, o.log);
      o.log(`warehouse (${size}) built in ${seconds(Date.now() - started)}`);
    }
    const w = await Warehouse.open(db, { readOnly: true });
    const store = await openS3Store({
      bucket: 'lake',
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      partSizeBytes: 16 << 20,
      partConcurrency: 4,
      env: { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: 'bench' },
    });
    const local: Timing[] = [];
    const lake: Timing[] = [];
    try {
      for (let i = 0; i < runs; i++) {
        const sides = i % 2 === 0 ? (['local', 'lake'] as const) : (['lake', 'local'] as const);
        for (const side of sides) {
          const started = process.hrtime.bigint();
          if (side === 'local') {
            const out = tmp.path(`local-${i}`);
            const r = await w.exportParquet({ out, tables: ['registrants'] });
            const ms = Number(process.hrtime.bigint() - started) / 1e6;
            const dir = join(out, 'registrants');
            const m = JSON.parse(readFileSync(join(dir, '_evsync', 'manifest.json'), 'utf8')) as {
              files: { bytes: number }[];
            };
            local.push({
              ms,
              bytes: m.files.reduce((n, f) => n + f.bytes, 0),
              files: r.files,
              rows: r.rows.registrants ?? 0,
            });
            rmSync(out, { recursive: true, force: true });
          } else {
            const r = await exportToLake(w, {
              store,
              prefix: `bench/run-${i}`,
              account: 'default',
              stagingDir: join(tmp.dir, '.lake-staging'),
              tables: ['registrants'],
              leaseTtlMs: 900_000,
              command: 'bench/lake.ts',
              uploadConcurrency: 4,
            });
            const ms = Number(process.hrtime.bigint() - started) / 1e6;
            lake.push({
              ms,
              bytes: r.uploaded.bytes,
              files: r.uploaded.files,
              rows: r.rows.registrants ?? 0,
              parts: r.ms,
            });
          }
          const last = side === 'local' ? local[local.length - 1]! : lake[lake.length - 1]!;
          const split = last.parts
            ? ` (stage ${seconds(last.parts.stage)}, upload ${seconds(last.parts.upload)}, other ${seconds(last.parts.other)})`
            : '';
          o.log(
            `run ${i + 1} ${side}: ${last.rows} rows, ${last.files} files, ${(last.bytes / 1e6).toFixed(1)} MB in ${seconds(last.ms)}${split}`,
          );
        }
      }
    } finally {
      store.close();
      await w.close();
    }
    const rows = local[0]?.rows ?? 0;
    const mb = (local[0]?.bytes ?? 0) / 1e6;
    const localMs = median(local.map((t) => t.ms));
    const lakeMs = median(lake.map((t) => t.ms));
    // Within each lake run the staging step is the local export itself (same code, same files), so
    // stage / (stage + upload + other) is the lake's throughput relative to local under the same load; the two
    // wall times come from different minutes of a shared machine.
    const share = (t: Timing) => (t.parts ? t.parts.stage / (t.parts.stage + t.parts.upload + t.parts.other) : 0);
    const inRun = median(lake.map(share));
    const uploadMs = median(lake.map((t) => t.parts?.upload ?? 0));
    const otherMs = median(lake.map((t) => t.parts?.other ?? 0));
    const dbMb = statSync(db).size / 1e6;
    const load = loadavg()[0]?.toFixed(2);
    const walls = `local ${local.map((t) => seconds(t.ms)).join(', ')}; lake ${lake.map((t) => seconds(t.ms)).join(', ')}`;
    const detail = `${size}: ${rows} registrants, ${local[0]?.files ?? 0} files, ${mb.toFixed(1)} MB Parquet (warehouse ${dbMb.toFixed(0)} MB); ${runs} runs: ${walls}; load average ${load} on ${cpus().length} cores`;
    const name = (what: string) => `lake: ${what} (${size})`;
    return [
      figure(name('export registrants to loopback S3'), 'rows/s', round(rows / (lakeMs / 1000), 0), null, null, detail),
      figure(name('export registrants to loopback S3'), 'MB/s', round(mb / (lakeMs / 1000), 2), null, null),
      figure(name('export registrants to a local folder'), 'rows/s', round(rows / (localMs / 1000), 0), null, null),
      figure(name('export registrants to a local folder'), 'MB/s', round(mb / (localMs / 1000), 2), null, null),
      figure(
        name('upload alone'),
        'MB/s',
        round(mb / (uploadMs / 1000), 1),
        null,
        null,
        `median upload ${seconds(uploadMs)}; lease, listing and manifests ${seconds(otherMs)}`,
      ),
      figure(
        name('throughput vs local, wall times'),
        'local/lake',
        round(localMs / lakeMs, 3),
        null,
        null,
        'medians of separate runs: on a shared machine their minutes differ in load',
      ),
      // The inverse as a ceiling, so the shared `<=` comparison applies: lake/local throughput >= 0.8.
      figure(
        name('throughput vs local, same run'),
        'lake time / staging time',
        round(1 / inRun, 3),
        round(1 / TARGET_RATIO, 3),
        '<=',
        `lake at ${round(inRun, 3)}x local (target >= ${TARGET_RATIO}x); staging is the local export`,
      ),
    ];
  } finally {
    await s3.close();
    tmp.remove();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      size: { type: 'string', default: 'large' },
      runs: { type: 'string', default: '3' },
      db: { type: 'string' },
      json: { type: 'string' },
    },
  });
  const results = await lakeScenarios({
    quick: false,
    log: stderrLog,
    size: values.size as SimulatorSize,
    runs: Number(values.runs),
    ...(values.db ? { db: values.db } : {}),
  });
  const text = `${JSON.stringify({ node: process.version, results }, null, 2)}\n`;
  if (values.json) writeFileSync(values.json, text);
  process.stdout.write(text);
}
