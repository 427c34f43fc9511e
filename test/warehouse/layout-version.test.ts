/**
 * The warehouse's layout version (src/warehouse/layout): warehouses written by earlier releases open, migrate to the
 * current layout, sync to exact and report their version in `status --json`; a warehouse of a newer layout is
 * refused (exit 2, the file's bytes unchanged).
 *
 * The fixtures are real warehouses written by evsync at the commits they name: a backfill of registrants, contacts,
 * sessions and sponsors (and their field definitions) from the simulator, size tiny, seed 7, made with
 * `fixtures/make-warehouse-<commit>.ts.txt` run by `npx tsx` in a checkout of the commit, then `gzip -9`. 773f596
 * wrote layout 1 (a column per custom field), 14d1835 layout 2; both stamped `schema_version` '1'. 69cf587 wrote
 * layout 3 (the op log; its archive folder is not part of the fixture), stamped '3'. The one of
 * 14d1835 was written as a daemon's (partitions owed in `_evsync.publish_pending`, a refused delivery journaled).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulatorClient } from '../../bench/sim-client.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { runSync } from '../../src/sync/index.js';
import { rebuild } from '../../src/sync/rebuild/rebuild.js';
import { LAYOUT_VERSION, Warehouse, WarehouseLayoutError } from '../../src/warehouse/index.js';
import { run } from '../cli/helpers.js';
import { expectEqualToSource } from '../helpers/reliability.js';

const STREAMS = ['registrants', 'contacts', 'sessions', 'sponsors'] as const;

/** Each fixture with the day it was made: the simulator serves the data it was made from on any later day. */
const FIXTURES = [
  { commit: '773f596', day: '2026-11-26', layout: 1, stamped: '1' },
  { commit: '14d1835', day: '2026-11-27', layout: 2, stamped: '1' },
  { commit: '69cf587', day: '2026-11-27', layout: 3, stamped: '3' },
] as const;

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'evsync-layout-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Runs SQL on the file with DuckDB alone (not through evsync). */
async function duck(file: string, sql: string, params: string[] = []): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(file);
  const connection = await instance.connect();
  try {
    return (await connection.runAndReadAll(sql, params)).getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

async function statusJson(file: string): Promise<{ code: number; layoutVersion: unknown }> {
  const r = await run(['status', '--json', '--db', file], { cwd: dir });
  return { code: r.code, layoutVersion: r.code === 0 ? JSON.parse(r.stdout).layoutVersion : r.stderr };
}

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

describe.each(FIXTURES)('a warehouse written by $commit', ({ commit, day, layout, stamped }) => {
  let sim: Simulator;
  let path: string;

  beforeAll(async () => {
    path = join(dir, `${commit}.duckdb`);
    const gz = join(import.meta.dirname, 'fixtures', `warehouse-${commit}-tiny.duckdb.gz`);
    writeFileSync(path, gunzipSync(readFileSync(gz)));
    sim = await startSimulator({
      size: 'tiny',
      seed: 7,
      anchorDay: day,
      rateLimit: { credits: 100_000, windowSeconds: 600 },
    });
    // The same simulated account at the port it had then: bound to this simulator's address, as if it had moved.
    await duck(path, `UPDATE _evsync.meta SET value = $1 WHERE key = 'account_base_url'`, [sim.baseUrl]);
  });

  afterAll(async () => {
    await sim?.close();
  });

  it(`is stamped '${stamped}' (every release before versioning stamped '1'), and status reports layout ${layout} before it migrates`, async () => {
    expect(await duck(path, `SELECT value FROM _evsync.meta WHERE key = 'schema_version'`)).toEqual([
      { value: stamped },
    ]);
    // status opens the file read-only: it reports the layout the file holds (a '1' is read as 1) and changes nothing.
    expect(await statusJson(path)).toEqual({ code: 0, layoutVersion: Number(stamped) });
  });

  it('opens, migrates to the current layout, syncs to exact, and status --json reports the version', async () => {
    const now = () => sim.now().getTime();
    const w = await Warehouse.open(path, { now });
    try {
      expect(w.layoutVersion).toBe(LAYOUT_VERSION);
      expect((await w.query(`SELECT value FROM _evsync.meta WHERE key = 'schema_version'`)).rows).toEqual([
        { value: String(LAYOUT_VERSION) },
      ]);
      const customs = await w.query(
        `SELECT count(*) AS n FROM duckdb_columns() WHERE schema_name = 'main' AND regexp_matches(column_name, '^c_[0-9]+$')`,
      );
      expect(customs.rows).toEqual([{ n: '0' }]);
      expect(await w.listTables()).toEqual(expect.arrayContaining([...STREAMS]));
      const client = simulatorClient(sim);
      try {
        const result = await runSync(client, w, { mode: 'incremental', streams: STREAMS.join(','), deletes: false });
        expect(result.status).toBe('done');
        await expectEqualToSource(sim, w, [...STREAMS]);
        if (layout < 3) {
          // Rows loaded before the archive (layout 3) are in no archive: a rebuild of their streams is refused.
          const began = await w.archiveBegan();
          for (const stream of STREAMS) expect(began[stream], stream).toBeGreaterThan(0);
          await expect(rebuild({ live: w, streams: ['registrants'], dryRun: true })).rejects.toThrow(
            /registrants \(\d+ rows\) held rows loaded before this warehouse kept an archive/,
          );
        }
        // The history (layout 4) begins at the migration: each record's row is its first version.
        await w.buildAnalyticsViews();
        for (const stream of STREAMS) {
          const r = await w.query(
            `SELECT (SELECT count(*) FROM main.${stream}) AS live,
                    (SELECT count(*) FROM history.${stream} WHERE _valid_to IS NULL AND _follows_previous IS NULL) AS first`,
          );
          expect(r.rows[0]?.first, stream).toBe(r.rows[0]?.live);
        }
      } finally {
        await client.close();
      }
    } finally {
      await w.close();
    }
    expect(await statusJson(path)).toEqual({ code: 0, layoutVersion: LAYOUT_VERSION });
  });
});

describe('a warehouse of a newer layout', () => {
  let path: string;

  beforeAll(async () => {
    path = join(dir, 'newer.duckdb');
    const w = await Warehouse.open(path);
    await w.close();
    await duck(path, `UPDATE _evsync.meta SET value = $1 WHERE key = 'schema_version'`, [String(LAYOUT_VERSION + 1)]);
  });

  it('is refused at open, for writing and for reading, with the versions and what to do', async () => {
    const before = sha256(path);
    for (const readOnly of [false, true]) {
      const err = await Warehouse.open(path, { readOnly }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WarehouseLayoutError);
      expect(String((err as Error).message)).toContain(`layout version ${LAYOUT_VERSION + 1}`);
    }
    expect(sha256(path)).toBe(before);
  });

  it('the CLI exits 2 with the message, and the file is unchanged byte for byte', async () => {
    const before = sha256(path);
    const files = readdirSync(dir).sort();
    for (const argv of [['status', '--json'], ['sync']]) {
      const r = await run([...argv, '--db', path], {
        cwd: dir,
        env: { EVSYNC_CLIENT_ID: 'x', EVSYNC_CLIENT_SECRET: 'y', EVSYNC_BASE_URL: 'http://127.0.0.1:9/v1' },
      });
      expect([argv[0], r.code]).toEqual([argv[0], 2]);
      expect(r.stderr).toContain(`has warehouse layout version ${LAYOUT_VERSION + 1}`);
      expect(r.stderr).toContain(`up to ${LAYOUT_VERSION}`);
      expect(r.stderr).toMatch(/upgrade evsync/i);
    }
    expect(sha256(path)).toBe(before);
    expect(readdirSync(dir).sort()).toEqual(files);
    expect(existsSync(`${path}.wal`)).toBe(false);
  });
});
