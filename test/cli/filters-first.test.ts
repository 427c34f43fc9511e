/**
 * Filters are judged before credits go: a stream name at once (no call), an event filter on the events list alone
 * (the token and one list call, counted here), with a "did you mean" for a typo; every error is printed once.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run, simulatedCli } from './helpers.js';

const cli = simulatedCli({ seed: 25, prefix: 'evsync-filters-' });

let n = 0;
/** A fresh warehouse per test: nothing stored, so the events must be listed to judge a filter. */
function freshEnv(): Record<string, string> {
  n += 1;
  return { ...cli.env, EVSYNC_DB: join(cli.dir, `fresh-${n}.duckdb`) };
}

function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.startsWith('error:'));
}

describe('filters before credits', () => {
  it('`sync --events 999` costs the token and the events list, then exits 2 naming the ids there', async () => {
    cli.sim.resetCounters();
    const r = await run(['sync', '--events', '999'], { cwd: cli.dir, env: freshEnv() });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/error: no event matches --events 999 \(event ids here: \d+/);
    expect(errorLines(r.stderr)).toHaveLength(1);
    const c = cli.sim.counters();
    expect(c.tokenCalls).toBe(1);
    expect(c.byPath).toEqual({ 'POST /oauth2/token': 1, 'GET /events': c.listCalls });
    expect(c.credits).toBe(1 + 10 * c.listCalls);
    expect(c.listCalls).toBe(1);
  });

  it('a typo in --event-status gets a "did you mean", at the same cost', async () => {
    cli.sim.resetCounters();
    const r = await run(['backfill', '--event-status', 'liv'], { cwd: cli.dir, env: freshEnv() });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /error: no event matches --event-status liv \(statuses here: [a-z, ]+; did you mean "live"\?\)/,
    );
    expect(cli.sim.counters().credits).toBe(11);
  });

  it('a mistyped stream name is refused before any call, with a "did you mean" (exit 2)', async () => {
    cli.sim.resetCounters();
    const r = await run(['sync', '--streams', 'registrnts,sessions'], { cwd: cli.dir, env: freshEnv() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Unknown stream "registrnts" (did you mean "registrants"?)');
    expect(errorLines(r.stderr)).toHaveLength(1);
    // A word that is no near miss gets no guess.
    const far = await run(['plan', '--streams', 'zzzzzz'], { cwd: cli.dir, env: freshEnv() });
    expect(far.code).toBe(2);
    expect(far.stderr).toContain('Unknown stream "zzzzzz"; valid: core, all');
    expect(cli.sim.counters().credits).toBe(0);
  });

  it('wrong credentials: one error, printed once (exit 1)', async () => {
    const r = await run(['sync'], { cwd: cli.dir, env: { ...freshEnv(), EVSYNC_CLIENT_SECRET: 'not-the-secret' } });
    expect(r.code).toBe(1);
    const lines = r.stderr.split('\n').filter((l) => /credentials/i.test(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^error: credentials rejected by http:\/\/127\.0\.0\.1:\d+\/v1 \(HTTP 401[^)]*\): check EVSYNC_CLIENT_ID and EVSYNC_CLIENT_SECRET \(or EVSYNC_CREDENTIALS\) for this base URL$/,
    );
  });

  it('a filter that matches keeps the run going as before (exit 0)', async () => {
    const env = freshEnv();
    const first = await run(['sync', '--streams', 'events', '--json'], { cwd: cli.dir, env });
    expect(first.code, first.stderr).toBe(0);
    const r = await run(['sync', '--streams', 'registrants', '--events', '101,999'], { cwd: cli.dir, env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('--events: no event 999 in this account (ignored)');
  });
});
