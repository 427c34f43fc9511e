import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { formatApiTimestamp } from '../../src/api/clock.js';
import { ApiClient, NetworkError } from '../../src/api/index.js';

/** A real HTTP server on loopback (the default undici Agent, real sockets) for faults MockAgent cannot stage. */
async function serve(
  data: (req: IncomingMessage, res: ServerResponse, n: number) => void,
): Promise<{ server: Server; url: string }> {
  let n = 0;
  const server = createServer((req, res) => {
    if (req.url === '/api/v1/oauth2/token') {
      res.writeHead(200, { 'content-type': 'application/json', date: new Date().toUTCString() });
      res.end(
        JSON.stringify({
          access_token: 'tok-real-abcdefgh',
          type: 'bearer',
          expires_at: formatApiTimestamp(new Date(Date.now() + 1_800_000)),
        }),
      );
      return;
    }
    data(req, res, n++);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1` };
}

const BODY = JSON.stringify({
  items: Array.from({ length: 50 }, (_, i) => ({ id: i + 1, name: `row ${i + 1}` })),
  _links: {
    self: { href: '/registrants?page=1' },
    first: { href: '/registrants?page=1' },
    last: { href: '/registrants?page=1' },
  },
  _meta: { totalCount: 50, pageCount: 1, currentPage: 1, perPage: 50 },
});

let server: Server | undefined;
let client: ApiClient | undefined;
afterEach(async () => {
  await client?.close();
  const s = server;
  if (s) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  client = undefined;
  server = undefined;
});

function makeClient(url: string, attempts = 3): ApiClient {
  return new ApiClient({
    baseUrl: url,
    credentials: { clientId: 'a', clientSecret: 'bbbbbbbb' },
    retry: { attempts, baseDelayMs: 1, maxDelayMs: 2 },
    timeouts: { headersMs: 300, bodyMs: 300 },
  });
}

describe('transport faults on real sockets', () => {
  it('a connection reset mid-body is retried', async () => {
    ({ server } = await serve((_req, res, n) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(BODY.length) });
      if (n === 0) {
        res.write(BODY.slice(0, 100));
        setTimeout(() => res.socket?.destroy(), 10);
        return;
      }
      res.end(BODY);
    }));
    client = makeClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`);
    const reasons: string[] = [];
    client.on('retry', (e) => reasons.push(e.reason));
    const page = await client.list('/registrants');
    expect(page.items).toHaveLength(50);
    expect(reasons).toEqual(['network']);
    expect(client.stats().spent.list).toBe(20);
  });

  it('a body that stalls is a body timeout, retried', async () => {
    ({ server } = await serve((_req, res, n) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(BODY.length) });
      if (n === 0) {
        res.write(BODY.slice(0, 100)); // and never the rest
        return;
      }
      res.end(BODY);
    }));
    client = makeClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`);
    const reasons: string[] = [];
    client.on('retry', (e) => reasons.push(e.reason));
    expect((await client.list('/registrants')).items).toHaveLength(50);
    expect(reasons).toEqual(['timeout']);
  });

  it('a connection refused every time ends in a NetworkError that costs nothing', async () => {
    ({ server } = await serve(() => undefined));
    const closing = server;
    server = undefined;
    const port = (closing.address() as AddressInfo).port;
    await new Promise((r) => closing.close(r));
    client = makeClient(`http://127.0.0.1:${port}/api/v1`, 2);
    const err = await client.ensureToken().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).message).toMatch(/ECONNREFUSED/);
    expect(client.stats().creditsTotal).toBe(0);
  });
});
