/**
 * `evsync rebuild` and `evsync archive` as a user runs them (issue 36): after a backfill and a sync of changes, the
 * archive says what it holds; `rebuild --dry-run` reports no change and writes nothing; a custom field type set in
 * evsync.config.json afterwards is reported by the dry run and applied by `rebuild`, with no request to the service;
 * `archive prune` removes what is older than a date, after which the stream can no longer be rebuilt (exit 2, said).
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DuckDbReader } from '../helpers/duckdb-reader.js';
import { inTempDir, run, simulatedCli } from './helpers.js';

const cli = simulatedCli({ seed: 17, prefix: 'evsync-cli-rebuild-' });
const STREAMS = ['--streams', 'events,event_questions,registrants'];

describe('evsync rebuild', () => {
  it('rebuilds from the archive with no request; a dry run reports; a prune makes it refuse', async () => {
    await inTempDir(async (dir) => {
      const db = join(dir, 'evsync.duckdb');
      const env = { ...cli.env, EVSYNC_DB: db };
      expect((await run(['backfill', ...STREAMS], { cwd: dir, env })).code).toBe(0);
      cli.sim.mutate(8, { streams: ['registrants'] });
      cli.sim.advanceClock(60);
      expect((await run(['sync', ...STREAMS], { cwd: dir, env })).code).toBe(0);

      const status = await run(['archive', '--json'], { cwd: dir, env });
      expect(status.code, status.stderr).toBe(0);
      const held = JSON.parse(status.stdout) as { entries: number; bytes: number; since: string };
      expect(held.entries).toBeGreaterThan(0);
      expect(held.bytes).toBeGreaterThan(0);
      const said = await run(['status'], { cwd: dir, env });
      expect(said.stdout).toMatch(
        new RegExp(`Archive: ${held.entries} page\\(s\\) and deliveries, [0-9.]+ MiB, from ${held.since}`),
      );
      // The registrants the sync changed: their earlier versions are kept (issue 37).
      const kept = await DuckDbReader.countIn(db, `SELECT count(*) AS n FROM _history.registrants`);
      expect(kept).toBeGreaterThan(0);
      expect(said.stdout).toMatch(new RegExp(`History: ${kept} earlier version\\(s\\) kept over \\d+ stream\\(s\\)`));
      const dbBytes = statSync(db).mtimeMs;

      const calls = JSON.stringify(cli.sim.counters());
      const dry = await run(['rebuild', '--dry-run'], { cwd: dir, env });
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout).toContain('dry run: nothing was written');
      expect(dry.stdout).toMatch(/registrants: 0 added, 0 changed, 0 removed/);
      expect(statSync(db).mtimeMs).toBe(dbBytes);

      // A custom field's type set afterwards: the dry run says which rows it changes, the rebuild applies it.
      const fieldQuery = await run(
        [
          'query',
          `SELECT k FROM (SELECT unnest(json_keys(custom_fields)) AS k, custom_fields FROM main.registrants
                           WHERE custom_fields IS NOT NULL)
            WHERE json_type(custom_fields, '$.' || k) = 'ARRAY' ORDER BY k LIMIT 1`,
          '--format',
          'json',
        ],
        { cwd: dir, env },
      );
      expect(fieldQuery.code, fieldQuery.stderr).toBe(0);
      const field = String((JSON.parse(fieldQuery.stdout) as { k: string }[])[0]?.k);
      const config = join(dir, 'evsync.config.json');
      writeFileSync(config, JSON.stringify({ streams: { registrants: { customFieldTypes: { [field]: 'text' } } } }));
      const withArrays = await DuckDbReader.countIn(
        db,
        `SELECT count(*) FROM main.registrants WHERE json_type(custom_fields, '$.${field}') = 'ARRAY'`,
      );
      const dryTyped = await run(['rebuild', '--streams', 'registrants', '--dry-run', '--json'], { cwd: dir, env });
      expect(dryTyped.code, dryTyped.stderr).toBe(0);
      const report = JSON.parse(dryTyped.stdout) as { changes: { table: string; changed: number }[] };
      expect(report.changes).toEqual([expect.objectContaining({ table: 'registrants', changed: withArrays })]);
      const applied = await run(['rebuild', '--streams', 'registrants'], { cwd: dir, env });
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stdout).toContain(`registrants: 0 added, ${withArrays} changed, 0 removed`);
      expect(
        await DuckDbReader.countIn(
          db,
          `SELECT count(*) FROM main.registrants WHERE json_type(custom_fields, '$.${field}') = 'ARRAY'`,
        ),
      ).toBe(0);
      expect(JSON.stringify(cli.sim.counters())).toBe(calls);

      // Pruned after the latest entry: nothing is left to rebuild from, and the command says so.
      const prune = await run(['archive', 'prune', '--before', '2999-01-01'], { cwd: dir, env });
      expect(prune.code, prune.stderr).toBe(0);
      expect(prune.stdout).toMatch(/pruned \d+ entries older than 2999-01-01/);
      const refused = await run(['rebuild'], { cwd: dir, env });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('the archive was pruned before 2999-01-01');
      expect(readFileSync(config, 'utf8')).toContain(field);
    });
  }, 120_000);
});
