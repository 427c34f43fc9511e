/**
 * What sync, backfill, plan and status tell the user, and what they refuse, run as the user runs them (the CLI
 * in-process against the simulator on loopback): a warehouse of another account, filters that match nothing, a
 * failing `--json` run, a plan that must not write, unavailable streams in `status` and `plan`.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { type LoopbackProxy, startProxy } from '../helpers/proxy.js';
import { run, tempDir, writeConfig } from './helpers.js';

let sim: Simulator;
let proxy: LoopbackProxy;
let dir: string;
let cleanup: () => void;
let env: Record<string, string>;

beforeAll(async () => {
  sim = await startSimulator({ size: 'tiny', seed: 5, port: 0, rateLimit: { credits: 100_000, windowSeconds: 600 } });
  proxy = await startProxy(sim.baseUrl, { notFound: (p) => p === '/event-questions' });
  ({ dir, cleanup } = tempDir());
  const a = sim.accounts[0]!;
  env = {
    EVSYNC_BASE_URL: proxy.baseUrl,
    EVSYNC_CLIENT_ID: a.clientId,
    EVSYNC_CLIENT_SECRET: a.clientSecret,
    EVSYNC_DB: join(dir, 'main.duckdb'),
  };
});
afterAll(async () => {
  await proxy.close();
  await sim.close();
  cleanup();
});

function sha(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

describe('a first backfill on an account that does not serve /event-questions', () => {
  it('exits 0 with a warning, and status and plan name the unavailable stream with its fix', async () => {
    const r = await run(['backfill', '--streams', 'events,registrants'], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/event_questions is unavailable \(\/event-questions answered 404\)/);
    expect(r.stderr).toMatch(/registrants: custom fields not requested/);

    const status = await run(['status', '--json'], { cwd: dir, env });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).unavailable).toMatchObject([
      {
        stream: 'event_questions',
        path: '/event-questions',
        status: 404,
        fix: 'streams.event_questions.path in evsync.config.json',
      },
    ]);
    const text = await run(['status'], { cwd: dir, env });
    expect(text.stdout).toMatch(/Unavailable streams/);

    const plan = await run(['plan', '--streams', 'events,registrants'], { cwd: dir, env });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/event_questions is unavailable/);
  });

  it('plan without --count writes nothing: the warehouse file is byte for byte the same, and no file is created', async () => {
    const db = env.EVSYNC_DB!;
    const before = sha(db);
    const r = await run(['plan', '--backfill'], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    expect(sha(db)).toBe(before);
    expect(existsSync(`${db}.wal`)).toBe(false);
    const fresh = join(dir, 'never.duckdb');
    const none = await run(['plan', '--backfill'], { cwd: dir, env: { ...env, EVSYNC_DB: fresh } });
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toMatch(/at least/);
    expect(existsSync(fresh)).toBe(false);
  });
});

describe('refusals', () => {
  it('another account on this warehouse: exit 2, both named, how to use another --db, no secret', async () => {
    const b = sim.accounts[1]!;
    const other = { ...env, EVSYNC_CLIENT_ID: b.clientId, EVSYNC_CLIENT_SECRET: b.clientSecret };
    const r = await run(['sync'], { cwd: dir, env: other });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(sim.accounts[0]!.clientId);
    expect(r.stderr).toContain(b.clientId);
    expect(r.stderr).toMatch(/--db other\.duckdb/);
    expect(r.stderr + r.stdout).not.toContain(b.clientSecret);
  });

  it('filters that match nothing: exit 2 naming what exists; a contradictory range before any call', async () => {
    const ids = await run(['sync', '--events', '999999'], { cwd: dir, env });
    expect(ids.code).toBe(2);
    expect(ids.stderr).toMatch(/no event matches --events 999999 \(event ids here: \d+/);
    const status = await run(['sync', '--event-status', 'bogus'], { cwd: dir, env });
    expect(status.code).toBe(2);
    expect(status.stderr).toMatch(/statuses here: /);
    const calls = sim.counters().listCalls;
    const range = await run(['sync', '--events-from', '2026-06-01', '--events-to', '2026-01-01'], { cwd: dir, env });
    expect(range.code).toBe(2);
    expect(range.stderr).toMatch(/--events-from 2026-06-01 is after --events-to 2026-01-01/);
    expect(sim.counters().listCalls).toBe(calls);
  });

  it('a failing sync --json still answers on stdout with JSON', async () => {
    const bad = { ...env, EVSYNC_CLIENT_SECRET: 'wrong-secret' };
    const r = await run(['sync', '--json'], { cwd: dir, env: bad });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'failed', error: expect.stringMatching(/rejected|401|403/) });
    expect(r.stdout + r.stderr).not.toContain('wrong-secret');
  });

  it('an invalid schedule.cron in the config is refused by every command that reads it, naming the key', async () => {
    const cfgDir = tempDir();
    try {
      writeConfig(cfgDir.dir, { schedule: { cron: 'every tuesday' } });
      const r = await run(['sync'], { cwd: cfgDir.dir, env });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/schedule\.cron: expected a valid cron expression/);
    } finally {
      cfgDir.cleanup();
    }
  });
});
