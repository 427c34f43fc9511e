/**
 * `evsync plan --estimate` as a new user meets it: the no-call plan on a warehouse that never synced names what the
 * estimate costs, and the estimate spends exactly that; its output says what it spent and kept, how it sampled and
 * extrapolated, the range, and the time at the limit the service reported; `--json` carries the same; the backfill
 * that follows resumes it and spends within 25% of the figure. `--estimate` and `--count` exclude each other.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run, simulatedCli } from './helpers.js';

const cli = simulatedCli({
  seed: 31,
  prefix: 'evsync-plan-estimate-',
  rateLimit: { credits: 2000, windowSeconds: 600 },
});

const num = (text: string) => Number(text.replace(/,/g, ''));

describe('plan --estimate before a first backfill', () => {
  it('costs what the no-call plan said; --json says how it was reached, at the limit the service reported', async () => {
    const env = { ...cli.env, EVSYNC_DB: join(cli.dir, 'estimate-json.duckdb') };
    const dry = await run(['plan', '--backfill'], { cwd: cli.dir, env });
    expect(dry.code, dry.stderr).toBe(0);
    const said = dry.stdout.match(/`evsync plan --backfill --estimate` estimates everything for ([\d,]+) credits/);
    expect(said, dry.stdout).not.toBeNull();

    cli.sim.resetCounters();
    const r = await run(['plan', '--backfill', '--estimate', '--json'], { cwd: cli.dir, env });
    expect(r.code, r.stderr).toBe(0);
    // tiny's first account has 3 events in one page: the default sample (3) is every one of them, as the plan said.
    expect(cli.sim.counters().credits).toBe(num(said![1]!) + 1);
    const report = JSON.parse(r.stdout);
    expect(report.spentCredits).toBe(cli.sim.counters().credits);
    expect(report.estimate).toMatchObject({ events: 3, unread: 3, extrapolatedCredits: 0, lowerBound: [] });
    expect(report.estimate.sampled).toHaveLength(3);
    expect(report.rateLimit).toMatchObject({ limit: 2000, limitSource: 'reported', windowSeconds: 600 });
    expect(report.rateLimit.remaining).toBe(2000 - report.spentCredits);
    expect(report.countRunId).toEqual(expect.any(String));
  });

  it('one event counted: says its basis, range, spend and time; the backfill resumes it within 25%', async () => {
    const env = { ...cli.env, EVSYNC_DB: join(cli.dir, 'estimate-text.duckdb') };
    cli.sim.resetCounters();
    const r = await run(['plan', '--backfill', '--sample', '1'], { cwd: cli.dir, env });
    expect(r.code, r.stderr).toBe(0);
    const spent = cli.sim.counters();
    const head = r.stdout.match(/backfill: about ([\d,]+) list calls, about ([\d,]+) credits, 3 events in scope/);
    expect(head, r.stdout).not.toBeNull();
    expect(r.stdout).toMatch(
      /at the reported limit \(2,000 credits per 10m00s: [\d,]+ left, the window resets in \S+; the window's length is the configured one\): 1 rate-limit window, about \S+/,
    );
    expect(r.stdout).toContain(
      `estimating spent ${spent.credits} credits (${spent.listCalls} list calls and 1 for the token): the pages it read are kept, and the next \`evsync backfill\` resumes from them`,
    );
    expect(r.stdout).toMatch(
      /basis: the events list read whole and the account streams counted .*; page 1 of every per-event stream on 1 of the 3 events never read \(\d+\), spread over their target_attendance, largest first; the other 2 extrapolated by their target_attendance/,
    );
    expect(r.stdout).toMatch(
      /range: [\d,]+ to [\d,]+ credits: the [\d,]+ extrapolated priced at the smallest and largest rate/,
    );
    expect(r.stdout).toMatch(/the range rests on a single counted event with rows to scale by/);

    cli.sim.resetCounters();
    const backfill = await run(['backfill', '--json'], { cwd: cli.dir, env });
    expect(backfill.code, backfill.stderr).toBe(0);
    const listCredits = JSON.parse(backfill.stdout).credits.list as number;
    expect(listCredits).toBe(cli.sim.counters().listCalls * 10);
    expect(Math.abs(num(head![2]!) - listCredits)).toBeLessThanOrEqual(listCredits * 0.25);
  });

  it('--estimate (or --sample) with --count is refused before any call (exit 2)', async () => {
    cli.sim.resetCounters();
    for (const argv of [
      ['plan', '--estimate', '--count'],
      ['plan', '--sample', '2', '--count'],
    ]) {
      const r = await run(argv, { cwd: cli.dir, env: cli.env });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/cannot be used with option '--count'/);
    }
    expect(cli.sim.counters().credits).toBe(0);
  });
});
