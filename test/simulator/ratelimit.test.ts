import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, startClient, tokenRequest } from './helpers.js';

let c: Client;
let eventId: number;
beforeAll(async () => {
  c = await startClient({ rateLimit: { credits: 50, windowSeconds: 2 } });
  const token = await c.token(1);
  eventId = (await c.get('/events?fields=id', { account: 1, token })).json.items[0].id;
});
afterAll(() => c.close());

const rate = (h: Record<string, string>) => ({
  limit: Number(h['x-rate-limit-limit']),
  remaining: Number(h['x-rate-limit-remaining']),
  reset: h['x-rate-limit-reset'],
});

describe('credits and rate-limit headers', () => {
  it('charges 10 per list call, 1 per other call, and refuses what does not fit with an uncharged 429', async () => {
    // Let account 0's window from set-up lapse.
    await new Promise((r) => setTimeout(r, 2100));
    c.sim.resetCounters();
    const token = await c.token(0); // 1 credit, starts the window
    const first = await c.get('/events?fields=id', { token });
    expect(rate(first.headers)).toMatchObject({ limit: 50, remaining: 39 });
    expect(Number(first.headers['x-rate-limit-reset'])).toBeGreaterThanOrEqual(1);
    expect(Number(first.headers['x-rate-limit-reset'])).toBeLessThanOrEqual(2);
    expect(Number.isInteger(Number(first.headers['x-rate-limit-reset']))).toBe(true);
    const single = await c.get(`/events/${first.json.items[0].id}`, { token });
    expect(rate(single.headers).remaining).toBe(38);
    for (let i = 0; i < 3; i++) await c.get('/events?fields=id', { token }); // 8 left
    const refused = await c.get('/events?fields=id', { token });
    expect(refused.status).toBe(429);
    expect(refused.json).toMatchObject({ name: 'Too Many Requests', code: 0, status: 429 });
    expect(rate(refused.headers).remaining).toBe(8);
    // Other accounts have their own window.
    expect((await c.get('/events?fields=id', { account: 1, token: await c.token(1) })).status).toBe(200);
    // A 1-credit call still fits.
    expect((await c.get(`/events/${first.json.items[0].id}`, { token })).status).toBe(200);
    const counters = c.sim.counters(0);
    expect(counters).toMatchObject({ credits: 43, listCalls: 4, otherCalls: 2, tokenCalls: 1, rejected429: 1 });
    expect(counters.byPath['GET /events']).toBe(4);
    expect(counters.byPath['GET /events/{id}']).toBe(2);
    expect(counters.byPath['POST /oauth2/token']).toBe(1);

    // The window resets after its time.
    const wait = Number(refused.headers['x-rate-limit-reset']) * 1000;
    await new Promise((r) => setTimeout(r, wait + 50));
    const again = await c.get('/events?fields=id', { token });
    expect(again.status).toBe(200);
    expect(rate(again.headers).remaining).toBe(40);
  });

  it('puts the headers on every answer, errors included, and does not charge 401s', async () => {
    const before = c.sim.counters(1).credits;
    const token = await c.token(1);
    for (const path of [`/registrants?event_id=${eventId}`, '/nope', '/registrants', '/registrants/1']) {
      const res = await c.get(path, { account: 1, token });
      expect(res.headers['x-rate-limit-limit'], path).toBe('50');
      expect(res.headers['x-rate-limit-remaining'], path).toBeDefined();
      expect(res.headers['x-rate-limit-reset'], path).toBeDefined();
      expect(res.headers.date, path).toBeDefined();
    }
    const unauthorized = await c.get('/events', { token: 'unknown' });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers['x-rate-limit-limit']).toBe('50');
    const bad = await tokenRequest(c.sim, 'Basic Zm9vOmJhcg==');
    expect(bad.status).toBe(401);
    // token 1 + list 10 + three 1-credit errors (404 path, 400 missing event_id, 403/404 single)
    expect(c.sim.counters(1).credits - before).toBe(1 + 10 + 1 + 10 + 1);
  });
});
