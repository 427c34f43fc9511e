/**
 * The three layers of a call, each alone around a real exchange with a real loopback server (node:http on
 * 127.0.0.1, real sockets): the server counts requests and stages its faults by count, never by time.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { systemNow } from '../../schemas/clock.js';
import { type Bearer, withCredits } from '../../src/api/call-credits.js';
import { withFreshToken } from '../../src/api/call-retoken.js';
import { type CallErrors, withRetries } from '../../src/api/call-retry.js';
import { type CallReporter, type CallSpec, type CallState, callState, type Step } from '../../src/api/call-state.js';
import { formatApiTimestamp, ServerClock } from '../../src/api/clock.js';
import { BudgetExhaustedError, MalformedResponseError, NetworkError } from '../../src/api/errors.js';
import { exchange } from '../../src/api/http.js';
import { CreditLedger } from '../../src/api/ledger.js';
import { httpError, parseJson, parseListEnvelope } from '../../src/api/responses.js';
import { type Token, TokenManager } from '../../src/api/token.js';

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

interface Loopback {
  origin: string;
  /** Data requests so far (the token path aside). */
  requests: () => number;
  tokenCalls: () => number;
}

const servers: Server[] = [];
const agent = new Agent({ connections: 4 });
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A loopback server: `/token` issues tok-1, tok-2, ...; every other path is answered by `handler` with its count. */
async function loopback(handler: Handler): Promise<Loopback> {
  let n = 0;
  let tokens = 0;
  const server = createServer((req, res) => {
    if (req.url === '/token') {
      tokens += 1;
      const expires = formatApiTimestamp(new Date(Date.now() + 1_800_000));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: `tok-${tokens}`, type: 'bearer', expires_at: expires }));
      return;
    }
    handler(req, res, n++);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, requests: () => n, tokenCalls: () => tokens };
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

const PAGE = {
  items: [{ id: 1 }, { id: 2 }],
  _meta: { totalCount: 2, pageCount: 1, currentPage: 1, perPage: 2 },
};

/** The innermost step: one exchange with the server, carrying the state's token when it has one. */
function exchangeWith(origin: string): Step {
  return (state) =>
    exchange(agent, {
      origin,
      path: state.spec.path,
      method: state.spec.method,
      headers: state.token ? { authorization: `Bearer ${state.token.accessToken}` } : {},
      now: systemNow,
      body: state.spec.body,
      headersMs: 2_000,
      bodyMs: 2_000,
      maxBytes: 1_048_576,
      signal: state.spec.signal,
    });
}

function listSpec(extra: Partial<CallSpec<unknown>> = {}): CallSpec<number> {
  return {
    kind: 'list',
    method: 'GET',
    path: '/registrants',
    idempotent: true,
    parse: (ex) => parseListEnvelope(ex).items.length,
    ...extra,
  } as CallSpec<number>;
}

/** What a layer told the client, in order. */
function recorder(): CallReporter & { events: string[] } {
  const events: string[] = [];
  return {
    events,
    retry: (state, _delayMs, reason) => events.push(`retry ${state.attempt} ${reason}`),
    answered: (_state, ex) => events.push(`answer ${ex.status}`),
    wait: (e) => events.push(`wait ${e.reason}`),
  };
}

const ERRORS: CallErrors = {
  answer: (spec, ex) => httpError(ex, { method: spec.method, path: spec.path, baseUrl: 'loopback', tokenCall: false }),
  transport: (spec, err) => new NetworkError(`${spec.method} ${spec.path}: ${String(err)}`, { ...spec, cause: err }),
  malformed: (spec, detail) =>
    new MalformedResponseError(`${spec.path}: ${detail}`, { method: spec.method, path: spec.path, detail }),
};
const POLICY = { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 };

