/**
 * The daemon's admin address, apart from the webhook receiver's (which the service must reach): `GET /` the status
 * page, `GET /status.json` the status document (the same as `evsync status --json`), `GET /metrics` Prometheus
 * text. It listens on loopback by default (`--admin-listen`, default 127.0.0.1:8788; `off` disables it). Any other
 * address needs EVSYNC_ADMIN_TOKEN, and once a token is set every request must carry `Authorization: Bearer
 * <token>` (compared in constant time; never logged), on loopback too (other users of the machine reach loopback).
 * The README shows a reverse proxy that adds the header.
 *
 * Read-only: GET and HEAD only, no query the page sends reaches the database but the status questions.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { DAEMON_DEFAULTS } from '../../schemas/daemon-settings.js';
import { listenOn, parseListen } from '../sync/capture/server.js';
import type { Ctx } from './context.js';
import { UsageError } from './errors.js';
import { checkedSecret, secretRefusal } from './secret-env.js';
import type { StatusReport } from './status/document.js';
import { renderStatusPage } from './status-page/page.js';

export const DEFAULT_ADMIN_LISTEN = DAEMON_DEFAULTS.adminListen;
/** The environment variable holding the admin token (required off loopback). */
export const ADMIN_TOKEN_ENV = 'EVSYNC_ADMIN_TOKEN';

export interface AdminServerOptions {
  /** `host:port` (port 0 picks a free one). */
  listen: string;
  /** Required when `listen` is not a loopback address. */
  token?: string | undefined;
  status: () => Promise<StatusReport>;
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

/**
 * Why these admin settings cannot start (a configuration error), or null: a non-loopback address needs a token, and
 * a token, wherever it is set, must pass the secrets' rule (at least 16 characters; secret-env.ts). A short one is
 * refused on loopback too: once set it guards every request, and other users of the machine reach loopback.
 */
export function adminSettingsProblem(listen: string, token: string | undefined): string | null {
  const refused = token ? secretRefusal(ADMIN_TOKEN_ENV, token) : null;
  if (refused) return refused.text;
  const { host } = parseListen(listen);
  if (isLoopback(host)) return null;
  if (!token) {
    return `--admin-listen ${listen} is not a loopback address: set ${ADMIN_TOKEN_ENV} (e.g. \`openssl rand -hex 32\`); requests must then send "Authorization: Bearer <token>"`;
  }
  return null;
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

async function answer(o: AdminServerOptions, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  if (path === '/') {
    send(res, req, 200, 'text/html; charset=utf-8', renderStatusPage(await o.status(), { live: true }));
  } else if (path === '/status.json') {
    send(res, req, 200, 'application/json; charset=utf-8', `${JSON.stringify(await o.status(), null, 2)}\n`);
  } else if (path === '/metrics') {
    send(res, req, 200, 'text/plain; version=0.0.4; charset=utf-8', await o.metrics());
  } else send(res, req, 404, 'application/json', JSON.stringify({ error: 'not found' }));
}

function handler(o: AdminServerOptions, token: Buffer | null) {
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

/**
 * The admin address and token a command was given (`--admin-listen`, EVSYNC_ADMIN_TOKEN), checked before anything
 * opens (a usage error, exit 2); null for `off`. A token it accepts is scrubbed from all output (since createApp);
 * a refused one is said in evsync's own words, never echoed (secret-env.ts).
 */
export function adminSettings(ctx: Ctx, flag: string | undefined): { listen: string; token?: string } | null {
  const listen = flag ?? DEFAULT_ADMIN_LISTEN;
  if (listen === 'off') return null;
  const token = checkedSecret(ctx.io.env, ADMIN_TOKEN_ENV);
  let problem: string | null;
  try {
    problem = adminSettingsProblem(listen, token);
  } catch (err) {
    problem = `--admin-listen ${listen}: expected host:port (e.g. ${DEFAULT_ADMIN_LISTEN}) or off (${err instanceof Error ? err.message : String(err)})`;
  }
  if (problem) throw new UsageError(problem);
  return token ? { listen, token } : { listen };
}

/** Starts the admin server; throws (before listening) when the settings are refused, see adminSettingsProblem. */
export async function startAdminServer(o: AdminServerOptions): Promise<AdminServer> {
  const problem = adminSettingsProblem(o.listen, o.token);
  if (problem) throw new Error(problem);
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
