/**
 * What a person reads never says `NULL`: the change-capture part of `status` and `webhooks status` show a word or
 * an empty cell for what is not known yet. (`query` still prints NULL: there it is the value.)
 */
import { describe, expect, it } from 'vitest';
import { Warehouse } from '../../src/warehouse/index.js';
import { run, simulatedCli } from './helpers.js';

const cli = simulatedCli({ seed: 31, prefix: 'evsync-human-', db: 'w.duckdb' });
const SECRET = { EVSYNC_WEBHOOK_SECRET: 'a-webhook-secret-of-32-characters' };

describe('no NULL in human output', () => {
  it('status: a stream reconciliation found rows for, with no delivery yet, reads "none yet" (exit 0)', async () => {
    const w = await Warehouse.open(cli.env.EVSYNC_DB!);
    try {
      await w.capture.recordReconcile('run-1', { registrants: 2 });
    } finally {
      await w.close();
    }
    const r = await run(['status'], { cwd: cli.dir, env: cli.env });
    expect(r.code, r.stderr).toBe(0);
    const capture = r.stdout.slice(r.stdout.indexOf('Change capture'));
    expect(capture).toMatch(/registrants\s+none yet\s+0\s+0\s+2\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
    expect(r.stdout).not.toContain('NULL');
  });

  it('webhooks status before any install: "none" for each missing webhook, no NULL (exit 1)', async () => {
    const r = await run(['webhooks', 'status'], { cwd: cli.dir, env: { ...cli.env, ...SECRET } });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain('no webhook group "evsync"');
    expect(r.stdout).toMatch(/registrant\s+none\s+no\s+no webhook group/);
    expect(r.stdout).not.toContain('NULL');
  });

  it("query keeps NULL, the value of the user's SQL", async () => {
    const r = await run(['query', 'select null as nothing'], { cwd: cli.dir, env: cli.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('NULL');
  });
});
