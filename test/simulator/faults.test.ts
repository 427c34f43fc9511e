import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFaults, parseRateLimit } from '../../src/simulator/index.js';
import { type Client, startClient } from './helpers.js';

let c: Client;
beforeAll(async () => {
  c = await startClient();
  await c.get('/events'); // caches a token
});
afterAll(() => c.close());

describe('faults', () => {
  it('answers 500/502/503 with the error body, charged', async () => {
    c.sim.setFaults({ errorRate: 1 });
    const before = c.sim.counters().credits;
    const statuses = new Set<number>();
    for (let i = 0; i < 20; i++) {
      const res = await c.get('/events');
      statuses.add(res.status);
      expect(res.json).toMatchObject({ code: 0, status: res.status });
      expect(typeof res.json.name).toBe('string');
      expect(typeof res.json.message).toBe('string');
    }
    expect([...statuses].every((s) => [500, 502, 503].includes(s))).toBe(true);
    expect(c.sim.counters().credits - before).toBe(200);
    c.sim.setFaults({});
    expect((await c.get('/events')).status).toBe(200);
  });

  it('storms 429 without charging', async () => {
    c.sim.setFaults({ storm429Rate: 1 });
    const before = c.sim.counters();
    const res = await c.get('/events');
    expect(res.status).toBe(429);
    expect(res.json).toMatchObject({ name: 'Too Many Requests', code: 0, status: 429 });
    const after = c.sim.counters();
    expect(after.credits).toBe(before.credits);
    expect(after.rejected429).toBe(before.rejected429 + 1);
    c.sim.setFaults({});
  });

  it('sends truncated JSON with status 200', async () => {
    c.sim.setFaults({ malformedRate: 1 });
    const res = await c.get('/events?fields=*');
    expect(res.status).toBe(200);
    expect(() => JSON.parse(res.text)).toThrow();
    c.sim.setFaults({});
  });

  it('resets the connection mid-body', async () => {
    c.sim.setFaults({ resetRate: 1 });
    const token = await c.token();
    await expect(
      (async () => {
        const res = await request(`${c.sim.baseUrl}/events?fields=*`, {
          headers: { authorization: `Bearer ${token}` },
        });
        await res.body.text();
      })(),
    ).rejects.toThrow();
    c.sim.setFaults({});
  });

  it('can leave out X-Rate-Limit-Reset, and delays slow answers', async () => {
    c.sim.setFaults({ omitResetHeader: true, slowRate: 1, slowMs: 50 });
    const res = await c.get('/events');
    expect(res.status).toBe(200);
    expect(res.headers['x-rate-limit-reset']).toBeUndefined();
    expect(res.headers['x-rate-limit-remaining']).toBeDefined();
    c.sim.setFaults({});
    expect((await c.get('/events')).headers['x-rate-limit-reset']).toBeDefined();
  });

  it('ascii-json: the same answer with every non-ASCII character as a \\u escape', async () => {
    const plain = (await c.get('/contacts?per_page=200')).text;
    c.sim.setFaults({ asciiJson: true });
    const ascii = (await c.get('/contacts?per_page=200')).text;
    c.sim.setFaults({});
    expect(/[^\x00-\x7f]/.test(plain)).toBe(true);
    expect(/[^\x00-\x7f]/.test(ascii)).toBe(false);
    expect(ascii).toMatch(/\\u00[89a-f][0-9a-f]/);
    expect(JSON.parse(ascii)).toEqual(JSON.parse(plain));
  });

  it('parses the CLI fault and rate-limit specs', () => {
    expect(
      parseFaults('errors=0.05,latency=20,resets=0.01,malformed=0.01,slow=0.01:5000,storm429=0.02,no-reset-header'),
    ).toEqual({
      errorRate: 0.05,
      latencyMs: 20,
      resetRate: 0.01,
      malformedRate: 0.01,
      slowRate: 0.01,
      slowMs: 5000,
      storm429Rate: 0.02,
      omitResetHeader: true,
    });
    expect(parseFaults('ascii-json')).toEqual({ asciiJson: true });
    expect(() => parseFaults('errors=2')).toThrow();
    expect(() => parseFaults('whatever=1')).toThrow();
    expect(parseRateLimit('50/2')).toEqual({ credits: 50, windowSeconds: 2 });
    expect(() => parseRateLimit('50')).toThrow();
  });
});
