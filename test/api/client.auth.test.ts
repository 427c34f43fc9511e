import { afterEach, describe, expect, it } from 'vitest';
import { CredentialsRejectedError, UnauthorizedError } from '../../src/api/index.js';
import {
  BASE_URL,
  CLIENT_SECRET,
  closeClients,
  fakeService,
  httpDate,
  makeClient,
  okPage,
  rateHeaders,
  tokenReply,
  withToken,
} from './helpers.js';

afterEach(closeClients);

describe('token', () => {
  it('fetches once with Basic credentials and caches it across calls', async () => {
    const svc = fakeService(withToken(okPage));
    const client = makeClient(svc);
    await client.list('/registrants');
    await client.list('/registrants');
    expect(svc.tokenCalls()).toHaveLength(1);
    const t = svc.tokenCalls()[0]!;
    expect(t.method).toBe('POST');
    expect(t.body).toBe('grant_type=client_credentials');
    expect(t.headers['content-type']).toBe('application/x-www-form-urlencoded;charset=UTF-8');
    expect(t.headers.authorization).toBe(`Basic ${Buffer.from('client-id-1:s3cr3t-Value%21').toString('base64')}`);
    for (const c of svc.dataCalls()) expect(c.headers.authorization).toMatch(/^Bearer tok-\d+-abcdefgh$/);
    expect(client.stats().spent).toEqual({ list: 20, other: 0, token: 1 });
  });

  it('accepts the pre-encoded credential string', async () => {
    const svc = fakeService(withToken(okPage));
    const client = makeClient(svc, { credentials: { encoded: 'Basic QUJDOkRFRg==' } });
    await client.ensureToken();
    expect(svc.tokenCalls()[0]!.headers.authorization).toBe('Basic QUJDOkRFRg==');
  });

  it('calibrates serverNow from the Date header', async () => {
    const skew = 3_600_000;
    const svc = fakeService(withToken(okPage, () => tokenReply({ serverNowMs: Date.now() + skew })));
    const client = makeClient(svc);
    expect(() => client.serverNow()).toThrow(/ensureToken/);
    await client.ensureToken();
    expect(Math.abs(client.serverNow().getTime() - (Date.now() + skew))).toBeLessThan(1500);
  });

  it('refreshes before expires_at by the server clock when the server runs ahead of the local clock', async () => {
    // Server clock 1 h ahead; the token expires 30 min after server time: by the local clock it looks valid for
    // 90 min, by the server's it is valid 30 min. Later answers carry a server Date 29.5 min later: refresh due.
    let serverNow = Date.now() + 3_600_000;
    const svc = fakeService(
      withToken(
        () => ({ ...okPage(), headers: { ...rateHeaders(1990), date: httpDate(serverNow) } }),
        () => tokenReply({ serverNowMs: serverNow, lifetimeS: 1800 }),
      ),
    );
    const client = makeClient(svc);
    await client.list('/registrants');
    expect(svc.tokenCalls()).toHaveLength(1);
    serverNow += 29.5 * 60_000; // within the 60 s margin of expiry, on the server's clock only
    await client.list('/registrants'); // answer carries the new Date: the clock moves
    await client.list('/registrants');
    await client.list('/registrants');
    expect(svc.tokenCalls().length).toBeGreaterThanOrEqual(2);
  });

  it('does not refresh early when the server clock is behind the local clock', async () => {
    const serverNow = Date.now() - 3_600_000; // server 1 h behind: by local time the token "expired" already
    const svc = fakeService(
      withToken(
        () => ({ ...okPage(), headers: { ...rateHeaders(1990), date: httpDate(serverNow) } }),
        () => tokenReply({ serverNowMs: serverNow, lifetimeS: 1800 }),
      ),
    );
    const client = makeClient(svc);
    for (let i = 0; i < 3; i++) await client.list('/registrants');
    expect(svc.tokenCalls()).toHaveLength(1);
  });

  it('shares one refresh among concurrent calls', async () => {
    const svc = fakeService(withToken(okPage));
    const client = makeClient(svc, { concurrency: 8 });
    await Promise.all(Array.from({ length: 8 }, () => client.list('/registrants')));
    expect(svc.tokenCalls()).toHaveLength(1);
    expect(svc.dataCalls()).toHaveLength(8);
  });

  it('on a 401 refreshes once and retries the call once', async () => {
    const svc = fakeService(
      withToken((_req, n) =>
        n === 0 ? { status: 401, body: { name: 'Unauthorized', message: 'x', code: 0, status: 401 } } : okPage(),
      ),
    );
    const client = makeClient(svc);
    const page = await client.list('/registrants');
    expect(page.items).toEqual([{ id: 1 }]);
    expect(svc.tokenCalls()).toHaveLength(2);
    expect(svc.dataCalls()).toHaveLength(2);
    expect(svc.dataCalls()[0]!.headers.authorization).not.toBe(svc.dataCalls()[1]!.headers.authorization);
    // The 401 identified no credential: not charged, and its rate headers are not applied.
    expect(client.stats().spent).toEqual({ list: 10, other: 0, token: 2 });
  });

  it('a second 401 is an error', async () => {
    const svc = fakeService(
      withToken(() => ({
        status: 401,
        body: {
          name: 'Unauthorized',
          message: 'Your request was made with invalid credentials.',
          code: 0,
          status: 401,
        },
      })),
    );
    const client = makeClient(svc);
    const err = await client.list('/registrants', { params: { event_id: 5 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnauthorizedError);
    expect((err as UnauthorizedError).status).toBe(401);
    expect((err as UnauthorizedError).path).toBe('/registrants?event_id=5');
    expect(svc.dataCalls()).toHaveLength(2);
    expect(svc.tokenCalls()).toHaveLength(2);
  });

  it.each([401, 403])(
    'a %i on the token call is CredentialsRejectedError naming the base URL, not the secret',
    async (status) => {
      const svc = fakeService(() => ({
        status,
        body: { name: 'x', message: `bad ${CLIENT_SECRET}`, code: 0, status },
      }));
      const client = makeClient(svc);
      const err = await client.list('/registrants').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CredentialsRejectedError);
      const e = err as CredentialsRejectedError;
      expect(e.message).toContain(BASE_URL);
      expect(e.baseUrl).toBe(BASE_URL);
      expect(String(e)).not.toContain(CLIENT_SECRET);
      expect(svc.calls).toHaveLength(1); // not retried
    },
  );

  it('retries the token call on 503 and on a malformed answer', async () => {
    let n = 0;
    const svc = fakeService((req) => {
      if (req.path !== '/oauth2/token') return okPage();
      n += 1;
      if (n === 1) return { status: 503, body: { name: 'Service Unavailable', message: 'm', code: 0, status: 503 } };
      if (n === 2) return { body: { access_token: 'abc' } }; // no expires_at
      return tokenReply();
    });
    const client = makeClient(svc);
    await client.ensureToken();
    expect(svc.tokenCalls()).toHaveLength(3);
    expect(client.stats().spent.token).toBe(3);
  });
});

describe('server clock without Date headers', () => {
  it('serverNow falls back to the local clock once an answer arrived', async () => {
    const svc = fakeService(withToken(okPage, () => ({ body: tokenReply().body })));
    const c = makeClient(svc);
    await c.ensureToken();
    expect(Math.abs(c.serverNow().getTime() - Date.now())).toBeLessThan(100);
    await c.close();
  });
});
