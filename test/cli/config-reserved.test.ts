/**
 * Config keys that reach an object's prototype (`__proto__`, `constructor`, `prototype`) are refused at any depth
 * with a message naming the key (exit 2); a control character inside a credential variable is a usage error before
 * any call (the simulator counts none).
 */
import { describe, expect, it } from 'vitest';
import { run, simulatedCli, writeConfig } from './helpers.js';

const cli = simulatedCli({ seed: 29, prefix: 'evsync-config-reserved-', db: 'w.duckdb' });

describe('reserved keys in the config file', () => {
  const cases: [string, string, string][] = [
    ['top level', '{"__proto__": {}}', '__proto__'],
    ['under streams', '{"streams": {"__proto__": {"maxPerPage": 5}}}', 'streams.__proto__'],
    ['under accounts', '{"accounts": {"constructor": {"db": "x.duckdb"}}}', 'accounts.constructor'],
    [
      'deep, in a list',
      '{"streams": {"registrants": {"expand": [{"prototype": 1}]}}}',
      'streams.registrants.expand.0.prototype',
    ],
  ];
  for (const [where, text, path] of cases) {
    it(`${where}: refused naming ${path} (exit 2)`, async () => {
      writeConfig(cli.dir, text, 'reserved.json');
      const r = await run(['status', '--config', 'reserved.json'], { cwd: cli.dir, env: cli.env });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        `error: reserved.json: ${path}: a reserved name (__proto__, constructor and prototype are not accepted as keys anywhere in the file)`,
      );
      expect(r.stderr).not.toContain('[object Object]');
    });
  }
});

describe('control characters in credentials', () => {
  for (const variable of ['EVSYNC_CLIENT_ID', 'EVSYNC_CLIENT_SECRET', 'EVSYNC_CREDENTIALS']) {
    for (const [name, ch] of [
      ['CR', '\r'],
      ['LF', '\n'],
      ['NUL', '\u0000'],
    ] as const) {
      it(`${name} inside ${variable}: exit 2 before any call, the value never shown`, async () => {
        const value = `abc${ch}def`;
        const env: Record<string, string> =
          variable === 'EVSYNC_CREDENTIALS'
            ? { EVSYNC_BASE_URL: cli.sim.baseUrl, EVSYNC_DB: cli.env.EVSYNC_DB!, EVSYNC_CREDENTIALS: value }
            : { ...cli.env, [variable]: value };
        cli.sim.resetCounters();
        const r = await run(['check'], { cwd: cli.dir, env });
        expect(r.code, r.stdout + r.stderr).toBe(2);
        expect(r.stderr).toContain(
          `error: ${variable} holds a line break or another control character: set it again with the value alone (no CR, LF or tab)`,
        );
        expect(r.stderr).not.toContain('abc');
        expect(cli.sim.counters().tokenCalls + cli.sim.counters().listCalls).toBe(0);
      });
    }
  }

  it("an account's own variable is named", async () => {
    writeConfig(cli.dir, { baseUrl: cli.sim.baseUrl, accounts: { northwind: { db: 'nw.duckdb' } } }, 'accounts.json');
    const r = await run(['check', '--config', 'accounts.json', '--account', 'northwind'], {
      cwd: cli.dir,
      env: { EVSYNC_NORTHWIND_CLIENT_ID: 'id', EVSYNC_NORTHWIND_CLIENT_SECRET: 'se\ncret' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: EVSYNC_NORTHWIND_CLIENT_SECRET holds a line break');
  });
});
