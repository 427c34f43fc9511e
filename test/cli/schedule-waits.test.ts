/**
 * `evsync schedule` says what it waits for, as `sync` does: a run that spends the credit window prints the wait
 * (how long, why, until when) instead of going quiet for minutes. The window runs on the simulator's own clock,
 * so the wait lasts until the test stops the daemon, however fast the machine.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { run, tempDir, waitForText } from './helpers.js';

let sim: Simulator;
let dir: string;
let cleanup: () => void;
beforeAll(async () => {
  sim = await startSimulator({
    size: 'tiny',
    seed: 4,
    rateLimit: { credits: 40, windowSeconds: 600, clock: 'simulated' },
  });
  ({ dir, cleanup } = tempDir('evsync-schedule-waits-'));
});
afterAll(async () => {
  await sim.close();
  cleanup();
});

describe('evsync schedule', () => {
  it('prints its waits for the rate-limit window, and exits 3 when stopped during one (state saved)', async () => {
    const a = sim.accounts[0]!;
    const env = {
      EVSYNC_BASE_URL: sim.baseUrl,
      EVSYNC_CLIENT_ID: a.clientId,
      EVSYNC_CLIENT_SECRET: a.clientSecret,
      EVSYNC_DB: join(dir, 'waits.duckdb'),
    };
    const stop = new AbortController();
    let stderr = { text: '' };
    const running = run(['schedule', '--cron', '0 3 * * *', '--run-now', '--streams', 'core'], {
      cwd: dir,
      env,
      stop: stop.signal,
      onStart: (o) => {
        stderr = o.stderr;
      },
    });
    await waitForText(
      () => stderr.text,
      /waiting \S+ for the rate-limit window \(credits used up for this window\), until \S+/,
    );
    stop.abort();
    const r = await running;
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain('the run in flight was cut short');
    // 40 credits: the token and three lists; the fourth list waits for a window that never comes.
    expect(sim.counters().listCalls).toBe(3);
    const status = await run(['status', '--json'], { cwd: dir, env });
    expect(JSON.parse(status.stdout).runs[0].status).toBe('partial');
  });
});
