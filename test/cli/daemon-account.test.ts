/**
 * `serve` and `schedule` on a warehouse of another account are refused at start, as `sync` refuses it: exit 2 with
 * the same message, before anything listens, before any call to the service, the warehouse left as it was. (Before,
 * `serve` started, listened, and failed every reconcile of its life.)
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { run, simulatedCli } from './helpers.js';

const cli = simulatedCli({ seed: 17, db: 'account-a.duckdb', prefix: 'evsync-daemon-account-' });
const SECRET = 'daemon-account-secret-5d4c3b2a1f0e';

function sha(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** The environment of the simulator's second account, on the first account's warehouse. */
function otherAccount(): Record<string, string> {
  const b = cli.sim.accounts[1]!;
  return {
    ...cli.env,
    EVSYNC_CLIENT_ID: b.clientId,
    EVSYNC_CLIENT_SECRET: b.clientSecret,
    EVSYNC_WEBHOOK_SECRET: SECRET,
  };
}

describe('a daemon on another account’s warehouse', () => {
  it.each([
    ['serve', ['serve', '--listen', '127.0.0.1:0', '--admin-listen', 'off', '--no-catch-up']],
    ['schedule', ['schedule', '--cron', '* * * * * *', '--admin-listen', 'off', '--run-now']],
  ])('%s exits 2 at start with sync’s message, before listening or calling the service', async (_name, argv) => {
    const db = cli.env.EVSYNC_DB!;
    if (!existsSync(db)) {
      const first = await run(['sync', '--streams', 'events'], { cwd: cli.dir, env: cli.env });
      expect(first.code, first.stderr).toBe(0);
    }
    const before = sha(db);
    const env = otherAccount();
    const calls = [cli.sim.counters(0), cli.sim.counters(1)];
    const sync = await run(['sync', '--streams', 'events'], { cwd: cli.dir, env });
    expect(sync.code).toBe(2);
    const refusal = sync.stderr.split('\n').find((l) => l.startsWith('error:'));
    expect(refusal).toContain(cli.sim.accounts[0]!.clientId);

    const r = await run(argv, { cwd: cli.dir, env });
    expect(r.code, r.stderr).toBe(2);
    // The message sync gives, word for word.
    expect(r.stderr.trim()).toBe(refusal);
    expect(refusal).toMatch(/One warehouse holds one account: use another database/);
    expect(r.stderr).not.toMatch(/listening on|polled on the schedule|answered here/);
    expect(r.stderr + r.stdout).not.toContain(cli.sim.accounts[1]!.clientSecret);
    expect(existsSync(`${db}.sock`)).toBe(false);
    // sync spent its token call; the daemon made none.
    const afterSync = cli.sim.counters(1);
    expect([cli.sim.counters(0), cli.sim.counters(1)]).toEqual([calls[0], afterSync]);
    expect(sha(db)).toBe(before);
  });
});
