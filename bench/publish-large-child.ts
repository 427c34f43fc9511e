/**
 * `node publish-large-child.js --mode snapshot|publisher --db <file> --out <dir>`: three publishes of a readers' copy
 * in a process of its own (publish-large.ts), each measured alone; prints one JSON line (PublishLargeReport).
 *
 *   --mode snapshot   `warehouse.publishSnapshot(target)` to `<out>/snapshot/snapshot.duckdb`
 *   --mode publisher  the daemon's publisher (startPublisher) with `parquetOut` `<out>/parquet` and that snapshot
 *
 * The publishes: first (the outputs do not exist), unchanged (nothing changed since: the snapshot published again;
 * the publisher told a registrants partition was touched without its rows changing), one change (one registrant's
 * `notes` updated, with `_synced_at` and `_run_id` as every write sets them, then published; the publisher told of
 * its event). The warehouse at `--db` is changed: give a copy.
 *
 * Per publish: wall and process CPU time, bytes written measured from the file system (fs-delta.ts: files created
 * or replaced under the output folders, whatever the publish reports), and peak RSS. The peak is reset before each
 * publish (Linux: `5` written to /proc/self/clear_refs resets the high-water mark that `maxRSS` reads), so each
 * publish's peak is its own and not the highest so far; where that cannot be done, `peakRssReset` is false and the
 * peaks are cumulative.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { startPublisher } from '../src/daemon/index.js';
import { type SnapshotResult, Warehouse } from '../src/warehouse/index.js';
import { listFiles, writtenBetween } from './fs-delta.js';

export const PHASES = ['first', 'unchanged', 'change'] as const;
export type Phase = (typeof PHASES)[number];

export interface MeasuredPublish {
  phase: Phase;
  wallSeconds: number;
  cpuSeconds: number;
  /** Bytes of the files created or replaced under the outputs (the file system's account). */
  bytesWritten: number;
  filesWritten: number;
  filesRemoved: number;
  /** Every file under the outputs afterwards: what readers read. */
  outputBytes: number;
  peakRssMb: number;
  /** Up to 12 of the files written, relative to the output folder. */
  written: string[];
  /** What the publish itself reported (SnapshotResult or the publisher's stats), for contrast. */
  reported: Record<string, unknown>;
}

export interface PublishLargeReport {
  mode: 'snapshot' | 'publisher';
  rssAfterOpenMb: number;
  peakRssReset: boolean;
  rows: Record<string, number>;
  /** The row changed before the one-change publish, and how many registrants its event has. */
  change: { table: 'registrants'; id: string; eventId: number; eventRows: number };
  publishes: MeasuredPublish[];
}

const { values } = parseArgs({
  options: { mode: { type: 'string' }, db: { type: 'string' }, out: { type: 'string' } },
});
const mode = values.mode;
if ((mode !== 'snapshot' && mode !== 'publisher') || !values.db || !values.out) {
  throw new Error('usage: publish-large-child --mode snapshot|publisher --db <file> --out <dir>');
}
const out = values.out;
const snapshot = join(out, 'snapshot', 'snapshot.duckdb');
const parquet = join(out, 'parquet');
const outputs = mode === 'snapshot' ? [join(out, 'snapshot')] : [join(out, 'snapshot'), parquet];
// The snapshot's folder alone holds it (and its parts, if any): everything under it is the snapshot's.
mkdirSync(join(out, 'snapshot'), { recursive: true });

