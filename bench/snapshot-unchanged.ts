/**
 * What `sync --snapshot` costs after a run that changed nothing (issue 35): a first publish of a warehouse's
 * snapshot, then a publish with nothing changed since, which compares the warehouse's digest with the one the
 * snapshot recorded and writes nothing. For each: wall time, CPU of this process, bytes written to the target.
 *
 *   npx tsx bench/snapshot-unchanged.ts [--size medium] [--db path]   -> bench/results/snapshot-unchanged-<size>.json
 *
 * The warehouse is built by a backfill of every stream from the unthrottled simulator (kept with --db, reused when
 * the file exists).
 */
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { SimulatorSize } from '../src/simulator/index.js';
import { Warehouse } from '../src/warehouse/index.js';
import { stderrLog, tempDir } from './lib.js';
import { backfillAll } from './sim-warehouse.js';

interface Publish {
  unchanged: boolean;
  wallSeconds: number;
  cpuSeconds: number;
  bytesWritten: number;
}

async function publish(w: Warehouse, target: string): Promise<Publish> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const r = await w.publishSnapshot(target);
  const used = process.cpuUsage(cpu);
  return {
    unchanged: r.unchanged,
    wallSeconds: Math.round(performance.now() - started) / 1000,
    cpuSeconds: Math.round((used.user + used.system) / 1000) / 1000,
    bytesWritten: r.bytes,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { size: { type: 'string', default: 'medium' }, db: { type: 'string' } } });
  const size = values.size as SimulatorSize;
  const temp = tempDir('evsync-bench-snapshot-');
  const db = values.db ?? temp.path('w.duckdb');
  try {
    if (!existsSync(db)) await backfillAll(db, size, stderrLog);
    const w = await Warehouse.open(db);
    try {
      const target = temp.path('snap.duckdb');
      const first = await publish(w, target);
      const unchanged = await publish(w, target);
      const result = {
        size,
        machine: { cores: cpus().length, load: loadavg().map((l) => Math.round(l * 100) / 100) },
        warehouseBytes: statSync(db).size,
        first,
        unchanged,
      };
      const out = join(import.meta.dirname, 'results', `snapshot-unchanged-${size}.json`);
      writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
      console.log(JSON.stringify(result, null, 2));
    } finally {
      await w.close();
    }
  } finally {
    temp.remove();
  }
}

await main();
