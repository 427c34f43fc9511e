/**
 * `sync --snapshot` / `backfill --snapshot`, read the way an analyst reads it: from another process (a child node
 * with @duckdb/node-api) while the warehouse file itself is out of bounds. And the other way round: a reader holding
 * the warehouse makes evsync say who holds it and point at --snapshot.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Warehouse } from '../../src/warehouse/index.js';
import { DuckDbReader } from '../helpers/duckdb-reader.js';
import { inTempDir, run, simulatedCli } from './helpers.js';

const cli = simulatedCli({ seed: 11, prefix: 'evsync-cli-snapshot-' });

const CURRENT = (table: string) => `SELECT count(*) FROM main.${table} WHERE _deleted_at IS NULL`;

async function liveCount(db: string, table: string): Promise<number> {
  const w = await Warehouse.open(db, { readOnly: true });
  try {
    return Number((await w.query(CURRENT(table))).rows[0]?.['count_star()']);
  } finally {
    await w.close();
  }
}

describe('--snapshot', () => {
  it('is published after a partial run (exit 3) and after the run that completes it, with a log line', async () => {
    await inTempDir(async (dir) => {
      const db = join(dir, 'evsync.duckdb');
      const snapshot = join(dir, 'snap.duckdb');
      const env = { ...cli.env, EVSYNC_DB: db };
      const partial = await run(['backfill', '--budget', '40', '--snapshot', snapshot], { cwd: dir, env });
      expect(partial.code, partial.stderr).toBe(3);
      expect(partial.stderr).toMatch(new RegExp(`snapshot: published ${snapshot} in [\\d.]+ ?m?s \\(\\d+ tables`));
      const first = await DuckDbReader.open(snapshot);
      try {
        const loaded = await liveCount(db, 'events');
        expect(loaded).toBeGreaterThan(0);
        expect(await first.count(CURRENT('events'))).toBe(loaded);

        // The resumed run completes; the reader that kept the first copy open still reads that one.
        const done = await run(['backfill', '--snapshot', snapshot], { cwd: dir, env });
        expect(done.code, done.stderr).toBe(0);
        expect(done.stderr).toContain(`snapshot: published ${snapshot}`);
        expect(await first.count(CURRENT('events'))).toBe(loaded);
      } finally {
        await first.close();
      }
      const reader = await DuckDbReader.open(snapshot);
      try {
        for (const table of ['events', 'registrants', 'sessions']) {
          expect(await reader.count(CURRENT(table)), table).toBe(cli.sim.truth(table).records.length);
        }
        expect(await reader.count('SELECT count(*) FROM analytics.registration_status_by_event')).toBeGreaterThan(0);
      } finally {
        await reader.close();
      }
    });
  });

  it('refuses the warehouse itself, a folder, a missing folder or a file of another kind before spending a credit (exit 2)', async () => {
    await inTempDir(async (dir) => {
      const db = join(dir, 'evsync.duckdb');
      const env = { ...cli.env, EVSYNC_DB: db };
      const notes = join(dir, 'notes.txt');
      writeFileSync(notes, 'mine');
      const credits = cli.sim.counters().credits;
      for (const [target, message] of [
        [db, 'is the warehouse itself'],
        [dir, 'is a folder'],
        [join(dir, 'nope', 's.duckdb'), 'does not exist'],
        [notes, 'is not a DuckDB database'],
      ] as const) {
        const r = await run(['sync', '--snapshot', target], { cwd: dir, env });
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toContain(message);
      }
      expect(cli.sim.counters().credits).toBe(credits);
    });
  });

  it('a reader holding the warehouse: evsync names the program holding it and points at --snapshot', async () => {
    await inTempDir(async (dir) => {
      const db = join(dir, 'evsync.duckdb');
      const w = await Warehouse.open(db);
      await w.close();
      const holder = await DuckDbReader.open(db);
      try {
        const r = await run(['sync'], { cwd: dir, env: { ...cli.env, EVSYNC_DB: db } });
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(/in use by another process: node \S*snapshot-reader\.mjs \S* \(PID \d+\)/);
        expect(r.stderr).toContain('--snapshot <file>');
      } finally {
        await holder.close();
      }
    });
  });
});
