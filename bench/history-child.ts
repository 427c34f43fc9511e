/**
 * The measured side of the history scenario (history.ts), in a process of its own: a simulator (in its own process)
 * is backfilled into a warehouse with the history on or off, then changed in rounds (`--changes` registrant changes a
 * round: status moves, other fields, inserts, deletes). `--feed poll`: each round followed by an incremental sync;
 * `--feed webhook`: the changes delivered by the simulator's webhooks to a receiver in this process and applied
 * (`startCapture`, as `serve` runs it). What is timed is the process's CPU over the syncs, or from the round's changes
 * to the last delivery applied (the live path that writes versions). Prints one JSON line.
 *
 *   node dist/bench/history-child.js --size small --history on|off --feed poll|webhook --rounds 10 --changes 1000
 *        --dir <folder>
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { StreamOverride } from '../connectors/index.js';
import type { SimulatorSize } from '../src/simulator/index.js';
import { installWebhooks } from '../src/sync/capture/install.js';
import { capturedObjects } from '../src/sync/capture/objects.js';
import { startCapture } from '../src/sync/capture/server.js';
import { runSync } from '../src/sync/index.js';
import { Warehouse } from '../src/warehouse/index.js';
import { simulatorClient } from './sim-client.js';
import { startSimProcess } from './sim-process.js';

export interface HistoryChildReport {
  history: 'on' | 'off';
  /** Registrant changes the simulator made (updates, inserts, deletes). */
  changes: number;
  /** Rows the incremental syncs wrote or marked (inserted + updated + deleted); deliveries applied (webhook). */
  written: number;
  /** Versions in `_history.registrants` (0 with the history off). */
  versions: number;
  cpuMs: number;
  wallMs: number;
  /** The warehouse file after a CHECKPOINT. */
  fileBytes: number;
  /** `_history.registrants` written as zstd Parquet (what readers' copies carry). */
  historyParquetBytes: number;
}

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: 'small' },
    history: { type: 'string', default: 'on' },
    rounds: { type: 'string', default: '10' },
    changes: { type: 'string', default: '1000' },
    feed: { type: 'string', default: 'poll' },
    dir: { type: 'string' },
  },
});
if (!values.dir) throw new Error('history-child: --dir is required');
const history = values.history === 'off' ? 'off' : 'on';
/** The receiver's shared secret (a benchmark's own, never a credential). */
const SECRET = 'history-bench-secret-0123456789abcdef';
const sim = await startSimProcess({ size: values.size as SimulatorSize, seed: 5, rateLimit: '10000000/600' });
const control = sim.baseUrl.replace(/\/v1$/, '/_control');
const post = async (path: string, body: unknown) =>
  (await fetch(`${control}/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then((r) => r.json())) as Record<string, Record<string, number>>;
const client = simulatorClient(sim, { rateLimit: { limit: 10_000_000, windowMs: 600_000 } });
const file = join(values.dir, `history-${values.feed}-${history}.duckdb`);
const w = await Warehouse.open(file, { archive: false });
try {
  const overrides: Record<string, StreamOverride> = history === 'off' ? { registrants: { history: false } } : {};
  const streams = 'events,registrants';
  const backfill = await runSync(client, w, { mode: 'backfill', streams, overrides });
  if (backfill.status !== 'done') throw new Error(`backfill ended ${backfill.status}`);
  let changes = 0;
  let written = 0;
  let cpuUs = 0;
  let wallMs = 0;
  if (values.feed === 'webhook') {
    const capture = await startCapture({
      warehouse: w,
      client,
      secret: SECRET,
      streams: ['events', 'registrants'],
      overrides,
      listen: '127.0.0.1:0',
    });
    const objects = capturedObjects()
      .filter((c) => c.stream.name === 'registrants')
      .map((c) => c.object);
    await installWebhooks(client, {
      url: capture.url,
      secret: SECRET,
      secretHeader: 'X-Evsync-Secret',
      groupName: 'evsync',
      objects,
      paths: { webhooks: '/webhooks', groups: '/webhook-groups' },
    });
    try {
      for (let round = 0; round < Number(values.rounds); round++) {
        const cpu = process.cpuUsage();
        const t0 = performance.now();
        const s = await post('mutate', { n: Number(values.changes), streams: ['registrants'] });
        for (const kind of ['inserted', 'updated', 'deleted']) changes += s[kind]?.registrants ?? 0;
        await post('clock', { advance: 1 });
        await fetch(`${control}/webhooks/idle?timeout=600000`);
        await capture.applier.idle();
        wallMs += performance.now() - t0;
        const used = process.cpuUsage(cpu);
        cpuUs += used.user + used.system;
      }
      written = (await w.capture.counts()).applied;
    } finally {
      await capture.close();
    }
  }
  for (let round = 0; round < (values.feed === 'webhook' ? 0 : Number(values.rounds)); round++) {
    await post('clock', { advance: 60 });
    const s = await post('mutate', { n: Number(values.changes), streams: ['registrants'] });
    for (const kind of ['inserted', 'updated', 'deleted']) changes += s[kind]?.registrants ?? 0;
    await post('clock', { advance: 60 });
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    const r = await runSync(client, w, {
      mode: 'incremental',
      streams,
      overrides,
      lagSeconds: 0,
      pastEventPollHours: 0,
      sweepEveryHours: 0,
      snapshotEveryHours: 0,
    });
    wallMs += performance.now() - t0;
    const used = process.cpuUsage(cpu);
    cpuUs += used.user + used.system;
    if (r.status !== 'done') throw new Error(`sync ${round} ended ${r.status}: ${r.errors.join('; ')}`);
    const reg = r.streams?.registrants;
    written += (reg?.inserted ?? 0) + (reg?.updated ?? 0) + (reg?.deleted ?? 0);
  }
  const made = await w.query(
    `SELECT count(*) AS n FROM duckdb_tables() WHERE schema_name = '_history' AND table_name = 'registrants'`,
  );
  const versions =
    Number(made.rows[0]?.n) > 0
      ? Number((await w.query(`SELECT count(*) AS n FROM _history.registrants`)).rows[0]?.n ?? 0)
      : 0;
  let historyParquetBytes = 0;
  if (versions > 0) {
    const parquet = join(values.dir, `history-${values.feed}-${history}.parquet`);
    await w.query(`COPY (SELECT * FROM _history.registrants) TO '${parquet}' (FORMAT parquet, COMPRESSION zstd)`);
    historyParquetBytes = statSync(parquet).size;
  }
  await w.checkpoint();
  const report: HistoryChildReport = {
    history,
    changes,
    written,
    versions,
    cpuMs: cpuUs / 1000,
    wallMs,
    fileBytes: statSync(file).size,
    historyParquetBytes,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
} finally {
  await w.close();
  await client.close();
  await sim.stop();
}
