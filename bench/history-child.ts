/**
 * The measured side of the history scenario (history.ts), in a process of its own: a simulator (in its own process)
 * is backfilled into a warehouse with the history on or off, then changed in rounds (`--changes` registrant changes a
 * round: status moves, other fields, inserts, deletes) each followed by an incremental sync. What is timed is the
 * process's CPU over the incremental syncs alone (the live path that writes versions). Prints one JSON line.
 *
 *   node dist/bench/history-child.js --size small --history on|off --rounds 10 --changes 1000 --dir <folder>
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { StreamOverride } from '../connectors/index.js';
import type { SimulatorSize } from '../src/simulator/index.js';
import { runSync } from '../src/sync/index.js';
import { Warehouse } from '../src/warehouse/index.js';
import { simulatorClient } from './sim-client.js';
import { startSimProcess } from './sim-process.js';

export interface HistoryChildReport {
  history: 'on' | 'off';
  /** Registrant changes the simulator made (updates, inserts, deletes). */
  changes: number;
  /** Rows the incremental syncs wrote or marked (inserted + updated + deleted). */
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
    dir: { type: 'string' },
  },
});
if (!values.dir) throw new Error('history-child: --dir is required');
const history = values.history === 'off' ? 'off' : 'on';
const sim = await startSimProcess({ size: values.size as SimulatorSize, seed: 5, rateLimit: '10000000/600' });
const control = sim.baseUrl.replace(/\/v1$/, '/_control');
const post = async (path: string, body: unknown) =>
  (await fetch(`${control}/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then((r) => r.json())) as Record<string, Record<string, number>>;
const client = simulatorClient(sim, { rateLimit: { limit: 10_000_000, windowMs: 600_000 } });
const file = join(values.dir, `history-${history}.duckdb`);
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
  for (let round = 0; round < Number(values.rounds); round++) {
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
    const parquet = join(values.dir, `history-${history}.parquet`);
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
