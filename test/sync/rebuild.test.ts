/**
 * `rebuild` from the archive (issue 36), against the simulator: a backfill, changes by webhook (payloads and re-reads,
 * deletes) and by polling (incremental pages, snapshot walks and delete sweeps), then a rebuild of every stream
 * table. The simulator answers no request during it, and every table equals what it was: the same keys, every
 * column's value (`_synced_at`, `_run_id` and `_deleted_at` included) and the same column types. A rebuild killed
 * midway (by the n-th op) and run again ends equal too; no secret is in the archive's bytes.
 */
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSync } from '../../src/sync/index.js';
import { rebuild } from '../../src/sync/rebuild/rebuild.js';
import { type CaptureHarness, mutateEach, SECRET, startCaptureHarness } from '../capture/helpers.js';
import { archivedTexts } from '../helpers/archive.js';
import { tablesAsText } from '../helpers/tables-text.js';

let h: CaptureHarness;

/** A rebuild of every stream, five ops a window, stopped when its n-th window is replayed (its scratch kept). */
async function stopRebuildAt(n: number): Promise<void> {
  let windows = 0;
  const stop = new Error(`stopped after window ${n}`);
  const onProgress = () => {
    windows += 1;
    if (windows === n) throw stop;
  };
  await expect(rebuild({ live: h.warehouse, streams: null, dryRun: false, window: 5, onProgress })).rejects.toBe(stop);
}

async function opCount(kind: string): Promise<number> {
  const r = await h.warehouse.query(`SELECT count(*) AS n FROM _evsync.archive_ops WHERE kind = ?`, [kind]);
  return Number(r.rows[0]?.n ?? 0);
}

/** A custom field of registrants whose stored answers are choice lists. */
async function arrayField(): Promise<string> {
  const r = await h.warehouse.query(
    `SELECT k FROM (SELECT unnest(json_keys(custom_fields)) AS k, custom_fields FROM main.registrants
                     WHERE custom_fields IS NOT NULL)
      WHERE json_type(custom_fields, '$.' || k) = 'ARRAY' ORDER BY k LIMIT 1`,
  );
  return String(r.rows[0]?.k);
}

function counters(): string {
  return JSON.stringify(h.sim.counters());
}

