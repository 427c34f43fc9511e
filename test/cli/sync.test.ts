import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import type { SyncResult } from '../../src/sync/index.js';
import { inTempDir, run, simulatedCli } from './helpers.js';

const cli = simulatedCli({ seed: 5, db: 'main.duckdb' });

function expectNoSecrets(text: string): void {
  const secrets = cli.sim.accounts.flatMap((x) => [x.clientSecret, x.encoded]);
  for (const s of secrets) expect(text).not.toContain(s);
}

describe('sync, status, query, export on one warehouse', () => {
  let result: SyncResult;

  it('sync --json --verbose: one JSON document with the truth counts; no secret anywhere', async () => {
    const r = await run(['sync', '--json', '--verbose'], { cwd: cli.dir, env: cli.env });
    expectNoSecrets(r.stdout + r.stderr);
    expect(r.code, r.stderr).toBe(0);
    result = JSON.parse(r.stdout) as SyncResult;
    expect(result.status).toBe('done');
    expect(result.streams.registrants?.inserted).toBe(cli.sim.truth('registrants').records.length);
    expect(result.streams.events?.inserted).toBe(cli.sim.truth('events').records.length);
    expect(result.credits.total).toBeGreaterThan(0);
  });

  it('status --json: the run, the cursors with their age, the budget', async () => {
    const r = await run(['status', '--json'], { cwd: cli.dir, env: cli.env });
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.exists).toBe(true);
    expect(s.runs[0]).toMatchObject({ runId: result.runId, status: 'done', credits: result.credits.total });
    expect(s.runs[0].rows.inserted).toBeGreaterThan(0);
    expect(s.cursors.length).toBeGreaterThan(0);
    expect(s.cursors.every((c: { ageSeconds: number | null }) => c.ageSeconds !== null && c.ageSeconds >= 0)).toBe(
      true,
    );
    expect(s.rejected.total).toBe(0);
    expect(s.ledger.limit).toBe(100_000);
    expect(s.tables.registrants).toBe(cli.sim.truth('registrants').records.length);
    const human = await run(['status'], { cwd: cli.dir, env: cli.env });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('Last runs');
    expect(human.stdout).toContain('Cursors');
    expect(human.stdout).toContain(result.runId);
  });

  it('query prints BIGINT, DECIMAL and timestamps exactly in every format', async () => {
    const sql = `SELECT 9007199254740993::BIGINT AS big, TIMESTAMP '2024-01-02 03:04:05.123456' AS ts,
                        12.50::DECIMAL(12,2) AS money, NULL AS nothing`;
    const table = await run(['query', sql], { cwd: cli.dir, env: cli.env });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain('9007199254740993');
    expect(table.stdout).toContain('2024-01-02 03:04:05.123456');
    expect(table.stdout).toContain('12.50');
    expect(table.stdout).toContain('NULL');
    const csv = await run(['query', sql, '--format', 'csv'], { cwd: cli.dir, env: cli.env });
    expect(csv.stdout).toBe('big,ts,money,nothing\n9007199254740993,2024-01-02 03:04:05.123456,12.50,\n');
    const json = await run(['query', sql, '--format', 'json'], { cwd: cli.dir, env: cli.env });
    expect(JSON.parse(json.stdout)).toEqual([
      // Beyond 2^53 a BIGINT stays an exact string; DECIMAL money is a number (15 significant digits or fewer).
      { big: '9007199254740993', ts: '2024-01-02 03:04:05.123456', money: 12.5, nothing: null },
    ]);
    // --json is the same as --format json.
    const viaFlag = await run(['query', sql, '--json'], { cwd: cli.dir, env: cli.env });
    expect(viaFlag.stdout).toBe(json.stdout);
  });

  it('query reads the synced data as the source has it', async () => {
    const truth = cli.sim.truth('registrants').records;
    const first = [...truth].sort((a, b) => Number(a.id) - Number(b.id))[0]!;
    const r = await run(['query', 'select id, updated_at from registrants order by id limit 1', '--format', 'json'], {
      cwd: cli.dir,
      env: cli.env,
    });
    expect(r.code, r.stderr).toBe(0);
    const [row] = JSON.parse(r.stdout);
    expect(row.id).toBe(Number(first.id));
    expect(row.updated_at).toBe(first.updated_at);
  });

  it('query is read-only and reports SQL errors with exit 1', async () => {
    const write = await run(['query', 'delete from registrants'], { cwd: cli.dir, env: cli.env });
    expect(write.code).toBe(1);
    expect(write.stderr).toContain('read-only');
    const bad = await run(['query', 'select 1 +'], { cwd: cli.dir, env: cli.env });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/syntax error/i);
  });

  it('export --out writes Hive-partitioned Parquet that DuckDB reads back', async () => {
    const out = join(cli.dir, 'parquet');
    const r = await run(['export', '--out', out, '--tables', 'registrants,events'], { cwd: cli.dir, env: cli.env });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(join(out, 'registrants')).some((d) => d.startsWith('event_id='))).toBe(true);
    const db = await DuckDBInstance.create(':memory:');
    const con = await db.connect();
    try {
      const count = async (table: string) => {
        const reader = await con.runAndReadAll(
          `SELECT count(*)::INTEGER AS n FROM read_parquet('${join(out, table)}/**/*.parquet', hive_partitioning = true)`,
        );
        return Number(reader.getRowObjectsJson()[0]?.n);
      };
      expect(await count('registrants')).toBe(cli.sim.truth('registrants').records.length);
      expect(await count('events')).toBe(cli.sim.truth('events').records.length);
    } finally {
      con.closeSync();
      db.closeSync();
    }
  });

  it('plan --json prices an incremental sync without spending; --count spends and says so', async () => {
    const r = await run(['plan', '--json'], { cwd: cli.dir, env: cli.env });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.mode).toBe('incremental');
    expect(report.spentCredits).toBe(0);
    expect(report.totalCredits).toBeGreaterThan(0);
    const counted = await run(['plan', '--backfill', '--count', '--json', '--streams', 'events,registrants'], {
      cwd: cli.dir,
      env: cli.env,
    });
    expect(counted.code, counted.stderr).toBe(0);
    const c = JSON.parse(counted.stdout);
    expect(c.counted).toBe(true);
    expect(c.spentCredits).toBeGreaterThan(0);
    const human = await run(['plan'], { cwd: cli.dir, env: cli.env });
    expect(human.stdout).toMatch(/list calls, [\d,]+ credits/);
  });
});

