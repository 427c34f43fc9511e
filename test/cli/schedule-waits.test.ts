/**
 * `evsync schedule` says what it waits for, as `sync` does: a run that spends the credit window prints the wait
 * (how long, why, until when) instead of going quiet for minutes; `status --json`, the status page and `/metrics`
 * say the same credits left (the service's own count) and that it waits, until when. The window runs on the
 * simulator's own clock, so the wait lasts until the test stops the daemon, however fast the machine.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../src/cli/status/document.js';
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

/** `status --json` (through the daemon's socket), `/status.json`, the page and `/metrics` while the run waits. */
async function sameCreditsEverywhere(admin: string, env: Record<string, string>): Promise<void> {
  const left = 40 - sim.counters().credits;
  const status = await run(['status', '--json'], { cwd: dir, env });
  expect(status.code, status.stderr).toBe(0);
  const doc = JSON.parse(status.stdout) as StatusReport;
  const served = (await (await fetch(`${admin}/status.json`)).json()) as StatusReport;
  const page = await (await fetch(`${admin}/`)).text();
  const metrics = await (await fetch(`${admin}/metrics`)).text();
  const shown = {
    json: doc.credits?.current?.remaining,
    served: served.credits?.current?.remaining,
    page: Number(/data-card="credits"[^>]*data-remaining="(\d+)"/.exec(page)?.[1]),
    metrics: Number(/^evsync_credits_remaining (\d+)$/m.exec(metrics)?.[1]),
  };
  expect(shown).toEqual({ json: left, served: left, page: left, metrics: left });
  expect(left).toBe(9);
  expect(doc.state?.level).toBe('waiting');
  expect(doc.state?.waiting?.who).toMatch(/^evsync schedule \(PID \d+\), its scheduled run$/);
  expect(page).toContain('Waiting for the credit window until <strong');
  expect(metrics).toMatch(/^evsync_credits_waiting 1$/m);
}

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
    const argv = ['schedule', '--cron', '0 3 * * *', '--run-now', '--streams', 'core', '--concurrency', '1'];
    const running = run([...argv, '--admin-listen', '127.0.0.1:0'], {
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
    await sameCreditsEverywhere(/status page on (http:\/\/\S+)\//.exec(stderr.text)![1]!, env);
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
