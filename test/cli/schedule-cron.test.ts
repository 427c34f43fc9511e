/**
 * Every cron expression the `cron` library accepts works in `schedule` and `serve`, in the local zone or --tz: a
 * yearly "0 0 1 1 *" (whose 200 next dates lie past the library's 8-year horizon) starts and names its next date,
 * computed here independently; an expression that never fires is a usage error, not the library's raw message.
 */
import { describe, expect, it } from 'vitest';
import type { BufferStream } from '../../src/cli/output/io.js';
import { run, simulatedCli, waitForText } from './helpers.js';

const cli = simulatedCli({ seed: 30, prefix: 'evsync-cron-', db: 'w.duckdb' });

/** Runs a daemon command until it prints its schedule, then stops it; returns what it printed and its exit code. */
async function startAndStop(argv: string[], env: Record<string, string> = cli.env) {
  const stop = new AbortController();
  let err: BufferStream | undefined;
  const running = run(argv, {
    cwd: cli.dir,
    env,
    stop: stop.signal,
    onStart: (out) => {
      err = out.stderr;
    },
  });
  const ended = running.then((r) => r);
  await Promise.race([waitForText(() => err?.text ?? '', /next at \S+; Ctrl-C to stop/), ended]);
  stop.abort();
  return ended;
}

function nextAt(stderr: string): number {
  const m = stderr.match(/next at (\S+); Ctrl-C to stop/);
  if (!m) throw new Error(`no "next at" in:\n${stderr}`);
  return Date.parse(m[1]!);
}

/** The next 1 January, 00:00 local time (the process's zone), after now. */
function nextNewYearLocal(): number {
  return new Date(new Date().getFullYear() + 1, 0, 1, 0, 0, 0).getTime();
}

/** The next 1 January, 00:00 in Auckland (UTC+13 in January, daylight time), after now. */
function nextNewYearAuckland(): number {
  const year = new Date().getUTCFullYear();
  const at = (y: number) => Date.UTC(y, 0, 1, 0, 0, 0) - 13 * 3_600_000;
  return at(year) > Date.now() ? at(year) : at(year + 1);
}

describe('a yearly schedule', () => {
  it('schedule --cron "0 0 1 1 *" starts in the local zone and names the next 1 January', async () => {
    const r = await startAndStop(['schedule', '--cron', '0 0 1 1 *']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('No execution date');
    expect(r.stderr).toContain('about 1 run/year');
    expect(nextAt(r.stderr)).toBe(nextNewYearLocal());
  });

  it('with --tz Pacific/Auckland, the next 1 January there', async () => {
    const r = await startAndStop(['schedule', '--cron', '0 0 1 1 *', '--tz', 'Pacific/Auckland']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('schedule "0 0 1 1 *" (Pacific/Auckland)');
    expect(nextAt(r.stderr)).toBe(nextNewYearAuckland());
  });

  it('serve --cron "0 0 1 1 *" starts too', async () => {
    const env = { ...cli.env, EVSYNC_WEBHOOK_SECRET: 'a-webhook-secret-of-32-characters' };
    const r = await startAndStop(['serve', '--cron', '0 0 1 1 *', '--listen', '127.0.0.1:0', '--no-catch-up'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('No execution date');
    expect(nextAt(r.stderr)).toBe(nextNewYearLocal());
  });
});

describe('an expression that never fires', () => {
  it('"0 0 30 2 *" is a usage error saying so (exit 2)', async () => {
    const r = await run(['schedule', '--cron', '0 0 30 2 *'], { cwd: cli.dir, env: cli.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'error: --cron: "0 0 30 2 *" never fires: no such date in the next 8 years (a day the month does not have?)',
    );
    expect(r.stderr).not.toContain('Something went wrong');
  });
});
