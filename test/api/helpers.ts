import { MockAgent } from 'undici';
import { formatApiTimestamp } from '../../src/api/clock.js';
import { ApiClient } from '../../src/api/index.js';
import type { ClientOptions } from '../../src/api/types.js';

export const ORIGIN = 'https://api.test';
export const BASE_URL = `${ORIGIN}/api/v1`;
export const CLIENT_ID = 'client-id-1';
export const CLIENT_SECRET = 's3cr3t-Value!';

export interface FakeRequest {
  method: string;
  /** Path below /api/v1, query included. */
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface FakeReply {
  status?: number;
  /** An object or array is sent as JSON, a string as is. */
  body?: unknown;
  headers?: Record<string, string>;
}

export type Handler = (req: FakeRequest, index: number) => FakeReply;

export interface FakeService {
  agent: MockAgent;
  calls: FakeRequest[];
  /** Calls other than the token call. */
  dataCalls: () => FakeRequest[];
  tokenCalls: () => FakeRequest[];
}

function flatHeaders(raw: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (Array.isArray(raw)) {
    for (let i = 0; i + 1 < raw.length; i += 2) out[String(raw[i]).toLowerCase()] = String(raw[i + 1]);
  } else if (raw && typeof raw === 'object') {
    for (const [k, v] of Object.entries(raw as Record<string, unknown>)) out[k.toLowerCase()] = String(v);
  }
  return out;
}

/** A MockAgent answering every request through `handler` (net connect disabled). */
export function fakeService(handler: Handler): FakeService {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const calls: FakeRequest[] = [];
  agent
    .get(ORIGIN)
    .intercept({ path: () => true, method: () => true })
    .reply((opts) => {
      const req: FakeRequest = {
        method: opts.method,
        path: opts.path.replace(/^\/api\/v1/, ''),
        headers: flatHeaders(opts.headers),
        body: typeof opts.body === 'string' ? opts.body : opts.body == null ? '' : String(opts.body),
      };
      calls.push(req);
      const reply = handler(req, calls.length - 1);
      const data =
        typeof reply.body === 'string' ? reply.body : reply.body === undefined ? '' : JSON.stringify(reply.body);
      return {
        statusCode: reply.status ?? 200,
        data,
        responseOptions: { headers: { 'content-type': 'application/json', ...(reply.headers ?? {}) } },
      };
    })
    .persist();
  return {
    agent,
    calls,
    dataCalls: () => calls.filter((c) => c.path !== '/oauth2/token'),
    tokenCalls: () => calls.filter((c) => c.path === '/oauth2/token'),
  };
}

/** An HTTP Date header for `ms` (defaults to now). */
export function httpDate(ms: number = Date.now()): string {
  return new Date(ms).toUTCString();
}

let tokenCounter = 0;
/** A token answer valid `lifetimeS` from `serverNowMs`, with a matching Date header. */
export function tokenReply(opts: { lifetimeS?: number; serverNowMs?: number; token?: string } = {}): FakeReply {
  const now = opts.serverNowMs ?? Date.now();
  tokenCounter += 1;
  return {
    body: {
      access_token: opts.token ?? `tok-${tokenCounter}-abcdefgh`,
      type: 'bearer',
      expires_at: formatApiTimestamp(new Date(now + (opts.lifetimeS ?? 1800) * 1000)),
    },
    headers: { date: httpDate(now) },
  };
}

export function envelope(
  items: Record<string, unknown>[],
  meta: { totalCount: number; pageCount: number; currentPage?: number; perPage: number },
  links: 'relative' | 'absolute' = 'relative',
): Record<string, unknown> {
  const prefix = links === 'absolute' ? BASE_URL : '';
  return {
    items,
    _links: {
      self: { href: `${prefix}/registrants?page=1` },
      first: { href: `${prefix}/registrants?page=1` },
      last: { href: `${prefix}/registrants?page=${meta.pageCount}` },
    },
    _meta: { currentPage: 1, ...meta },
  };
}

export function rateHeaders(remaining: number, resetS?: number, limit = 2000): Record<string, string> {
  const h: Record<string, string> = {
    'x-rate-limit-limit': String(limit),
    'x-rate-limit-remaining': String(remaining),
  };
  if (resetS !== undefined) h['x-rate-limit-reset'] = String(resetS);
  return h;
}

/** Routes the token call to `tokenReply()` and everything else to `data`. */
export function withToken(data: Handler, token: () => FakeReply = () => tokenReply()): Handler {
  let n = 0;
  return (req) => (req.path === '/oauth2/token' ? token() : data(req, n++));
}

/** One record on one page of 20: the simplest list answer. */
export function onePage(): Record<string, unknown> {
  return envelope([{ id: 1 }], { totalCount: 1, pageCount: 1, perPage: 20 });
}

/** `onePage`, with rate headers reporting 1990 credits left. */
export function okPage(): FakeReply {
  return { body: onePage(), headers: rateHeaders(1990) };
}

const opened: ApiClient[] = [];

/** A client of the fake service; every one is closed by `closeClients` (`afterEach(closeClients)`). */
export function makeClient(service: FakeService, options: Partial<ClientOptions> = {}): ApiClient {
  const client = new ApiClient({
    baseUrl: BASE_URL,
    credentials: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET },
    dispatcher: service.agent,
    retry: { attempts: 5, baseDelayMs: 1, maxDelayMs: 5 },
    ...options,
  });
  opened.push(client);
  return client;
}

/** Closes every client `makeClient` made since the last call. */
export async function closeClients(): Promise<void> {
  for (const client of opened.splice(0)) await client.close();
}

/** Decoded query parameters of a recorded request. */
export function queryOf(req: FakeRequest): URLSearchParams {
  return new URL(req.path, 'http://x').searchParams;
}

/**
 * A MockAgent for exact sequences: the token endpoint always answers; data interceptors are added by the test in
 * order (`pool.intercept(...)`), each consumed once.
 */
export function scriptedService(): { agent: MockAgent; pool: ReturnType<MockAgent['get']>; service: FakeService } {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const pool = agent.get(ORIGIN);
  pool
    .intercept({ path: '/api/v1/oauth2/token', method: 'POST' })
    .reply(() => {
      const r = tokenReply();
      return { statusCode: 200, data: JSON.stringify(r.body), responseOptions: { headers: r.headers ?? {} } };
    })
    .persist();
  return { agent, pool, service: { agent, calls: [], dataCalls: () => [], tokenCalls: () => [] } };
}
