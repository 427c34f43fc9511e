/**
 * Analytics while the daemon runs, as an analyst meets it: `serve --parquet-out --snapshot` as a real process,
 * changes made at the service and delivered by webhook, and the Parquet and the snapshot read by ANOTHER process
 * (what the duckdb CLI, Python or a BI tool does) until they equal the simulator's ground truth, while deliveries
 * keep being answered; a reader holding the previous snapshot keeps reading it through a replace.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { run } from '../cli/helpers.js';
import { DuckDbReader } from '../helpers/duckdb-reader.js';
import { eventually, useDaemons } from './daemon-process.js';
import { mutateEach, useServeEnv } from './helpers.js';

const SECRET = 'daemon-publish-secret-1f2e3d4c5b6a7980';
const STREAMS = 'events,registrants,sessions';

let sim: Simulator;
let dir: string;
let env: Record<string, string>;
useServeEnv({ seed: 13, db: 'publish.duckdb', secret: SECRET }, (e) => {
  ({ sim, dir, env } = e);
});

const daemons = useDaemons();

/** `id@updated_at` of the current registrants at the service. */
function truth(): string[] {
  return sim
    .truth('registrants')
    .records.map((r) => `${String(r.id)}@${String(r.updated_at)}`)
    .sort();
}

const ROWS = `list(CAST(id AS VARCHAR) || '@' || strftime(updated_at, '%Y-%m-%d %H:%M:%S') ORDER BY CAST(id AS VARCHAR) || '@' || strftime(updated_at, '%Y-%m-%d %H:%M:%S')) AS rows`;

async function rows(reader: DuckDbReader, from: string): Promise<string[]> {
  const [row] = await reader.query(`SELECT ${ROWS} FROM ${from} WHERE _deleted_at IS NULL`);
  return ((row?.rows as string[] | null) ?? []).slice().sort();
}

/**
 * What another process reads in the snapshot and in the Parquet now; null when a glob read met a file a publish
 * removed between DuckDB's listing and its read (README, "What readers see": a glob reader retries).
 */
async function readers(snapshot: string, parquet: string): Promise<{ snap: string[]; pq: string[] } | null> {
  const reader = await DuckDbReader.open(snapshot);
  try {
    return {
      snap: await rows(reader, 'main.registrants'),
      pq: await rows(reader, `read_parquet('${join(parquet, 'registrants')}/**/*.parquet', hive_partitioning = true)`),
    };
  } catch (err) {
    if (err instanceof Error && /No such file or directory/.test(err.message)) return null;
    throw err;
  } finally {
    await reader.close();
  }
}

describe('serve --parquet-out --snapshot', () => {
  it('keeps the Parquet and a snapshot other processes read equal to the source while it runs', async () => {
    expect((await run(['backfill', '--streams', STREAMS], { cwd: dir, env })).code).toBe(0);
    const parquet = join(dir, 'parquet');
    const snapshot = join(dir, 'snapshot.duckdb');
    const d = await daemons.start(
      [
        'serve',
        '--listen',
        '127.0.0.1:0',
        '--streams',
        STREAMS,
        '--no-catch-up',
        '--parquet-out',
        parquet,
        '--snapshot',
        snapshot,
        '--publish-every',
        '1',
      ],
      env,
    );
    // New outputs are published whole at start.
    await eventually(() => existsSync(snapshot) && existsSync(join(parquet, 'registrants')));
    await eventually(async () => {
      const now = await readers(snapshot, parquet);
      return JSON.stringify(now) === JSON.stringify({ snap: truth(), pq: truth() });
    });
    // An analyst keeps the first snapshot open across the replaces that follow.
    const before = truth();
    const holder = await DuckDbReader.open(snapshot);
    try {
      const install = await run(['webhooks', 'install', '--url', d.url!, '--streams', STREAMS], { cwd: dir, env });
      expect(install.code, install.stderr).toBe(0);
      const since = sim.webhooks.deliveries().at(-1)?.id ?? 0;
      for (let i = 0; i < 10; i++) {
        sim.mutate(3, { streams: ['registrants'] });
        sim.advanceClock(1);
      }
      mutateEach(sim, 1);
      expect(await sim.webhooks.idle()).toBe(true);
      const ours = sim.webhooks.deliveries(since).filter((x) => x.url === d.url);
      expect(ours.length).toBeGreaterThan(0);
      expect(ours.filter((x) => x.status !== 'delivered')).toEqual([]);
      expect(truth()).not.toEqual(before);

      // Within the cadence (and the applier's moment), both outputs equal the source again.
      await eventually(async () => {
        const now = await readers(snapshot, parquet);
        return JSON.stringify(now) === JSON.stringify({ snap: truth(), pq: truth() });
      });
      expect(await rows(holder, 'main.registrants')).toEqual(before);
    } finally {
      await holder.close();
    }

    // What publishing costs is reported.
    const s = await run(['status', '--json'], { cwd: dir, env });
    const publish = (JSON.parse(s.stdout) as { daemon: { publish: Record<string, unknown> } }).daemon.publish;
    expect(publish.publishes).toBeGreaterThanOrEqual(2);
    expect(publish.failures).toBe(0);
    expect(publish.lastDurationMs).toEqual(expect.any(Number));
    expect(publish.lastCpuMs).toEqual(expect.any(Number));
    expect(publish.lastBytes).toEqual(expect.any(Number));
    const text = await run(['status'], { cwd: dir, env });
    expect(text.stdout).toMatch(/Publishing \(--parquet-out \/ --snapshot\): \d+ publish\(es\), 0 failed/);
    expect(text.stdout).toMatch(/the snapshot: \d+ part\(s\) written, \d+ unchanged, \d+\.\d MiB for its readers/);
    expect(await d.stop()).toEqual({ code: 0, signal: null });
  }, 180_000);
});
