/**
 * What sync, backfill, plan and status tell the user, and what they refuse, run as the user runs them (the CLI
 * in-process against the simulator on loopback): a warehouse of another account, filters that match nothing, a
 * failing `--json` run, a plan that must not write, unavailable streams in `status` and `plan`.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inTempDir, run, simulatedCli, writeConfig } from './helpers.js';

const cli = simulatedCli({ seed: 5, db: 'main.duckdb', proxy: { notFound: (p) => p === '/event-questions' } });

function sha(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

describe('a first backfill on an account that does not serve /event-questions', () => {
  it('exits 0 with a warning, and status and plan name the unavailable stream with its fix', async () => {
    const r = await run(['backfill', '--streams', 'events,registrants'], { cwd: cli.dir, env: cli.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/event_questions is unavailable \(\/event-questions answered 404\)/);
    expect(r.stderr).toMatch(/registrants: custom fields not requested/);

    const status = await run(['status', '--json'], { cwd: cli.dir, env: cli.env });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).unavailable).toMatchObject([
      {
        stream: 'event_questions',
        path: '/event-questions',
        status: 404,
        fix: 'streams.event_questions.path in evsync.config.json',
      },
    ]);
    const text = await run(['status'], { cwd: cli.dir, env: cli.env });
    expect(text.stdout).toMatch(/Unavailable streams/);

    const plan = await run(['plan', '--streams', 'events,registrants'], { cwd: cli.dir, env: cli.env });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/event_questions is unavailable/);
  });

  it('plan without --count writes nothing: the warehouse file is byte for byte the same, and no file is created', async () => {
    const db = cli.env.EVSYNC_DB!;
    const before = sha(db);
    const r = await run(['plan', '--backfill'], { cwd: cli.dir, env: cli.env });
    expect(r.code, r.stderr).toBe(0);
    expect(sha(db)).toBe(before);
    expect(existsSync(`${db}.wal`)).toBe(false);
    const fresh = join(cli.dir, 'never.duckdb');
    const none = await run(['plan', '--backfill'], { cwd: cli.dir, env: { ...cli.env, EVSYNC_DB: fresh } });
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toMatch(/at least/);
    expect(existsSync(fresh)).toBe(false);
  });
});

describe('refusals', () => {
  it('another account on this warehouse: exit 2, both named, how to use another --db, no secret', async () => {
    const b = cli.sim.accounts[1]!;
    const other = { ...cli.env, EVSYNC_CLIENT_ID: b.clientId, EVSYNC_CLIENT_SECRET: b.clientSecret };
    const r = await run(['sync'], { cwd: cli.dir, env: other });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(cli.sim.accounts[0]!.clientId);
    expect(r.stderr).toContain(b.clientId);
    expect(r.stderr).toMatch(/--db other\.duckdb/);
    expect(r.stderr + r.stdout).not.toContain(b.clientSecret);
  });

  it('filters that match nothing: exit 2 naming what exists; a contradictory range before any call', async () => {
    const ids = await run(['sync', '--events', '999999'], { cwd: cli.dir, env: cli.env });
    expect(ids.code).toBe(2);
    expect(ids.stderr).toMatch(/no event matches --events 999999 \(event ids here: \d+/);
    const status = await run(['sync', '--event-status', 'bogus'], { cwd: cli.dir, env: cli.env });
    expect(status.code).toBe(2);
    expect(status.stderr).toMatch(/statuses here: /);
    const calls = cli.sim.counters().listCalls;
    const range = await run(['sync', '--events-from', '2026-06-01', '--events-to', '2026-01-01'], {
      cwd: cli.dir,
      env: cli.env,
    });
    expect(range.code).toBe(2);
    expect(range.stderr).toMatch(/--events-from 2026-06-01 is after --events-to 2026-01-01/);
    expect(cli.sim.counters().listCalls).toBe(calls);
  });

  it('a failing sync --json still answers on stdout with JSON', async () => {
    const bad = { ...cli.env, EVSYNC_CLIENT_SECRET: 'wrong-secret' };
    const r = await run(['sync', '--json'], { cwd: cli.dir, env: bad });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'failed', error: expect.stringMatching(/rejected|401|403/) });
    expect(r.stdout + r.stderr).not.toContain('wrong-secret');
  });

  it('an invalid schedule.cron in the config is refused by every command that reads it, naming the key', async () => {
    await inTempDir(async (cfgDir) => {
      writeConfig(cfgDir, { schedule: { cron: 'every tuesday' } });
      const r = await run(['sync'], { cwd: cfgDir, env: cli.env });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/schedule\.cron: expected a valid cron expression/);
    });
  });
});
