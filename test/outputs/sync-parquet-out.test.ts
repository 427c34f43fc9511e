/**
 * `sync|backfill --parquet-out <dir>` writes through the one output the daemon's publisher writes through: a table
 * the folder holds nothing of yet is written whole, not just the partitions the run touched, so a reader of the
 * folder never finds events missing from it (before, only the daemon did this).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inTempDir, run, simulatedCli } from '../cli/helpers.js';

const cli = simulatedCli({ seed: 7, db: 'outputs.duckdb' });

const partitionsOf = (dir: string) =>
  readdirSync(join(dir, 'registrants'))
    .filter((name) => name.startsWith('event_id='))
    .sort();

describe('sync --parquet-out into a new folder', () => {
  it('writes a table new to the folder whole, not only the partitions the run touched', async () => {
    await inTempDir(async (sub) => {
      const env = { ...cli.env, EVSYNC_DB: join(sub, 'w.duckdb') };
      const first = await run(['sync', '--streams', 'events,registrants'], { cwd: sub, env });
      expect(first.code, first.stderr).toBe(0);
      const whole = join(sub, 'whole');
      const exported = await run(['export', '--out', whole, '--tables', 'registrants'], { cwd: sub, env });
      expect(exported.code, exported.stderr).toBe(0);
      expect(partitionsOf(whole).length).toBeGreaterThan(1);

      // One event's registrants read again: the run touches that partition only.
      const event = partitionsOf(whole)[0]!.slice('event_id='.length);
      const out = join(sub, 'out');
      const args = ['backfill', '--streams', 'registrants', '--events', event, '--parquet-out', out];
      const r = await run(args, { cwd: sub, env });
      expect(r.code, r.stderr).toBe(0);
      expect(partitionsOf(out)).toEqual(partitionsOf(whole));
    });
  });
});