describe('retry layer (outermost)', () => {
  it('tries a GET again on a 5xx, a cut body and a malformed body, then takes the answer', async () => {
    const server = await loopback((_req, res, n) => {
      if (n === 0) return json(res, 503, { name: 'Service Unavailable' });
      if (n === 1) return json(res, 200, '{"items": [');
      json(res, 200, PAGE);
    });
    const report = recorder();
    const call = withRetries({ policy: POLICY, errors: ERRORS, report }, exchangeWith(server.origin));
    expect(await call(callState(listSpec()))).toBe(2);
    expect(server.requests()).toBe(3);
    expect(report.events).toEqual(['retry 1 status 503', 'retry 2 malformed']);
  });

  it('stops after its attempts with the typed error; a write is not sent twice on a 5xx', async () => {
    const server = await loopback((_req, res) => json(res, 502, { name: 'Bad Gateway' }));
    const report = recorder();
    const call = withRetries({ policy: POLICY, errors: ERRORS, report }, exchangeWith(server.origin));
    await expect(call(callState(listSpec()))).rejects.toThrow(/HTTP 502/);
    expect(server.requests()).toBe(3);
    const post = listSpec({ method: 'POST', kind: 'other', idempotent: false, parse: (ex) => parseJson(ex.text) });
    await expect(call(callState(post))).rejects.toThrow(/POST \/registrants -> HTTP 502/);
    expect(server.requests()).toBe(4);
  });

  it('leaves a 401 and a 429 to the layers inside it: not retried here', async () => {
    const server = await loopback((_req, res, n) => json(res, n === 0 ? 401 : 429, { name: 'no' }));
    const report = recorder();
    const call = withRetries({ policy: POLICY, errors: ERRORS, report }, exchangeWith(server.origin));
    await expect(call(callState(listSpec()))).rejects.toThrow(/HTTP 401/);
    await expect(call(callState(listSpec()))).rejects.toThrow(/HTTP 429/);
    expect(server.requests()).toBe(2);
    expect(report.events).toEqual([]);
  });

  it('a connection dropped before any answer is retried, then a NetworkError', async () => {
    const server = await loopback((req) => req.socket.destroy());
    const call = withRetries({ policy: POLICY, errors: ERRORS, report: recorder() }, exchangeWith(server.origin));
    await expect(call(callState(listSpec()))).rejects.toBeInstanceOf(NetworkError);
    expect(server.requests()).toBe(3);
  });
});

/** A real token manager fetching from the loopback server's `/token`. */
function tokenManager(origin: string): TokenManager {
  const fetchToken = async (): Promise<Token> => {
    const ex = await exchange(agent, {
      origin,
      path: '/token',
      method: 'POST',
      headers: {},
      headersMs: 2_000,
      bodyMs: 2_000,
      maxBytes: 65_536,
      now: systemNow,
    });
    const body = JSON.parse(ex.text) as { access_token: string };
    return { accessToken: body.access_token, expiresAt: new Date(Date.now() + 1_800_000), lifetimeMs: 1_800_000 };
  };
  return new TokenManager(fetchToken, new ServerClock(systemNow), systemNow, 60_000);
}

/** The step the re-token layer wraps in these tests: takes the current token (as the credits layer does), sends. */
function withCurrentToken(tokens: TokenManager, send: Step): Step {
  return async (state) => {
    state.token = state.spec.kind === 'token' ? null : await tokens.get();
    return send(state);
  };
}

/** The re-token layer around the exchange, with a real token manager on the loopback server. */
function retokenAlone(origin: string, report: CallReporter): Step {
  const tokens = tokenManager(origin);
  return withFreshToken(
    { invalidate: (t) => tokens.invalidate(t), report },
    withCurrentToken(tokens, exchangeWith(origin)),
  );
}