/** Resets the process's peak RSS to its current RSS; false where the kernel does not let it. */
function resetPeak(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

let peakRssReset = true;
const s3 = (x: number) => Math.round(x) / 1000;

async function measured(phase: Phase, publish: () => Promise<Record<string, unknown>>): Promise<MeasuredPublish> {
  global.gc?.();
  peakRssReset = resetPeak() && peakRssReset;
  const before = listFiles(outputs);
  const cpu = process.cpuUsage();
  const started = performance.now();
  const reported = await publish();
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  const delta = writtenBetween(before, listFiles(outputs));
  return {
    phase,
    wallSeconds: s3(wallMs),
    cpuSeconds: s3((used.user + used.system) / 1000),
    bytesWritten: delta.bytes,
    filesWritten: delta.files,
    filesRemoved: delta.removed,
    outputBytes: delta.totalBytes,
    peakRssMb,
    written: delta.paths.slice(0, 12).map((p) => relative(out, p)),
    reported,
  };
}

const warehouse = await Warehouse.open(values.db);
const rssAfterOpenMb = Math.round(process.memoryUsage().rss / 1024 / 1024);
const rows = await warehouse.tableCounts();

// The row to change: the first registrant (by id) of the event with the most registrants, so the change lands in
// the largest partition a Parquet output keeps per event (the dearest single change to publish).
const picked = await warehouse.query(
  `SELECT r.event_id, e.n, min(r.id) AS id
     FROM registrants r JOIN (SELECT event_id, count(*) AS n FROM registrants GROUP BY event_id) e USING (event_id)
    WHERE r._deleted_at IS NULL
    GROUP BY r.event_id, e.n ORDER BY e.n DESC, r.event_id LIMIT 1`,
);
const row = picked.rows[0];
if (!row) throw new Error('publish-large-child: no registrant to change');
const change = {
  table: 'registrants' as const,
  id: String(row.id),
  eventId: Number(row.event_id),
  eventRows: Number(row.n),
};

/** One registrant changed for real, as a write of the warehouse leaves it (its data, `_synced_at`, `_run_id`). */
async function changeOneRow(): Promise<void> {
  const now = new Date().toISOString().replace('T', ' ').slice(0, 23);
  await warehouse.query(
    `UPDATE registrants SET notes = coalesce(notes, '') || ' [bench change]', _synced_at = ?, _run_id = 'bench-change'
      WHERE id = ?`,
    [now, change.id],
  );
}

function snapshotReport(r: SnapshotResult): Record<string, unknown> {
  // `size` (the total readers read) comes with the snapshot of parts; absent before it.
  const size = (r as SnapshotResult & { size?: number }).size;
  return { bytes: r.bytes, ...(size === undefined ? {} : { size }), copied: r.copied.length, ms: Math.round(r.ms) };
}

const publishes: MeasuredPublish[] = [];
if (mode === 'snapshot') {
  const publish = async () => snapshotReport(await warehouse.publishSnapshot(snapshot));
  publishes.push(await measured('first', publish));
  publishes.push(await measured('unchanged', publish));
  await changeOneRow();
  publishes.push(await measured('change', publish));
} else {
  // Started inside the first measure: a publisher on new outputs publishes every table at once (start()).
  let publisher: Awaited<ReturnType<typeof startPublisher>> | null = null;
  const stats = () => {
    const s = publisher!.stats();
    return {
      lastBytes: s.lastBytes,
      lastCpuMs: Math.round(s.lastCpuMs ?? 0),
      lastDurationMs: Math.round(s.lastDurationMs ?? 0),
      lastParquet: s.lastParquet,
      lastSnapshot: s.lastSnapshot,
      publishes: s.publishes,
    };
  };
  publishes.push(
    await measured('first', async () => {
      publisher = await startPublisher({
        warehouse,
        parquetOut: parquet,
        snapshot,
        everyMs: 3_600_000,
        log: (level, m) => process.stderr.write(`[publish] ${level} ${m}\n`),
      });
      await publisher.flush();
      return stats();
    }),
  );
  // Nothing changed: the partition is touched (as a webhook for an identical record, or a run that found nothing
  // new, would) and published; a publish that costs what changed writes nothing.
  publishes.push(
    await measured('unchanged', async () => {
      publisher!.touched('registrants', [change.eventId]);
      await publisher!.flush();
      return stats();
    }),
  );
  await changeOneRow();
  publishes.push(
    await measured('change', async () => {
      publisher!.touched('registrants', [change.eventId]);
      await publisher!.flush();
      return stats();
    }),
  );
  await publisher!.stop();
}
await warehouse.close();
const report: PublishLargeReport = { mode, rssAfterOpenMb, peakRssReset, rows, change, publishes };
process.stdout.write(`${JSON.stringify(report)}\n`);
