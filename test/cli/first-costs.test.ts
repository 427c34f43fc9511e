/**
 * What a new user is told about cost: `plan` on a warehouse that never counted says on stdout that its figure is a
 * lower bound and what `--count` costs and buys (and that figure is what counting spends); `check` with the window's
 * credits spent reports a state to wait out (exit 0), not a failure.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run, simulatedCli } from './helpers.js';

const cli = simulatedCli({ seed: 27, prefix: 'evsync-first-costs-' });

describe('plan on a warehouse that never counted', () => {
  it('says on stdout that the figure is a lower bound, and what --count costs and buys', async () => {
    const env = { ...cli.env, EVSYNC_DB: join(cli.dir, 'never-counted.duckdb') };
    const r = await run(['plan', '--backfill'], { cwd: cli.dir, env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/backfill: at least 5 list calls, at least 50 credits, unknown events in scope/);
    const bound = r.stdout.match(
      /lower bound only: no events are known yet, so the (\d+) streams listed per event are not priced \(at least (\d+) credits per event/,
    );
    expect(bound).not.toBeNull();
    const perEvent = Number(bound![2]);
    expect(perEvent).toBe(10 * Number(bound![1]));
    const count = r.stdout.match(
      /`evsync plan --backfill --count` prices everything exactly: it spends (\d+) credits now plus (\d+) per event \(page 1 of every item\), and the pages it reads are kept: the backfill resumes from them and does not buy them again/,
    );
    expect(count).not.toBeNull();
    // Said once, in the main output: not again as a warning.
    expect(r.stderr).not.toContain('lower bound');

    // What it said --count would spend is what counting spends (beside the token call).
    cli.sim.resetCounters();
    const counted = await run(['plan', '--backfill', '--count'], { cwd: cli.dir, env });
    expect(counted.code, counted.stderr).toBe(0);
    const events = cli.sim.truth('events').records.length;
    expect(cli.sim.counters().credits).toBe(1 + Number(count![1]) + events * Number(count![2]));
    expect(counted.stdout).not.toContain('lower bound');
  });
});

// 20 credits per 10 hours (the wait reads as hours and minutes at any speed): a first check (11) leaves 9, a second
// one's token call 8: short of a list call (10).
const tight = simulatedCli({
  seed: 28,
  prefix: 'evsync-check-spent-',
  db: 'w.duckdb',
  rateLimit: { credits: 20, windowSeconds: 36_000 },
});

describe('check with the window spent', () => {
  it('reports the spent budget as a state with the wait (exit 0), not as a failure', async () => {
    const env = tight.env;
    const first = await run(['check'], { cwd: tight.dir, env });
    expect(first.code, first.stdout).toBe(0);
    const r = await run(['check'], { cwd: tight.dir, env });
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).not.toContain('✗');
    expect(r.stdout).not.toContain('fix the failures');
    expect(r.stdout).toMatch(
      /· list call: not made: \d+ credits usable in this window, 10 needed; the next window starts in \d+h\d+m \(nothing to fix: the budget is spent for now\)/,
    );
    expect(r.stdout).toMatch(
      /· rate limit: budget spent: \d+ of 20 credits left, the window resets in \d+h\d+m \(a sync waits for it, up to --max-wait\)/,
    );
    expect(r.stdout).toMatch(
      /a sync can run once the rate-limit window resets in \d+h\d+m \(this check spent 1 credit\)/,
    );
    const json = await run(['check', '--json'], { cwd: tight.dir, env });
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report.ok).toBe(true);
    expect(report.rateLimit).toMatchObject({ limit: 20 });
  });
});
