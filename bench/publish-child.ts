/**
 * `node publish-child.js --db <file> --out <dir>`: one publisher measurement in a process of its own, so its CPU
 * time and peak RSS are the publish's (plus the opened warehouse), not the warehouse build's. Prints one JSON line.
 *
 *   1. a full publish (every table to a new Parquet folder, then the snapshot), as a daemon's first start does;
 *   2. a publish of touched partitions whose rows did not change (two events of registrants, one of sessions): the
 *      fingerprints are read and nothing is written; then the same four more times.
 * (The copy of the whole snapshot this bench once compared, CREATE TABLE AS against COPY FROM DATABASE, is gone:
 * the snapshot is a catalogue over Parquet parts, bench/publish-large.ts measures it, on `large`.)
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type PublishStats, startPublisher } from '../src/daemon/index.js';
import { Warehouse } from '../src/warehouse/index.js';

export interface PublishReport {
  rssAfterOpenMb: number;
  full: PublishStats;
  fullPeakRssMb: number;
  incremental: PublishStats;
  incrementalPeakRssMb: number;
  repeated: { ms: number; snapshotBytes: number }[];
  touched: Record<string, number[]>;
  rows: Record<string, number>;
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
};
process.stdout.write(`${JSON.stringify(report)}\n`);
