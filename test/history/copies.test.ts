/**
 * The history in readers' copies (issue 37), against the simulator: a backfill, then rounds of changes polled (so
 * `history.registrants` holds updates, status moves, deletes found by sweeps, new records), then
 *
 * - the snapshot, opened by another process alone, answers `history.registrants` and an as-of query as the
 *   warehouse does;
 * - the Parquet output's history files (`<out>/history/registrants/event_id=<n>/`), and the lake's
 *   (`<prefix>/history/registrants/account=<id>/event_id=<n>/`), read back by DuckDB, equal the warehouse's
 *   `history.registrants` for the records that changed (a record that never changed is its row in the stream's output);
 * - a second publish or export with nothing changed writes no history file (no byte, no upload);
 * - after one record changes, only its event's history partition is written again (and its stream partition).
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportToLake } from '../../src/outputs/lake/export-lake.js';
import { stagingDirFor } from '../../src/outputs/lake-output.js';
import { runSync } from '../../src/sync/index.js';
import { DuckDbReader } from '../helpers/duckdb-reader.js';
import { filesUnder } from '../helpers/files.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { download, duck, listKeys, openTestStore, useTestLake } from '../lake/helpers.js';
import { pollChanges, snapshot, utcText } from './helpers.js';

const testLake = useTestLake('evsync-history-copies-');
let h: Harness;
/** When each poll ran (UTC text). */
const polledAt: string[] = [];

async function poll(): Promise<void> {
  await pollChanges(h);
  polledAt.push(snapshot(h.sim).at);
}

/** Every column as text (NULL kept), so both sides' clients give the same values. */
function asText(rows: readonly Record<string, unknown>[]): Record<string, string | null>[] {
  return rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === null ? null : String(v)])));
}

const HISTORY = `SELECT CAST(COLUMNS(*) AS VARCHAR) FROM history.registrants ORDER BY id, _valid_from`;
/** What the Parquet and lake outputs hold: every version of the records that changed (the others are their row). */
const CHANGED = `SELECT CAST(COLUMNS(*) AS VARCHAR) FROM history.registrants
  WHERE id IN (SELECT id FROM _history.registrants) ORDER BY id, _valid_from`;
const asOf = (at: string) =>
  `SELECT CAST(COLUMNS(*) AS VARCHAR) FROM history.registrants_as_of('${at}') ORDER BY id, _valid_from`;

async function warehouseText(sql: string): Promise<Record<string, string | null>[]> {
  return asText((await h.warehouse.query(sql)).rows);
}

/** The history files under `root` (a folder of `history/registrants` laid out in Hive partitions), read by DuckDB. */
async function historyFiles(root: string): Promise<Record<string, string | null>[]> {
  return asText(
    await duck<Record<string, unknown>>(
      `SELECT CAST(COLUMNS(*) AS VARCHAR)
         FROM read_parquet('${root}/**/*.parquet', hive_partitioning = true, union_by_name = true)
        ORDER BY id, _valid_from`,
    ),
  );
}

const filesOf = filesUnder;

/**
 * Changes one registrant at the service and polls it: returns its event. (A mutation may update, create or delete
 * a record: each touches one event.)
 */
async function changeOne(): Promise<number> {
  const before = new Map(h.sim.truth('registrants').records.map((r) => [Number(r.id), JSON.stringify(r)]));
  const events = new Map(h.sim.truth('registrants').records.map((r) => [Number(r.id), Number(r.event_id)]));
  h.sim.advanceClock(30);
  h.sim.mutate(1, { streams: ['registrants'] });
  h.sim.advanceClock(30);
  const after = h.sim.truth('registrants').records;
  const changed = new Set<number>();
  for (const r of after) {
    if (before.get(Number(r.id)) !== JSON.stringify(r)) changed.add(Number(r.event_id));
  }
  const now = new Set(after.map((r) => Number(r.id)));
  for (const [id, event] of events) if (!now.has(id)) changed.add(event);
  expect(changed.size).toBe(1);
  await poll();
  return [...changed][0] as number;
}

