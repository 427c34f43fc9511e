/**
 * The snapshot (src/warehouse/copies/snapshot.ts), read the way analysts read it: from ANOTHER process (a child node with
 * @duckdb/node-api, test/helpers/duckdb-reader.ts) while this process holds the live file, which DuckDB lets no
 * other process open. Faults by count: a child SIGKILLs itself after its n-th copied table.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SnapshotRefusedError } from '../../src/warehouse/index.js';
import { DuckDbReader } from '../helpers/duckdb-reader.js';
import { runTsxChild } from '../helpers/tsx-child.js';
import {
  customFields,
  eventQuestions,
  eventScope,
  events,
  page,
  reg,
  registrants,
  registrantsDef,
  resolve,
  rows,
  type TempWarehouse,
  tempWarehouseEach,
} from './helpers.js';

let t: TempWarehouse;
tempWarehouseEach((opened) => {
  t = opened;
});

async function fill(ids: number[], event = 10): Promise<void> {
  await page(t.w, events, { key: 'account', column: null, value: null }, [
    { id: event, name: `Event ${event}`, updated_at: '2024-01-01 00:00:00' },
  ]);
  await page(
    t.w,
    registrants,
    eventScope(event),
    ids.map((id) => reg(id, { event_id: event, custom_fields: customFields({ c_7: 'vegan' }) })),
  );
  await t.w.buildAnalyticsViews();
}

const COUNT = 'SELECT count(*) AS n FROM main.registrants WHERE _deleted_at IS NULL';

describe('publishSnapshot', () => {
  it('is a copy another process opens while the live file is held: tables, views, its own bookkeeping', async () => {
    // The event's question (the definitions stream): its label names the column of the event's view.
    await page(t.w, eventQuestions, eventScope(10), [{ id: 7, event_id: 10, name: 'Diet', type: 'text' }]);
    await fill([1, 2, 3]);
    const target = join(t.dir, 'snapshot.duckdb');
    const result = await t.w.publishSnapshot(target, { runId: 'run-9' });
    expect(result.path).toBe(target);
    expect(result.tables).toEqual(['event_questions', 'events', 'registrants']);
    expect(result.rows).toEqual({ event_questions: 1, events: 1, registrants: 3 });
    expect(result.views.warnings).toEqual([]);
    expect(result.views.created).toContain('registrations_daily');
    expect(result.views.created).toContain('registrants_event_10');
    expect(statSync(target).mode & 0o777).toBe(0o600);
    // Nothing but the snapshot is left beside it.
    expect(readdirSync(t.dir).filter((f) => f.startsWith('.snapshot'))).toEqual([]);

    // The live file: no other process gets in, not even read-only.
    expect(await DuckDbReader.openError(t.path)).toMatch(/Could not set lock/);
    const reader = await DuckDbReader.open(target);
    try {
      expect(await reader.count(COUNT)).toBe(3);
      // The views run in the copy alone, and give what they give in the warehouse.
      const view = 'SELECT * FROM analytics.registration_status_by_event ORDER BY ALL';
      expect(await reader.query(view)).toEqual(
        (await rows(t.w, view)).map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, String(v)]))),
      );
      expect(await reader.query(`SELECT "Diet" AS diet FROM analytics.registrants_event_10 ORDER BY id`)).toEqual([
        { diet: 'vegan' },
        { diet: 'vegan' },
        { diet: 'vegan' },
      ]);
      // No view names the live file's catalog.
      const defs = await reader.query(`SELECT sql FROM duckdb_views() WHERE schema_name = 'analytics'`);
      expect(defs.length).toBe(result.views.created.length);
      for (const d of defs) expect(String(d.sql)).not.toContain('test.');
      expect(await reader.query('SELECT run_id, tables FROM _evsync.snapshot')).toEqual([
        { run_id: 'run-9', tables: '3' },
      ]);
      // Bookkeeping readers have no use for stays behind (the journal, staged pages, cursors).
      const copied = await reader.query(
        `SELECT table_name FROM duckdb_tables() WHERE schema_name = '_evsync' ORDER BY 1`,
      );
      expect(copied.map((r) => r.table_name)).toEqual([
        'custom_field_types',
        'custom_fields',
        'snapshot',
        'snapshot_parts',
        'snapshot_retired',
      ]);
    } finally {
      await reader.close();
    }
  });

  it('replaces the file atomically: a reader holding the old copy keeps reading it; a new reader gets the new', async () => {
    await fill([1, 2, 3]);
    const target = join(t.dir, 'snapshot.duckdb');
    await t.w.publishSnapshot(target);
    const old = await DuckDbReader.open(target);
    try {
      expect(await old.count(COUNT)).toBe(3);
      await fill([4, 5]);
      await t.w.publishSnapshot(target);
      // The old reader's view is the one it opened, whole and consistent.
      expect(await old.count(COUNT)).toBe(3);
      expect(await old.count('SELECT sum(registrants) FROM analytics.registration_status_by_event')).toBe(3);
      const fresh = await DuckDbReader.open(target);
      try {
        expect(await fresh.count(COUNT)).toBe(5);
        expect(await fresh.count('SELECT sum(registrants) FROM analytics.registration_status_by_event')).toBe(5);
      } finally {
        await fresh.close();
      }
    } finally {
      await old.close();
    }
  });

  it('with changedTables, fingerprints only those; the others keep their parts', async () => {
    await fill([1, 2, 3]);
    const target = join(t.dir, 'snapshot.duckdb');
    // Nothing to start from: everything is copied.
    expect((await t.w.publishSnapshot(target, { changedTables: [] })).copied).toEqual(['events', 'registrants']);
    await fill([4, 5]);
    // Events were rewritten too (same row), but only registrants are said to have changed.
    const r = await t.w.publishSnapshot(target, { changedTables: ['registrants'] });
    expect(r.copied).toEqual(['registrants']);
    expect(r.rows).toEqual({ registrants: 5 });
    const reader = await DuckDbReader.open(target);
    try {
      expect(await reader.count(COUNT)).toBe(5);
      expect(await reader.count('SELECT count(*) FROM main.events')).toBe(1);
      expect(await reader.count('SELECT sum(registrants) FROM analytics.registration_status_by_event')).toBe(5);
    } finally {
      await reader.close();
    }
    // A snapshot another warehouse published is not built upon; its parts stay for its readers' grace period.
    const partsOf = () => readdirSync(join(t.dir, 'snapshot.duckdb.parts', 'registrants'));
    const ours = partsOf();
    const other = join(t.dir, 'other.duckdb');
    const { Warehouse } = await import('../../src/warehouse/index.js');
    const w2 = await Warehouse.open(other);
    try {
      await page(w2, events, { key: 'account', column: null, value: null }, [{ id: 99, name: 'Other' }]);
      expect((await w2.publishSnapshot(target, { changedTables: [] })).copied).toEqual(['events']);
      expect(partsOf()).toEqual(ours);
      // Once the grace has passed, a later publish removes them.
      expect((await w2.publishSnapshot(target, { graceMs: 0 })).parts.removed).toBeGreaterThanOrEqual(ours.length);
    } finally {
      await w2.close();
    }
    expect((await t.w.publishSnapshot(target, { changedTables: [] })).copied).toEqual(['events', 'registrants']);
  });

  it('a query through the daemon (on its query copy) answers while a publish holds its transaction after a schema change', async () => {
    await fill([1, 2, 3]);
    const side = await t.w.openSide();
    let answer: unknown = null;
    try {
      await side.publishSnapshot(join(t.dir, 'snapshot.duckdb'), {
        onTable: async (_table, n) => {
          if (n !== 1) return;
          // The publish's transaction is open: the writer adds a column (an ALTER), then answers a query.
          await t.w.ensureTable(
            resolve(registrantsDef, { customs: [...registrants.customFieldList], extra: { late: 'text' } }),
          );
          const copy = join(t.dir, 'query-copy.duckdb');
          await t.w.writeQueryCopy(copy);
          const { Warehouse } = await import('../../src/warehouse/index.js');
          answer = (
            await Warehouse.querySnapshot(copy, 'SELECT count(*) AS n FROM registrants WHERE late IS NULL', {
              form: 'json',
              sandbox: { allowRead: [] },
              limits: {},
            })
          ).rows;
        },
      });
    } finally {
      await side.close();
    }
    expect(answer).toEqual([{ n: 3 }]);
  });

  it('killed mid-publish leaves the previous snapshot readable; the next publish removes the leftovers', async () => {
    await fill([1, 2, 3]);
    const target = join(t.dir, 'snapshot.duckdb');
    await t.w.publishSnapshot(target);
    const parts = join(t.dir, 'snapshot.duckdb.parts', 'registrants');
    const published = readdirSync(parts);
    await fill([4]);
    // The child opens the warehouse itself: this process lets go of it first.
    await t.w.close();
    const killed = await runTsxChild('test/warehouse/fixtures/snapshot-kill-child.ts', [t.path, target, '1']);
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    // Events were written again with the same row: unchanged, so registrants is the first table with a part written.
    expect(killed.stdout.trim()).toBe('copied 1 registrants');
    // Its new part is on disk, listed by no snapshot.
    const orphans = readdirSync(parts).filter((f) => !published.includes(f));
    expect(orphans.length).toBe(1);

    const reader = await DuckDbReader.open(target);
    try {
      expect(await reader.count(COUNT)).toBe(3);
    } finally {
      await reader.close();
    }

    const { Warehouse } = await import('../../src/warehouse/index.js');
    const again = await Warehouse.open(t.path);
    try {
      const result = await again.publishSnapshot(target);
      // The orphan goes; the part it replaces stays for the grace period.
      expect(result.parts).toEqual({ written: 1, kept: 1, retired: 1, removed: 1 });
      expect(readdirSync(parts)).not.toContain(orphans[0]);
      expect(readdirSync(parts)).toEqual(expect.arrayContaining(published));
      expect(readdirSync(t.dir).filter((f) => f.startsWith('.snapshot.duckdb.publish-'))).toEqual([]);
    } finally {
      await again.close();
    }
    expect(await DuckDbReader.open(target).then(async (r) => [await r.count(COUNT), await r.close()][0])).toBe(4);
    // tempWarehouseEach closes `t.w` again: a no-op.
  });

  it('refuses to overwrite the warehouse itself or a folder, and leaves other files alone', async () => {
    await fill([1]);
    await expect(t.w.publishSnapshot(t.path)).rejects.toBeInstanceOf(SnapshotRefusedError);
    await expect(t.w.publishSnapshot(t.dir)).rejects.toBeInstanceOf(SnapshotRefusedError);
    await expect(t.w.publishSnapshot(join(t.dir, 'no-such-folder', 's.duckdb'))).rejects.toThrow(/does not exist/);
    // A file that is no DuckDB database, and a database that is no snapshot, are someone else's: left alone.
    const notes = join(t.dir, 'notes.txt');
    writeFileSync(notes, 'my notes');
    await expect(t.w.publishSnapshot(notes)).rejects.toThrow(/is not a DuckDB database/);
    expect(readFileSync(notes, 'utf8')).toBe('my notes');
    await expect(t.w.publishSnapshot(t.path.replace(/test\.duckdb$/, 'test.duckdb.stage'))).rejects.toBeInstanceOf(
      SnapshotRefusedError,
    );
    const theirs = join(t.dir, 'theirs.duckdb');
    const { Warehouse } = await import('../../src/warehouse/index.js');
    await (await Warehouse.open(theirs)).close();
    const size = statSync(theirs).size;
    await expect(t.w.publishSnapshot(theirs)).rejects.toThrow(/is not a snapshot evsync published/);
    expect(statSync(theirs).size).toBe(size);
    // A file that only looks like a leftover (another name) is not evsync's.
    const other = join(t.dir, '.snapshot.duckdb.publish-notours.tmp');
    writeFileSync(other, 'x');
    await t.w.publishSnapshot(join(t.dir, 'snapshot.duckdb'));
    expect(existsSync(other)).toBe(true);
  });
});
