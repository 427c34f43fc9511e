import { describe, expect, it } from 'vitest';
import { run, simulatedCli, waitForText } from './helpers.js';

// Every answer takes 250 ms: a sync of the tiny data set lasts several seconds, longer than a cron second.
const cli = simulatedCli({ seed: 9, faults: { latencyMs: 250 }, db: 'sched.duckdb' });

describe('evsync schedule', () => {
  it('never overlaps runs (skipped ticks are logged) and stops cleanly with exit 3 (cut short) and saved state', async () => {
    const stop = new AbortController();
    let stderr = { text: '' };
    const running = run(['schedule', '--cron', '* * * * * *', '--concurrency', '1'], {
      cwd: cli.dir,
      env: cli.env,
      stop: stop.signal,
      onStart: (out) => {
        stderr = out.stderr;
      },
    });
    // Stop once a tick has met the running sync: what the test needs has then happened, however fast the machine.
    await waitForText(() => stderr.text, /tick at \S+ skipped: the previous sync is still running/);
    stop.abort();
    const r = await running;
    // The run in flight was cut short: partial, as a stopped `sync` is (exit 3), and resumed by the next start.
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain('run #1 started');
    expect(r.stderr).not.toContain('run #2 started');
    expect(r.stderr).toMatch(/tick at \S+ skipped: the previous sync is still running/);
    expect(r.stderr).toContain('stop requested: stopping after the page in flight');
    expect(r.stderr).toMatch(/schedule stopped after 1 run\(s\), [1-9]\d* tick\(s\) skipped/);

    // The interrupted run saved its state: partial, resumable by the next run.
    const status = await run(['status', '--json'], { cwd: cli.dir, env: cli.env });
    expect(status.code, status.stderr).toBe(0);
    const s = JSON.parse(status.stdout);
    expect(s.runs[0]?.status, r.stderr).toBe('partial');
  });

  it('warns at start when the schedule cannot fit the credit budget', async () => {
    // A completed sync of the events leaves them and the limit the simulator reported (100,000 per 600 s) in the
    // warehouse, however far the interrupted run above got: a sync of every stream every second cannot fit
    // 600,000/hour.
    const sync = await run(['sync', '--streams', 'events'], { cwd: cli.dir, env: cli.env });
    expect(sync.code, sync.stderr).toBe(0);
    const stop = new AbortController();
    stop.abort();
    const r = await run(['schedule', '--cron', '* * * * * *', '--streams', 'all'], {
      cwd: cli.dir,
      env: cli.env,
      stop: stop.signal,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /this schedule may need up to [\d,]+ credits\/hour .* but the budget is 600,000\/hour \(100,000 credits per 600 s: the limit the service reported\)/,
    );
    expect(r.stderr).toContain('schedule stopped after 0 run(s)');
  });
});
