import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import { type Client, startClient, tokenRequest } from './helpers.js';

let c: Client;
let root: string;
beforeAll(async () => {
  c = await startClient({ control: true });
  root = c.sim.baseUrl.replace(/\/v1$/, '');
});
afterAll(() => c.close());

async function control(method: string, path: string, body?: unknown) {
  const res = await request(`${root}/_control/${path}`, {
    method: method as 'GET',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
}

describe('control endpoints', () => {
  it('expose counters, mutations, truth, clock and faults', async () => {
    await c.get('/events');
    const counters = await control('GET', 'counters?account=0');
    expect(counters.json).toMatchObject({ listCalls: 1, tokenCalls: 1 });
    expect((await control('POST', 'counters/reset')).status).toBe(200);
    expect((await control('GET', 'counters')).json.credits).toBe(0);
    const mutated = await control('POST', 'mutate', { n: 5, streams: ['contacts'] });
    const m = mutated.json as { inserted: Record<string, number>; updated: Record<string, number> };
    const total = Object.values(mutated.json).flatMap((o) => Object.values(o as Record<string, number>));
    expect(total.reduce((a, b) => a + b, 0)).toBe(5);
    expect(m).toBeDefined();
    const truth = await control('GET', 'truth?stream=contacts&account=0');
    expect(truth.json).toEqual(JSON.parse(JSON.stringify(c.sim.truth('contacts'))));
    const before = c.sim.now().getTime();
    await control('POST', 'clock', { advance: 3600 });
    expect(c.sim.now().getTime() - before).toBeGreaterThanOrEqual(3600_000);
    await control('POST', 'faults', { errorRate: 1 });
    expect((await c.get('/events')).status).toBeGreaterThanOrEqual(500);
    await control('POST', 'faults', {});
    expect((await c.get('/events')).status).toBe(200);
  });

  it('are absent without the flag and refused off loopback', async () => {
    const plain = await startSimulator({ size: 'tiny' });
    try {
      const res = await request(`${plain.baseUrl.replace(/\/v1$/, '')}/_control/counters`);
      expect(res.statusCode).toBe(404);
      await res.body.text();
    } finally {
      await plain.close();
    }
    await expect(startSimulator({ size: 'tiny', host: '0.0.0.0', control: true })).rejects.toThrow(/loopback/);
  });
});

describe('evsync simulator --json', () => {
  it('prints one JSON line with the base URL and working credentials, and stops on SIGTERM', async () => {
    const child = spawn(
      'npx',
      ['tsx', 'src/cli/main.ts', 'simulator', '--json', '--port', '0', '--size', 'tiny', '--seed', '5'],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
        // Its own process group, so SIGTERM reaches tsx and node behind npx.
        detached: true,
      },
    );
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`exited early with ${code}`)));
      });
      const info = JSON.parse(line) as {
        baseUrl: string;
        accounts: { clientId: string; clientSecret: string; encoded: string }[];
      };
      expect(info.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      expect(info.accounts.length).toBeGreaterThanOrEqual(2);
      expect(Object.keys(info.accounts[0]!)).toEqual(['clientId', 'clientSecret', 'encoded']);
      const token = await tokenRequest({ baseUrl: info.baseUrl } as never, `Basic ${info.accounts[0]!.encoded}`);
      expect(token.status).toBe(200);
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
    }
  });
});
