/**
 * `node publish-child.js --db <file> --out <dir>`: one publisher measurement in a process of its own, so its CPU
 * time and peak RSS are the publish's (plus the opened warehouse), not the warehouse build's. Prints one JSON line.
 *
 *   1. a full publish (every table to a new Parquet folder, then the snapshot), as a daemon's first start does;
 *   2. an incremental publish: two events of registrants and one of sessions touched, then the snapshot (only
 *      those two tables copied again); then the same four more times (the snapshot file's size after each);
 *   3. the snapshot copy method compared: CREATE TABLE AS per table (what publishSnapshot does) against
 *      `COPY FROM DATABASE` of the whole file, alternating, 3 runs each.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type PublishStats, startPublisher } from '../src/daemon/index.js';
import { COPY_FILE_OPTIONS, Warehouse } from '../src/warehouse/index.js';

export interface PublishReport {
  rssAfterOpenMb: number;
  full: PublishStats;
  fullPeakRssMb: number;
  incremental: PublishStats;
  incrementalPeakRssMb: number;
  repeated: { ms: number; snapshotBytes: number }[];
  touched: Record<string, number[]>;
  rows: Record<string, number>;
  copyMethods: { ctasMs: number[]; copyDatabaseMs: number[] };
}

const { values } = parseArgs({ options: { db: { type: 'string' }, out: { type: 'string' } } });
if (!values.db || !values.out) throw new Error('usage: publish-child --db <file> --out <dir>');
const out = values.out;
const peakMb = () => Math.round(process.resourceUsage().maxRSS / 1024);

const warehouse = await Warehouse.open(values.db);
const rssAfterOpenMb = Math.round(process.memoryUsage().rss / 1024 / 1024);
const rows = await warehouse.tableCounts();
const publisher = await startPublisher({
  warehouse,
  parquetOut: join(out, 'parquet'),
  snapshot: join(out, 'snapshot.duckdb'),
  everyMs: 3_600_000,
  log: (level, m) => process.stderr.write(`[publish] ${level} ${m}\n`),
});
await publisher.flush();
const full = publisher.stats();
const fullPeakRssMb = peakMb();

const events = await warehouse.query(
  `SELECT event_id, count(*) AS n FROM registrants GROUP BY event_id ORDER BY n DESC LIMIT 2`,
);
const touched = {
  registrants: events.rows.map((r) => Number(r.event_id)),
  sessions: [Number(events.rows[0]?.event_id)],
};
for (const [table, ids] of Object.entries(touched)) publisher.touched(table, ids);
await publisher.flush();
const incremental = publisher.stats();
const incrementalPeakRssMb = peakMb();
// The same touches again, a few times: does the snapshot file grow as tables are replaced inside it?
const repeated: { ms: number; snapshotBytes: number }[] = [];
for (let i = 0; i < 4; i++) {
  for (const [table, ids] of Object.entries(touched)) publisher.touched(table, ids);
  await publisher.flush();
  const s = publisher.stats();
  repeated.push({ ms: Math.round(s.lastDurationMs ?? 0), snapshotBytes: s.lastSnapshot?.bytes ?? 0 });
}
await publisher.stop();

const catalog = String((await warehouse.query('SELECT current_database() AS c')).rows[0]?.c);
const copyMethods = { ctasMs: [] as number[], copyDatabaseMs: [] as number[] };
for (let i = 0; i < 6; i++) {
  const file = join(out, `copy-${i}.duckdb`);
  const started = performance.now();
  if (i % 2 === 0) {
    await warehouse.publishSnapshot(file);
    copyMethods.ctasMs.push(Math.round(performance.now() - started));
  } else {
    await warehouse.query(`ATTACH '${file}' AS copy_${i} (${COPY_FILE_OPTIONS})`);
    await warehouse.query(`COPY FROM DATABASE "${catalog}" TO copy_${i}`);
    await warehouse.query(`DETACH copy_${i}`);
    copyMethods.copyDatabaseMs.push(Math.round(performance.now() - started));
  }
  rmSync(file, { force: true });
}
await warehouse.close();
const report: PublishReport = {
  rssAfterOpenMb,
  full,
  fullPeakRssMb,
  incremental,
  incrementalPeakRssMb,
  repeated,
  touched,
  rows,
  copyMethods,
};
process.stdout.write(`${JSON.stringify(report)}\n`);