describe('failures', () => {
  it('rejected credentials exit 1 with what to check, and print no secret even with --verbose', async () => {
    await inTempDir(async (sub) => {
      const e = { ...cli.env, EVSYNC_CLIENT_SECRET: 'not-the-secret-123', EVSYNC_DB: join(sub, 'x.duckdb') };
      const r = await run(['sync', '--verbose', '--json'], { cwd: sub, env: e });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('EVSYNC_CLIENT_SECRET');
      expectNoSecrets(r.stdout + r.stderr);
      expect(r.stdout + r.stderr).not.toContain('not-the-secret-123');
    });
  });
});

describe('budget and resume', () => {
  it('a tiny --budget stops with exit 3 and says how to resume; the same command then completes', async () => {
    await inTempDir(async (sub) => {
      const e = { ...cli.env, EVSYNC_DB: join(sub, 'budget.duckdb') };
      const first = await run(['backfill', '--budget', '40'], { cwd: sub, env: e });
      expect(first.code, first.stderr).toBe(3);
      expect(first.stderr).toContain('run the same command again (`evsync backfill --budget 40`)');
      expect(first.stdout).toContain('partial');
      const second = await run(['backfill', '--json'], { cwd: sub, env: e });
      expect(second.code, second.stderr).toBe(0);
      const result = JSON.parse(second.stdout) as SyncResult;
      expect(result.status).toBe('done');
      const q = await run(['query', 'select count(*) as n from registrants', '--format', 'csv'], {
        cwd: sub,
        env: e,
      });
      expect(q.stdout).toBe(`n\n${cli.sim.truth('registrants').records.length}\n`);
    });
  });
});

describe('output', () => {
  it('progress shows on a terminal only, on stderr', async () => {
    await inTempDir(async (sub) => {
      const e = { ...cli.env, EVSYNC_DB: join(sub, 'tty.duckdb') };
      const tty = await run(['sync', '--streams', 'events,registrants'], { cwd: sub, env: e, tty: true });
      expect(tty.code, tty.stderr).toBe(0);
      expect(tty.stderr).toMatch(/registrants\s+\d+ pages\s+[\d,]+ rows/);
      expect(tty.stderr).toContain('credits:');
      // The result (summary table) is on stdout, free of progress escapes.
      expect(tty.stdout).toContain('inserted');
      expect(tty.stdout).not.toContain('\u001b[');
      const piped = await run(['sync', '--streams', 'events,registrants'], { cwd: sub, env: e });
      expect(piped.stderr).not.toContain('pages');
      const quiet = await run(['sync', '--quiet', '--streams', 'events'], { cwd: sub, env: e, tty: true });
      expect(quiet.stderr).toBe('');
    });
  });

  it('sync --parquet-out exports what the run wrote', async () => {
    await inTempDir(async (sub) => {
      const e = { ...cli.env, EVSYNC_DB: join(sub, 'pq.duckdb') };
      const out = join(sub, 'out');
      const r = await run(['sync', '--streams', 'events,registrants', '--parquet-out', out], { cwd: sub, env: e });
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(join(out, 'registrants'))).toBe(true);
      expect(existsSync(join(out, 'events'))).toBe(true);
    });
  });
});