beforeAll(async () => {
  h = await startHarness({ size: 'tiny', seed: 29, rateLimit: { credits: 1_000_000, windowSeconds: 600 } });
  const backfill = await runSync(h.client(), h.warehouse, { mode: 'backfill', streams: 'events,registrants' });
  expect(backfill.status).toBe('done');
  polledAt.push(snapshot(h.sim).at);
  for (let round = 0; round < 4; round++) {
    h.sim.advanceClock(30);
    h.sim.mutate(20, { streams: ['registrants'] });
    h.sim.advanceClock(30);
    await poll();
  }
  await h.warehouse.buildAnalyticsViews();
  const kept = await h.warehouse.query(`SELECT count(*) AS n, count(_deleted_at) AS d FROM _history.registrants`);
  // Versions kept, deletes among them.
  expect(Number(kept.rows[0]?.n)).toBeGreaterThan(20);
  const deleted = await h.warehouse.query(`SELECT count(*) AS n FROM history.registrants WHERE _is_deleted`);
  expect(Number(deleted.rows[0]?.n)).toBeGreaterThan(0);
}, 180_000);

afterAll(async () => {
  await h?.close();
});

describe('the history in readers copies', () => {
  it('the snapshot, opened alone by another process, answers history and as-of queries as the warehouse does; unchanged, it writes nothing; one change writes its event history part', async () => {
    const target = join(h.dir, 'snapshot.duckdb');
    const first = await h.warehouse.publishSnapshot(target);
    expect(first.copied).toContain('_history.registrants');
    expect(first.views.history).toEqual(
      expect.arrayContaining(['registrants', 'registrants_as_of', 'registrants_transitions']),
    );
    // A moment between two polls, in the middle of the changes.
    const middle = utcText(Date.parse(`${polledAt[2]!.replace(' ', 'T')}Z`) + 1000);
    const reader = await DuckDbReader.open(target);
    try {
      const all = await reader.query(HISTORY);
      expect(all.length).toBeGreaterThan(0);
      expect(all).toEqual(await warehouseText(HISTORY));
      expect(await reader.query(asOf(middle))).toEqual(await warehouseText(asOf(middle)));
      const transitions = 'SELECT CAST(COLUMNS(*) AS VARCHAR) FROM history.registrants_transitions ORDER BY ALL';
      expect(await reader.query(transitions)).toEqual(await warehouseText(transitions));
    } finally {
      await reader.close();
    }

    // Nothing changed: nothing written, the history's parts included.
    const again = await h.warehouse.publishSnapshot(target);
    expect(again.unchanged).toBe(true);
    expect(again.bytes).toBe(0);

    // One registrant changed: its event's part and its event's history part, nothing else of registrants.
    const partsOf = (id: string) => readdirSync(join(`${target}.parts`, id));
    const held = { current: partsOf('registrants'), kept: partsOf('_history.registrants') };
    const event = await changeOne();
    const one = await h.warehouse.publishSnapshot(target);
    expect(one.copied).toEqual(expect.arrayContaining(['registrants', '_history.registrants']));
    const fresh = (id: string, had: string[]) => partsOf(id).filter((f) => !had.includes(f));
    expect(fresh('registrants', held.current)).toEqual([expect.stringMatching(new RegExp(`^e${event}\\.`))]);
    expect(fresh('_history.registrants', held.kept)).toEqual([expect.stringMatching(new RegExp(`^e${event}\\.`))]);
    const after = await DuckDbReader.open(target);
    try {
      expect(await after.query(HISTORY)).toEqual(await warehouseText(HISTORY));
    } finally {
      await after.close();
    }
  }, 120_000);

  it('the Parquet output holds the versions of the records that changed beside the stream; unchanged, no file is written; one change rewrites its event history partition only', async () => {
    const out = join(h.dir, 'parquet');
    mkdirSync(out);
    const first = await h.warehouse.exportParquet({ out });
    expect(first.history?.tables).toEqual(expect.arrayContaining(['history/events', 'history/registrants']));
    expect(readdirSync(join(out, 'history', 'registrants')).filter((f) => f.startsWith('event_id='))).not.toEqual([]);
    expect(await historyFiles(join(out, 'history', 'registrants'))).toEqual(await warehouseText(CHANGED));

    const before = filesOf(out);
    const same = await h.warehouse.exportParquet({ out });
    expect(same.bytesWritten).toBe(0);
    expect(filesOf(out)).toEqual(before);

    const event = await changeOne();
    const next = await h.warehouse.exportParquet({ out });
    expect(next.bytesWritten).toBeGreaterThan(0);
    const after = filesOf(out);
    const rewritten = [...after.keys()].filter((f) => before.get(f) !== after.get(f));
    const gone = [...before.keys()].filter((f) => !after.has(f));
    const history = (files: string[]) => files.filter((f) => f.startsWith('history/registrants/'));
    const inEvent = (f: string) => f.startsWith(`history/registrants/event_id=${event}/`);
    // Its event's history partition (new file in, old file out) and the manifest; every other history file as it was.
    expect(
      history(rewritten)
        .filter((f) => !f.endsWith('_evsync/manifest.json'))
        .every(inEvent),
    ).toBe(true);
    expect(history(rewritten).some(inEvent)).toBe(true);
    expect(history(gone).every(inEvent)).toBe(true);
    expect(history(gone).length).toBeGreaterThan(0);
    expect(await historyFiles(join(out, 'history', 'registrants'))).toEqual(await warehouseText(CHANGED));
  }, 120_000);

  it('the lake holds the history beside the stream, read back equal; unchanged, nothing is uploaded; one change uploads its event history partition only', async () => {
    const store = await openTestStore(testLake.s3.endpoint, 2);
    const prefix = 'history-copies';
    const uploaded: string[] = [];
    const opts = {
      store,
      prefix,
      account: 'default',
      stagingDir: stagingDirFor(h.dbPath),
      leaseTtlMs: 60_000,
      command: 'test',
      uploadConcurrency: 2,
      onUploaded: (key: string) => uploaded.push(key),
    };
    const readBack = async () => {
      const { dir } = await download(testLake.client, `${prefix}/history/registrants/`);
      try {
        // Read from the table's location, as Hive readers do: `account` comes from the path.
        const rows = await historyFiles(join(dir, prefix, 'history', 'registrants'));
        expect(new Set(rows.map((r) => r.account))).toEqual(new Set(['default']));
        return rows.map(({ account: _account, ...rest }) => rest);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };
    try {
      const first = await exportToLake(h.warehouse, opts);
      expect(first.history.tables).toEqual(expect.arrayContaining(['history/events', 'history/registrants']));
      expect(uploaded.some((k) => k.startsWith(`${prefix}/history/registrants/account=default/event_id=`))).toBe(true);
      expect(await readBack()).toEqual(await warehouseText(CHANGED));

      const keys = await listKeys(testLake.client, `${prefix}/`);
      uploaded.length = 0;
      const same = await exportToLake(h.warehouse, opts);
      expect(same.uploaded.files).toBe(0);
      expect(await listKeys(testLake.client, `${prefix}/`)).toEqual(keys);

      const event = await changeOne();
      await exportToLake(h.warehouse, opts);
      const history = uploaded.filter((k) => k.startsWith(`${prefix}/history/registrants/`));
      expect(history.length).toBe(1);
      expect(history[0]).toContain(`/history/registrants/account=default/event_id=${event}/`);
      expect(await readBack()).toEqual(await warehouseText(CHANGED));
    } finally {
      store.close();
    }
  }, 120_000);
});