describe('re-token layer', () => {
  it('a 401 drops the token, and the call goes once more with a fresh one', async () => {
    const server = await loopback((req, res) =>
      req.headers.authorization === 'Bearer tok-1' ? json(res, 401, { name: 'Unauthorized' }) : json(res, 200, PAGE),
    );
    const report = recorder();
    const step = retokenAlone(server.origin, report);
    const state = callState(listSpec());
    expect((await step(state)).status).toBe(200);
    expect([server.requests(), server.tokenCalls()]).toEqual([2, 2]);
    expect(state.token?.accessToken).toBe('tok-2');
    expect(report.events).toEqual(['retry 1 unauthorized']);
  });

  it('a second 401 goes out as the answer: one fresh token per call, not a loop', async () => {
    const server = await loopback((_req, res) => json(res, 401, { name: 'Unauthorized' }));
    const step = retokenAlone(server.origin, recorder());
    const state = callState(listSpec());
    expect((await step(state)).status).toBe(401);
    expect([server.requests(), server.tokenCalls()]).toEqual([2, 2]);
    expect(state.reauthorized).toBe(true);
  });

  it('a 401 on the token call itself is the answer (the credentials are wrong, no token to renew)', async () => {
    const server = await loopback((_req, res) => json(res, 401, { name: 'Unauthorized' }));
    const step = retokenAlone(server.origin, recorder());
    expect((await step(callState(listSpec({ kind: 'token', method: 'POST' })))).status).toBe(401);
    expect([server.requests(), server.tokenCalls()]).toEqual([1, 0]);
  });
});

/** The token call's bearer: no token (it carries Basic credentials), so no refresh either. */
const NO_BEARER: Bearer = { current: async () => null, afterWait: async (_spec, token) => token };

function ledger(runBudget: number | null = null): CreditLedger {
  return new CreditLedger({ limit: 2000, windowMs: 600_000, reserveCredits: 0, runBudget });
}

function credits(l: CreditLedger, report: CallReporter, origin: string, bearer: Bearer = NO_BEARER): Step {
  return withCredits(
    { ledger: l, maxWaitMs: 60_000, policy: POLICY, bearer, report, now: systemNow },
    exchangeWith(origin),
  );
}

describe('credits layer (innermost)', () => {
  it('a 429 with credits left is paused out and sent again; only the answered call is charged', async () => {
    const server = await loopback((_req, res, n) =>
      n === 0
        ? json(
            res,
            429,
            { name: 'Too Many Requests' },
            { 'x-rate-limit-remaining': '1500', 'x-rate-limit-reset': '500' },
          )
        : json(res, 200, PAGE),
    );
    const l = ledger();
    const report = recorder();
    const state: CallState = callState(listSpec());
    expect((await credits(l, report, server.origin)(state)).status).toBe(200);
    expect(server.requests()).toBe(2);
    expect(report.events).toEqual(['answer 429', 'wait 429', 'answer 200']);
    expect(l.snapshot()).toMatchObject({ spent: { list: 10 }, rejected429: 1 });
    expect(state.rateLimited).toBe(1);
  });

  it('a refused token is not charged (no credential was identified)', async () => {
    const server = await loopback((_req, res) => json(res, 401, { name: 'Unauthorized' }));
    const l = ledger();
    expect((await credits(l, recorder(), server.origin)(callState(listSpec()))).status).toBe(401);
    expect(l.snapshot().spent.list).toBe(0);
  });

  it('a body cut short is charged (it reached the service); a refused connection is not', async () => {
    const server = await loopback((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"items": [');
      res.socket?.end();
    });
    const l = ledger();
    await expect(credits(l, recorder(), server.origin)(callState(listSpec()))).rejects.toThrow();
    expect(l.snapshot().spent.list).toBe(10);

    const closed = servers.pop()!;
    closed.closeAllConnections();
    await new Promise((r) => closed.close(r));
    const err = await credits(l, recorder(), server.origin)(callState(listSpec())).catch((e: unknown) => e);
    expect((err as { code?: string }).code ?? String((err as Error).cause)).toMatch(/ECONNREFUSED/);
    expect(l.snapshot().spent.list).toBe(10);
  });

  it('reserves before sending: past the run budget nothing is sent', async () => {
    const server = await loopback((_req, res) => json(res, 200, PAGE));
    const l = ledger(10);
    const step = credits(l, recorder(), server.origin);
    await step(callState(listSpec()));
    await expect(step(callState(listSpec()))).rejects.toBeInstanceOf(BudgetExhaustedError);
    expect(server.requests()).toBe(1);
  });
});
