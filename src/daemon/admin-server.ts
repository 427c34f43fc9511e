/**
 * The daemon's admin address, apart from the webhook receiver's (which the service must reach): `GET /` the status
 * page, `GET /status.json` the status document (the same as `evsync status --json`), `GET /metrics` Prometheus
 * text. It listens on loopback by default (`--admin-listen`, default in schemas/daemon-settings.ts; `off` disables it). Any other
 * address needs EVSYNC_ADMIN_TOKEN, and once a token is set every request must carry `Authorization: Bearer
 * <token>` (compared in constant time; never logged), on loopback too (other users of the machine reach loopback).
 * The README shows a reverse proxy that adds the header.
 *
 * Read-only: GET and HEAD only, no query the page sends reaches the database but the status questions.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenOn } from '../sync/capture/server.js';

export interface AdminServerOptions<Report = unknown> {
  /** `host:port` (port 0 picks a free one). */
  listen: string;
  /** Required when `listen` is not a loopback address (the caller checks the settings before it starts this). */
  token?: string | undefined;
  status: () => Promise<Report>;
  /** The status page of a report (the command line renders it: src/cli/status-page). */
  page: (report: Report) => string;
  metrics: () => string | Promise<string>;
  log?: (level: 'debug' | 'info' | 'warn', message: string) => void;
}

export interface AdminServer {
  /** `http://host:port`. */
  readonly origin: string;
  readonly server: Server;
  close(): Promise<void>;
}

/** 127.0.0.0/8, ::1 and `localhost`: addresses only this machine reaches. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Whether the request carries the token (digests compared in constant time, whatever the lengths). */
function authorized(req: IncomingMessage, token: Buffer | null): boolean {
  if (token === null) return true;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return m !== null && timingSafeEqual(digest(m[1]!), token);
}

const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  // The page's own inline style and script only; it fetches nothing but its own address.
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

function send(res: ServerResponse, req: IncomingMessage, status: number, type: string, body: string): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(req.method === 'HEAD' ? undefined : body);
}

async function answer<R>(
  o: AdminServerOptions<R>,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  if (path === '/') {
    send(res, req, 200, 'text/html; charset=utf-8', o.page(await o.status()));
  } else if (path === '/status.json') {
    send(res, req, 200, 'application/json; charset=utf-8', `${JSON.stringify(await o.status(), null, 2)}\n`);
  } else if (path === '/metrics') {
    send(res, req, 200, 'text/plain; version=0.0.4; charset=utf-8', await o.metrics());
  } else send(res, req, 404, 'application/json', JSON.stringify({ error: 'not found' }));
}

function handler<R>(o: AdminServerOptions<R>, token: Buffer | null) {
  return (req: IncomingMessage, res: ServerResponse) => {
    if (!authorized(req, token)) {
      res.setHeader('www-authenticate', 'Bearer realm="evsync admin"');
      send(res, req, 401, 'application/json', JSON.stringify({ error: 'unauthorized' }));
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      send(res, req, 405, 'application/json', JSON.stringify({ error: 'method not allowed' }));
      return;
    }
    const path = (req.url ?? '/').split('?')[0]!;
    answer(o, req, res, path).catch((err: unknown) => {
      o.log?.('warn', `admin ${path}: ${err instanceof Error ? err.message : String(err)}`);
      if (!res.headersSent) send(res, req, 503, 'application/json', JSON.stringify({ error: 'status unavailable' }));
      else res.destroy();
    });
  };
}

/** Starts the admin server on an address its caller checked (see src/cli/admin-server.ts, adminSettingsProblem). */
export async function startAdminHttp<R>(o: AdminServerOptions<R>): Promise<AdminServer> {
  const server = createServer(handler(o, o.token ? digest(o.token) : null));
  server.headersTimeout = 15_000;
  server.requestTimeout = 30_000;
  return {
    origin: await listenOn(server, o.listen),
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
