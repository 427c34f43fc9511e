import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCredentials } from '../../src/simulator/index.js';
import { type Client, ERROR_401, ERROR_403, ERROR_404, startClient, tokenRequest } from './helpers.js';

let c: Client;
beforeAll(async () => {
  c = await startClient({ tokenTtlSeconds: 120 });
});
afterAll(() => c.close());

describe('token endpoint', () => {
  it('issues a bearer token for RFC 1738 encoded Basic credentials', async () => {
    const account = c.sim.accounts[0]!;
    expect(account.clientSecret).toMatch(/[+/=]/);
    expect(encodeCredentials(account.clientId, account.clientSecret)).toBe(account.encoded);
    const res = await tokenRequest(c.sim, `Basic ${account.encoded}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.json).sort()).toEqual(['access_token', 'expires_at', 'type']);
    expect(res.json.type).toBe('bearer');
    expect(res.json.expires_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    // expires_at is UTC, ttl after the Date header.
    const expires = Date.parse(`${res.json.expires_at.replace(' ', 'T')}Z`);
    const date = Date.parse(res.headers.date!);
    expect(Math.abs(expires - date - 120_000)).toBeLessThanOrEqual(1000);
  });

  it('refuses credentials that were not URL-encoded before base64', async () => {
    const a = c.sim.accounts[0]!;
    const raw = Buffer.from(`${a.clientId}:${a.clientSecret}`).toString('base64');
    const res = await tokenRequest(c.sim, `Basic ${raw}`);
    expect(res.status).toBe(401);
    expect(res.json).toEqual(ERROR_401);
  });

  it('refuses a wrong secret, garbage and a missing header with the 401 body', async () => {
    const a = c.sim.accounts[0]!;
    for (const header of [`Basic ${encodeCredentials(a.clientId, 'nope')}`, 'Basic !!!', 'Bearer x', '']) {
      const res = await tokenRequest(c.sim, header);
      expect(res.status).toBe(401);
      expect(res.json).toEqual(ERROR_401);
    }
  });

  it('needs grant_type=client_credentials', async () => {
    const res = await tokenRequest(c.sim, `Basic ${c.sim.accounts[0]!.encoded}`, 'grant_type=password');
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ name: 'Bad Request', code: 0, status: 400 });
    expect(typeof res.json.message).toBe('string');
  });
});

describe('bearer tokens', () => {
  it('401 without, with an unknown, and with an expired token', async () => {
    expect((await c.get('/events', { token: null })).json).toEqual(ERROR_401);
    expect((await c.get('/events', { token: 'deadbeef' })).json).toEqual(ERROR_401);
    const token = await c.token(0);
    expect((await c.get('/events', { token })).status).toBe(200);
    c.sim.advanceClock(110);
    expect((await c.get('/events', { token })).status).toBe(200);
    c.sim.advanceClock(11);
    const expired = await c.get('/events', { token });
    expect(expired.status).toBe(401);
    expect(expired.json).toEqual(ERROR_401);
    // A new token works again.
    expect((await c.get('/events', { token: await c.token(0) })).status).toBe(200);
  });

  it('the Date header follows the simulated clock', async () => {
    const before = Date.parse((await c.get('/events')).headers.date!);
    c.sim.advanceClock(3600);
    const after = Date.parse((await c.get('/events', { token: await c.token(0) })).headers.date!);
    expect(after - before).toBeGreaterThanOrEqual(3599_000);
    expect(Math.abs(c.sim.now().getTime() - after)).toBeLessThan(2000);
  });
});

describe('403 across accounts and 404', () => {
  it('403 for a list scoped to another account event', async () => {
    const other = (await c.get('/events?fields=id', { account: 1 })).json.items[0].id;
    const res = await c.get(`/registrants?event_id=${other}`);
    expect(res.status).toBe(403);
    expect(res.json).toEqual(ERROR_403);
  });

  it('403 for a single record of another account, 404 for an unknown id', async () => {
    const events = (await c.get('/events?fields=id', { account: 1 })).json.items;
    const regs = (await c.get(`/registrants?event_id=${events[0].id}&fields=id`, { account: 1 })).json.items;
    const res = await c.get(`/registrants/${regs[0].id}`);
    expect(res.status).toBe(403);
    expect(res.json).toEqual(ERROR_403);
    expect((await c.get(`/registrants/${regs[0].id}`, { account: 1 })).status).toBe(200);
    expect((await c.get('/registrants/99999999')).json).toEqual(ERROR_404);
    expect((await c.get(`/registrants?event_id=99999`)).json).toEqual(ERROR_404);
  });

  it('404 for an unknown path, 405 for a wrong method', async () => {
    const res = await c.get('/no-such-thing');
    expect(res.status).toBe(404);
    expect(res.json).toEqual(ERROR_404);
    const wrong = await c.call('DELETE', '/events');
    expect(wrong.status).toBe(405);
    expect(wrong.json).toMatchObject({ name: 'Method Not Allowed', code: 0, status: 405 });
  });
});
