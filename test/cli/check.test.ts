import { describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { inTempDir, run, simulatedCli, writeConfig } from './helpers.js';

const cli = simulatedCli({ seed: 3 });

function secretsOf(s: Simulator): string[] {
  return s.accounts.flatMap((a) => [a.clientSecret, a.encoded]);
}

describe('evsync check', () => {
  it('exits 0 when a sync can run, and says what the check cost', async () => {
    const r = await run(['check'], { cwd: cli.dir, env: cli.env });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain('✓ credentials: token obtained');
    expect(r.stdout).toContain('this call cost 10 credits');
    expect(r.stdout).toMatch(/rate limit: [\d,]+ of 100,000 credits left/);
    expect(r.stdout).toContain('a sync can run (this check spent 11 credits)');
  });

  it('--json is one parseable document', async () => {
    const r = await run(['check', '--json'], { cwd: cli.dir, env: cli.env });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.ok).toBe(true);
    expect(report.rateLimit.limit).toBe(100_000);
    expect(report.creditsSpent).toBe(11);
    expect(typeof report.clockOffsetMs).toBe('number');
  });

  it('a wrong secret exits 1, and no secret appears even with --verbose', async () => {
    const bad = { ...cli.env, EVSYNC_CLIENT_SECRET: 'definitely-wrong-secret' };
    const r = await run(['check', '--verbose'], { cwd: cli.dir, env: bad });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('✗ credentials');
    const all = r.stdout + r.stderr;
    expect(all).toContain(cli.sim.accounts[0]!.clientId);
    for (const s of [...secretsOf(cli.sim), 'definitely-wrong-secret']) expect(all).not.toContain(s);
  });

  it('secrets never appear with --verbose on success either (id + secret, and pre-encoded)', async () => {
    let r = await run(['check', '--verbose'], { cwd: cli.dir, env: cli.env });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('debug:');
    for (const s of secretsOf(cli.sim)) expect(r.stdout + r.stderr).not.toContain(s);
    r = await run(['check', '--verbose', '--json'], {
      cwd: cli.dir,
      env: { EVSYNC_BASE_URL: cli.sim.baseUrl, EVSYNC_CREDENTIALS: cli.sim.accounts[0]!.encoded },
    });
    expect(r.code, r.stderr).toBe(0);
    for (const s of secretsOf(cli.sim)) expect(r.stdout + r.stderr).not.toContain(s);
  });

  it('environment beats the config file; the config file fills the rest', async () => {
    await inTempDir(async (sub) => {
      // A base URL nobody listens on in the file: the environment's must win.
      writeConfig(sub, { baseUrl: 'http://127.0.0.1:9/v1', clientId: cli.sim.accounts[0]!.clientId });
      const r = await run(['check'], {
        cwd: sub,
        env: { EVSYNC_BASE_URL: cli.sim.baseUrl, EVSYNC_CLIENT_SECRET: cli.sim.accounts[0]!.clientSecret },
      });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain(cli.sim.baseUrl);
    });
  });

  it('warns when record timestamps look like another time zone', async () => {
    const tokyo = await startSimulator({ size: 'tiny', seed: 4, port: 0, recordTimezone: 'Asia/Tokyo' });
    try {
      tokyo.mutate(3, { streams: ['events'] });
      const a = tokyo.accounts[0]!;
      const r = await run(['check'], {
        cwd: cli.dir,
        env: { EVSYNC_BASE_URL: tokyo.baseUrl, EVSYNC_CLIENT_ID: a.clientId, EVSYNC_CLIENT_SECRET: a.clientSecret },
      });
      expect(r.stdout).toContain('! record time zone');
      expect(r.stdout).toContain('another time zone');
      // A warning, not a failure: the sync can run (with recordTimezone set it would be exact).
      expect(r.code).toBe(0);
      await inTempDir(async (sub) => {
        writeConfig(sub, { recordTimezone: 'Asia/Tokyo' });
        const fixed = await run(['check'], {
          cwd: sub,
          env: { EVSYNC_BASE_URL: tokyo.baseUrl, EVSYNC_CLIENT_ID: a.clientId, EVSYNC_CLIENT_SECRET: a.clientSecret },
        });
        expect(fixed.stdout).toContain('✓ record time zone');
      });
    } finally {
      await tokyo.close();
    }
  });
});