beforeAll(async () => {
  h = await startCaptureHarness({ sim: { size: 'tiny', seed: 11 } });
  // Changes by webhook: payloads applied, deletes marked.
  mutateEach(h.sim, 4);
  await h.settle();
  // Changes by polling, snapshot walks and delete sweeps included (and webhooks of the same changes).
  mutateEach(h.sim, 3);
  h.sim.advanceClock(120);
  const poll = await runSync(h.client(), h.warehouse, {
    mode: 'incremental',
    streams: h.streams.join(','),
    lagSeconds: 0,
    sweepEveryHours: 0,
    snapshotEveryHours: 0,
  });
  expect(poll.status).toBe('done');
  await h.settle();
  await h.capture.close();
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

describe('rebuild from the archive', () => {
  it('logged every kind of write the tables took', async () => {
    const kinds = await h.warehouse.query(`SELECT kind, count(*) AS n FROM _evsync.archive_ops GROUP BY kind`);
    const byKind = Object.fromEntries(kinds.rows.map((r) => [String(r.kind), Number(r.n)]));
    expect(byKind.page).toBeGreaterThan(0);
    expect(byKind.merge).toBeGreaterThan(0);
    expect(byKind.missing).toBeGreaterThan(0);
    expect(byKind.deleted).toBeGreaterThan(0);
    // And the deliveries themselves, as the receiver accepted them.
    const archive = await h.warehouse.archiveStatus();
    expect(archive?.deliveries).toBeGreaterThan(0);
    expect(archive?.entries).toBeGreaterThan(archive?.deliveries ?? 0);
  });

  it('rebuilds every stream table equal, with no request to the service', async () => {
    const before = await tablesAsText(h.warehouse);
    const deleted = await h.warehouse.query(
      `SELECT count(*) AS n FROM main.registrants WHERE "_deleted_at" IS NOT NULL`,
    );
    expect(Number(deleted.rows[0]?.n)).toBeGreaterThan(0);
    const calls = counters();

    const dry = await rebuild({ live: h.warehouse, streams: null, dryRun: true });
    expect(dry.applied).toBe(false);
    for (const c of dry.changes) {
      expect(c, c.table).toMatchObject({ added: 0, changed: 0, removed: 0, columnsAdded: [], columnsRemoved: [] });
    }
    expect(dry.replayed.pages).toBeGreaterThan(0);
    expect(await tablesAsText(h.warehouse)).toEqual(before);

    const done = await rebuild({ live: h.warehouse, streams: null, dryRun: false });
    expect(done.applied).toBe(true);
    expect(done.streams.sort()).toEqual(Object.keys(before).sort());
    expect(await tablesAsText(h.warehouse)).toEqual(before);
    expect(counters()).toBe(calls);
    expect(existsSync(`${h.dbPath}.rebuild`)).toBe(false);
  });

  it('puts back a dropped table and undoes a stray edit; a dry run says what it would change first', async () => {
    const before = await tablesAsText(h.warehouse);
    const calls = counters();
    await h.warehouse.query(`DROP TABLE main.sessions`);
    const stray = Number((await h.warehouse.query(`SELECT min(id) AS id FROM main.registrants`)).rows[0]?.id);
    await h.warehouse.query(`UPDATE main.registrants SET email = 'stray@example.com' WHERE id = ?`, [stray]);
    const dry = await rebuild({ live: h.warehouse, streams: ['registrants', 'sessions'], dryRun: true });
    const by = Object.fromEntries(dry.changes.map((c) => [c.table, c]));
    expect(by.registrants).toMatchObject({ added: 0, changed: 1, removed: 0 });
    expect(by.sessions).toMatchObject({ missing: true, added: before.sessions?.rows.length });
    const done = await rebuild({ live: h.warehouse, streams: ['registrants', 'sessions'], dryRun: false });
    // The row put back is one evsync wrote now (readers' copies publish it by that); every other row is as it was.
    const restamped = await h.warehouse.query(`SELECT id FROM main.registrants WHERE "_run_id" = ?`, [done.runId]);
    expect(restamped.rows.map((r) => Number(r.id))).toEqual([stray]);
    const after = await tablesAsText(h.warehouse);
    expect(after.sessions).toEqual(before.sessions);
    const others = (t: { rows: string[] } | undefined) => t?.rows.filter((r) => !r.includes(`"id":"${stray}"`));
    expect(others(after.registrants)).toEqual(others(before.registrants));
    expect(after.registrants?.rows.length).toBe(before.registrants?.rows.length);
    expect(counters()).toBe(calls);
  });

  it('a rebuild stopped midway is resumed by running it again, and ends equal', async () => {
    const before = await tablesAsText(h.warehouse);
    await stopRebuildAt(2);
    expect(existsSync(`${h.dbPath}.rebuild`)).toBe(true);
    expect(await tablesAsText(h.warehouse)).toEqual(before);
    const again = await rebuild({ live: h.warehouse, streams: null, dryRun: false, window: 5 });
    expect(again.resumed).toBe(true);
    // It took up where the stopped one was: the pages it had replayed are not read again.
    expect(again.replayed.pages).toBeGreaterThan(0);
    expect(again.replayed.pages).toBeLessThan(await opCount('page'));
    expect(await tablesAsText(h.warehouse)).toEqual(before);
  });

  it('a resumed rebuild whose staged files the machine lost starts over, and ends equal', async () => {
    const before = await tablesAsText(h.warehouse);
    await stopRebuildAt(3);
    // What a crash of the machine leaves of files never fsynced: the scratch's staged pages gone.
    const stage = `${h.dbPath}.rebuild/scratch.duckdb.stage`;
    const staged = existsSync(stage) ? readdirSync(stage).filter((f) => statSync(join(stage, f)).size > 0) : [];
    expect(staged.length).toBeGreaterThan(0);
    for (const f of staged) rmSync(join(stage, f));
    const again = await rebuild({ live: h.warehouse, streams: null, dryRun: false, window: 5 });
    expect(again.resumed).toBe(false);
    expect(await tablesAsText(h.warehouse)).toEqual(before);
  });

  it('applies a custom field type override to every stored row, with no request', async () => {
    const field = await arrayField();
    const calls = counters();
    const overrides = { registrants: { customFieldTypes: { [field]: 'text' as const } } };
    const dry = await rebuild({ live: h.warehouse, streams: ['registrants'], overrides, dryRun: true });
    const answered = await h.warehouse.query(
      `SELECT count(*) AS n FROM main.registrants WHERE json_type(custom_fields, '$.${field}') = 'ARRAY'`,
    );
    expect(Number(answered.rows[0]?.n)).toBeGreaterThan(0);
    expect(dry.changes).toEqual([
      expect.objectContaining({ table: 'registrants', added: 0, removed: 0, changed: Number(answered.rows[0]?.n) }),
    ]);
    await rebuild({ live: h.warehouse, streams: ['registrants'], overrides, dryRun: false });
    const after = await h.warehouse.query(
      `SELECT count(*) FILTER (WHERE json_type(custom_fields, '$.${field}') = 'VARCHAR') AS text,
              count(*) FILTER (WHERE json_type(custom_fields, '$.${field}') = 'ARRAY') AS arrays
         FROM main.registrants`,
    );
    expect(Number(after.rows[0]?.text)).toBe(Number(answered.rows[0]?.n));
    expect(Number(after.rows[0]?.arrays)).toBe(0);
    // The changed rows carry the rebuild's run, so the snapshot and Parquet publish them; the others keep theirs.
    const stamped = await h.warehouse.query(
      `SELECT count(*) AS n FROM main.registrants r JOIN _evsync.runs u ON u.run_id = r."_run_id" WHERE u.kind = 'rebuild'`,
    );
    expect(Number(stamped.rows[0]?.n)).toBe(Number(answered.rows[0]?.n));
    // Rebuilt again with the same settings: nothing changes, the stamps included (the log holds them).
    const before = await tablesAsText(h.warehouse);
    const again = await rebuild({ live: h.warehouse, streams: ['registrants'], overrides, dryRun: false });
    expect(again.changes).toEqual([expect.objectContaining({ added: 0, changed: 0, removed: 0 })]);
    expect(await tablesAsText(h.warehouse)).toEqual(before);
    expect(counters()).toBe(calls);
  });

  it('keeps no secret in the archive: not in its files, not in what they hold once decompressed', async () => {
    const account = h.sim.accounts[0]!;
    const secrets = [SECRET, account.clientSecret, account.encoded];
    const texts = await archivedTexts(h.dbPath);
    expect(texts.length).toBeGreaterThan(10);
    // Polled pages are kept as the service's answers, webhook records as records.
    expect(texts.some((t) => t.startsWith('{"quarantinedAt":'))).toBe(true);
    expect(texts.some((t) => t.startsWith('{"records":'))).toBe(true);
    for (const text of texts) for (const secret of secrets) expect(text.includes(secret)).toBe(false);
  });
});
