/**
 * Migration of a warehouse written with a column per custom field, on open: the fixture is a real warehouse written
 * by evsync at commit 773f596 (the column-per-field shape): a backfill of registrants, contacts, sessions and
 * sponsors (and their field definitions) from the simulator, size tiny, seed 7. Made with
 * `fixtures/make-warehouse-773f596.ts.txt` run by `npx tsx` in a checkout of 773f596, then `gzip -9`.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulatorClient } from '../../bench/sim-client.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { runSync } from '../../src/sync/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { expectEqualToSource } from '../helpers/reliability.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'warehouse-773f596-tiny.duckdb.gz');
const FIXTURE_DAY = '2026-11-26';
const STREAMS = ['registrants', 'contacts', 'sessions', 'sponsors'] as const;

type Row = Record<string, unknown>;

/** What the old file holds, read with DuckDB alone (before evsync opens it). */
async function readOld(path: string) {
  const instance = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY' });
  const connection = await instance.connect();
  const all = async (sql: string): Promise<Row[]> => (await connection.runAndReadAll(sql)).getRowObjectsJson() as Row[];
  const tables: Record<string, { rows: number; answers: Map<string, Record<string, unknown>>; customs: number }> = {};
  for (const table of STREAMS) {
    const columns = await all(
      `SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = '${table}'`,
    );
    const customs = columns.filter((c) => /^c_\d+$/.test(String(c.column_name)));
    const rows = await all(`SELECT * FROM main.${table}`);
    const answers = new Map<string, Record<string, unknown>>();
    for (const row of rows) {
      const own: Record<string, unknown> = {};
      for (const c of customs) {
        const name = String(c.column_name);
        const v = row[name];
        if (v === null || v === '') continue;
        const value = c.data_type === 'JSON' ? JSON.parse(String(v)) : v;
        if (Array.isArray(value) && value.length === 0) continue;
        own[name] = value;
      }
      answers.set(String(row.id), own);
    }
    tables[table] = { rows: rows.length, answers, customs: customs.length };
  }
  const cursors = await all(`SELECT * FROM _evsync.cursors ORDER BY ALL`);
  connection.closeSync();
  instance.closeSync();
  return { tables, cursors };
}

let dir: string;
let path: string;
let old: Awaited<ReturnType<typeof readOld>>;
let w: Warehouse;
let sim: Simulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'evsync-migrate-'));
  const pristine = join(dir, 'old.duckdb');
  writeFileSync(pristine, gunzipSync(readFileSync(FIXTURE)));
  path = join(dir, 'warehouse.duckdb');
  copyFileSync(pristine, path);
  old = await readOld(pristine);
  // The day the fixture was made: the simulator serves the data it was made from on any later day.
  sim = await startSimulator({
    size: 'tiny',
    seed: 7,
    anchorDay: FIXTURE_DAY,
    rateLimit: { credits: 100_000, windowSeconds: 600 },
  });
  await rebind(path, sim.baseUrl);
  w = await Warehouse.open(path);
});

/**
 * The fixture's account is the same simulated account (same seed, same client id) at the port it had then: the copy
 * is bound to this simulator's address, as if the service had moved. Nothing else of the file is touched.
 */
async function rebind(file: string, baseUrl: string): Promise<void> {
  const instance = await DuckDBInstance.create(file);
  const connection = await instance.connect();
  await connection.run(`UPDATE _evsync.meta SET value = $1 WHERE key = 'account_base_url'`, [baseUrl]);
  connection.closeSync();
  instance.closeSync();
}

afterAll(async () => {
  await w?.close();
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a warehouse of the column-per-field shape, opened', () => {
  it('the fixture is of the old shape (c_<id> columns on every stream with custom fields)', () => {
    for (const table of STREAMS) expect([table, old.tables[table]!.customs > 0]).toEqual([table, true]);
  });

  it('folds every c_<id> column into custom_fields, rows and their non-empty answers kept', async () => {
    for (const table of STREAMS) {
      const columns = (
        await w.query(
          `SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = ?`,
          [table],
        )
      ).rows;
      expect(columns.filter((c) => String(c.column_name).startsWith('c_'))).toEqual([]);
      expect(columns.find((c) => c.column_name === 'custom_fields')?.data_type).toBe('JSON');
      const { rows } = await w.query(`SELECT id, custom_fields FROM main.${table}`);
      expect(rows).toHaveLength(old.tables[table]!.rows);
      const got = new Map(
        rows.map((r) => [String(r.id), r.custom_fields === null ? {} : JSON.parse(String(r.custom_fields))]),
      );
      expect(Object.fromEntries(got)).toEqual(Object.fromEntries(old.tables[table]!.answers));
    }
    const changes = await w.query(
      `SELECT table_name FROM _evsync.schema_changes WHERE column_name = 'custom_fields' ORDER BY 1`,
    );
    expect(changes.rows.map((r) => r.table_name)).toEqual([...STREAMS].sort());
  });

  it('keeps the cursors, and the folded rows equal the source as a sync of the new shape writes them', async () => {
    expect((await w.query(`SELECT * FROM _evsync.cursors ORDER BY ALL`)).rows).toEqual(old.cursors);
    await expectEqualToSource(sim, w, [...STREAMS]);
  });

  it('builds the per-event views and drops the views of the old shape', async () => {
    const report = await w.buildAnalyticsViews();
    expect(report.warnings).toEqual([]);
    const { rows } = await w.query(`SELECT view_name FROM duckdb_views() WHERE schema_name = 'analytics'`);
    const names = rows.map((r) => String(r.view_name));
    expect(names).not.toContain('registrants_labeled');
    expect(names.filter((n) => /^registrants_event_\d+$/.test(n)).length).toBeGreaterThan(0);
    expect(names).toEqual(expect.arrayContaining(['contacts_labeled', 'sessions_labeled', 'custom_field_values']));
    const answers = [...STREAMS].reduce(
      (n, t) => n + [...old.tables[t]!.answers.values()].reduce((m, a) => m + Object.keys(a).length, 0),
      0,
    );
    expect((await w.query(`SELECT count(*) AS n FROM analytics.custom_field_values`)).rows).toEqual([
      { n: String(answers) },
    ]);
  });

  it('an incremental sync after it resumes from the kept cursors and rewrites nothing', async () => {
    const client = simulatorClient(sim);
    try {
      const result = await runSync(client, w, { mode: 'incremental', streams: STREAMS.join(','), deletes: false });
      expect(result.status).toBe('done');
      for (const table of STREAMS) {
        const s = result.streams[table];
        expect([table, s?.inserted ?? 0, s?.updated ?? 0]).toEqual([table, 0, 0]);
      }
      await expectEqualToSource(sim, w, [...STREAMS]);
    } finally {
      await client.close();
    }
  });
});
