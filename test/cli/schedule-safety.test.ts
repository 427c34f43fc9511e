/**
 * `evsync schedule`: the cron expression is validated and blamed on where it came from, runs per hour are counted
 * right for 6-field (seconds) schedules, the budget is judged against the limit the service reported, one API
 * client (and token) serves every run, and --json prints one JSON line per run.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BufferStream } from '../../src/cli/output/io.js';
import { main } from '../../src/cli/program.js';
import { runsPerHour } from '../../src/daemon/schedule-budget.js';
import { inTempDir, run, simulatedCli, writeConfig } from './helpers.js';

const cli = simulatedCli({ seed: 21, prefix: 'evsync-schedule-', db: 'sched.duckdb' });

/** Output that calls back on every write, so a test can act on what the CLI printed, when it printed it. */
class WatchedStream extends BufferStream {
  constructor(private readonly onWrite: (text: string) => void) {
    super(false);
  }
  override write(chunk: string): boolean {
    super.write(chunk);
    this.onWrite(this.text);
    return true;
  }
}

/** Runs the CLI until `until(stdout)` holds (checked on each write, no sleeping on the clock), then stops it. */
async function runUntil(
  argv: string[],
  runEnv: Record<string, string>,
  until: (stdout: string) => boolean,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const stop = new AbortController();
  const stdout = new WatchedStream((text) => {
    if (until(text)) stop.abort();
  });
  const stderr = new BufferStream(false);
  const code = await main(argv, {
    stdout,
    stderr,
    env: { NO_COLOR: '1', ...runEnv },
    cwd: cli.dir,
    stop: stop.signal,
    handleSignals: false,
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** Stopped by the test: cleanly (0), or cutting a run of the every-second schedule short (3, its state saved). */
function expectStopped(r: { code: number; stderr: string }): void {
  expect(r.code === 0 || (r.code === 3 && r.stderr.includes('was cut short')), r.stderr).toBe(true);
}

const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');

describe('evsync schedule', () => {
  it('names the config key or the flag when the cron expression is invalid (exit 2)', async () => {
    await inTempDir(async (sub) => {
      writeConfig(sub, { schedule: { cron: 'every day at nine' } });
      const fromConfig = await run(['schedule'], { cwd: sub, env: cli.env });
      expect(fromConfig.code).toBe(2);
      // Named by its key, whichever check meets it first (the config schema, or schedule itself).
      expect(fromConfig.stderr).toContain('evsync.config.json: schedule.cron: ');
      expect(fromConfig.stderr).toMatch(/valid cron/);
      expect(fromConfig.stderr).not.toContain('--cron');
      // In a folder without that file (an invalid schedule.cron there stops every command at load).
      const fromFlag = await run(['schedule', '--cron', '61 * * * *'], { cwd: cli.dir, env: cli.env });
      expect(fromFlag.code).toBe(2);
      expect(fromFlag.stderr).toContain('--cron: "61 * * * *" is not a valid cron');
      expect(fromFlag.stderr).not.toContain('schedule.cron');
    });
  });

  it('counts runs per hour exactly for a seconds-level cron (*/3 * * * * * is 1,200, not 1,205.9)', async () => {
    const every3s = Array.from({ length: 200 }, (_, i) => 1_000_000 + i * 3000);
    expect(runsPerHour(every3s)).toBe(1200);
    const stopped = new AbortController();
    stopped.abort();
    const r = await run(['schedule', '--cron', '*/3 * * * * *'], { cwd: cli.dir, env: cli.env, stop: stopped.signal });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('about 1,200 runs/hour');
  });

  it('reuses one client (one token call) across runs and prints one JSON line per run', async () => {
    cli.sim.resetCounters();
    const r = await runUntil(
      ['schedule', '--cron', '* * * * * *', '--streams', 'events', '--json'],
      cli.env,
      (out) => lines(out).length >= 2,
    );
    expectStopped(r);
    const [first, second] = lines(r.stdout).map((l) => JSON.parse(l));
    expect(first).toMatchObject({ run: 1, status: 'done' });
    expect(second).toMatchObject({ run: 2, status: 'done' });
    expect(first.runId).not.toBe(second.runId);
    // Per-run numbers, although the client is shared: the token is bought once, by the first run.
    expect(first.credits.token).toBe(1);
    expect(second.credits.token).toBe(0);
    expect(second.credits.total).toBe(second.credits.list + second.credits.other);
    expect(cli.sim.counters().tokenCalls).toBe(1);
  });

  it('judges the budget against the limit the service reported, not 2000/600', async () => {
    // The runs above recorded the simulator's 100,000-credit limit in the warehouse.
    const stopped = new AbortController();
    stopped.abort();
    const r = await run(['schedule', '--cron', '* * * * * *'], { cwd: cli.dir, env: cli.env, stop: stopped.signal });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /but the budget is 600,000\/hour \(100,000 credits per 600 s: the limit the service reported\)/,
    );
  });

  it('a run that fails still prints its JSON line, and the daemon goes on', async () => {
    // Credentials the service rejects make every run fail (the daemon holds the warehouse, so a bad --db is a
    // usage error at start instead, see below).
    const rejected = { ...cli.env, EVSYNC_CLIENT_SECRET: 'not-the-secret-of-this-account' };
    const r = await runUntil(
      ['schedule', '--cron', '* * * * * *', '--json'],
      rejected,
      (out) => lines(out).length >= 2,
    );
    expectStopped(r);
    const [first, second] = lines(r.stdout).map((l) => JSON.parse(l));
    expect(first).toMatchObject({ run: 1, status: 'failed' });
    expect(first.error).toMatch(/credentials/i);
    expect(second).toMatchObject({ run: 2, status: 'failed' });
    expect(r.stdout + r.stderr).not.toContain('not-the-secret-of-this-account');
  });

  it('opens the warehouse once at start: a database it cannot open stops it before any run', async () => {
    const broken = { ...cli.env, EVSYNC_DB: join(cli.dir, 'no-such-folder', 'x.duckdb') };
    const before = cli.sim.counters();
    const r = await run(['schedule', '--cron', '* * * * * *', '--json'], { cwd: cli.dir, env: broken });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('x.duckdb');
    expect(r.stdout).toBe('');
    expect(cli.sim.counters().listCalls).toBe(before.listCalls);
  });
});
