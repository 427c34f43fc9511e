/**
 * A real HTTP proxy on loopback in front of the simulator, for answers the simulator (faithful to the spec) never
 * gives: a path the account does not serve (404), a body rewritten with odd records. It counts what it refused, so
 * a test can count the credits a refused path cost.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackProxy {
  baseUrl: string;
  server: Server;
  /** Requests answered 404 by the proxy itself, per path (without the query). */
  refused: Map<string, number>;
  close(): Promise<void>;
}

export interface ProxyRules {
  /** Paths (below the base, e.g. `/event-questions`) answered 404 as a service that does not serve them would. */
  notFound?: (path: string) => boolean;
  /** The request as forwarded (path below the base, with its query): e.g. a service that ignores `page`. */
  forward?: (pathAndQuery: string) => string;
  /** A new body for a 200 answer (given the request path with its query, and the body), or null to pass it on. */
  rewrite?: (pathAndQuery: string, body: string) => string | null;
  /**
   * Holds a request (given its path below the base, with its query) until the promise resolves, or null to pass it
   * on at once: a test keeps a run from ending until it has looked, by count, never by time.
   */
  hold?: (pathAndQuery: string) => Promise<void> | null;
}

const NOT_FOUND = JSON.stringify({ name: 'Not Found', message: 'Page not found.', code: 0, status: 404 });

export async function startProxy(target: string, rules: ProxyRules): Promise<LoopbackProxy> {
  const upstream = new URL(target);
  const base = upstream.pathname.replace(/\/$/, '');
  const refused = new Map<string, number>();
  const server = createServer((req, res) => {
    const url = req.url ?? '';
    const path = url.split('?')[0]!.slice(base.length);
    if (rules.notFound?.(path)) {
      refused.set(path, (refused.get(path) ?? 0) + 1);
      res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(NOT_FOUND) });
      res.end(NOT_FOUND);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      await rules.hold?.(url.slice(base.length));
      const forwarded = rules.forward ? base + rules.forward(url.slice(base.length)) : url;
      const out = request(
        { host: upstream.hostname, port: upstream.port, path: forwarded, method: req.method, headers: req.headers },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (c: Buffer) => parts.push(c));
          answer.on('end', () => {
            const text = Buffer.concat(parts).toString('utf8');
            const replaced = answer.statusCode === 200 ? (rules.rewrite?.(url.slice(base.length), text) ?? null) : null;
            const body = replaced ?? text;
            const headers = { ...answer.headers, 'content-length': String(Buffer.byteLength(body)) };
            delete headers['transfer-encoding'];
            res.writeHead(answer.statusCode ?? 502, headers);
            res.end(body);
          });
        },
      );
      out.on('error', () => res.destroy());
      out.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}${upstream.pathname}`,
    server,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** What `holdSecondEvent` holds, and the handle that lets it go. */
export interface EventHold {
  /** Holds only once armed (a backfill before goes through). */
  armed: boolean;
  /** Events whose walks asked for the path, in order. */
  events: number[];
  /** Requests held so far. */
  held: number;
  release(): void;
}

/**
 * A `hold` rule: once armed, holds every list call a walk (not an id sweep) makes for `path` of the second event it
 * asks for, until released. The first event's item goes alone as its stream's probe; the second's runs beside the
 * others, so holding it keeps a run from ending while the rest completes, and the test looks (by count, not time).
 */
export function holdSecondEvent(path: string): { hold: NonNullable<ProxyRules['hold']>; state: EventHold } {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const state: EventHold = { armed: false, events: [], held: 0, release: () => release() };
  const hold = (pathAndQuery: string): Promise<void> | null => {
    const url = new URL(pathAndQuery, 'http://proxy');
    if (!state.armed || url.pathname !== path || url.searchParams.get('fields') === 'id') return null;
    const event = Number(url.searchParams.get('event_id'));
    if (!state.events.includes(event)) state.events.push(event);
    if (state.events.indexOf(event) !== 1) return null;
    state.held += 1;
    return released;
  };
  return { hold, state };
}
