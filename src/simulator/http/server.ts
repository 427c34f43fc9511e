import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Json } from '../core/record.js';
import type { ServiceContext } from '../service/context.js';
import type { RateHeaders } from '../service/credits.js';
import type { FaultDecision } from '../service/faults.js';
import { parseBody, readBody } from './body.js';
import { badRequest, errorBody, HttpError, MESSAGES } from './errors.js';
import type { Router } from './router.js';
import type { ApiRequest, ApiResponse } from './types.js';

const FAULT_MESSAGES: Record<number, string> = {
  500: MESSAGES.internal,
  502: 'The server received an invalid response from an upstream server.',
  503: 'The service is temporarily unavailable. Please try again later.',
};

export type ControlHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;

interface Outcome {
  response: ApiResponse;
  /** Whose rate-limit state the headers show (null: no known credential). */
  account: number | null;
  fault: FaultDecision | null;
}

const NO_FAULT: FaultDecision = { kind: 'none', status: 200, slowMs: 0 };

/** JSON text with every non-ASCII UTF-16 unit escaped (`é` as `\u00e9`, an emoji as two), as Python writes it. */
function asciiJson(text: string): string {
  return text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function errorResponse(e: HttpError): ApiResponse {
  return { status: e.status, body: e.body() };
}

export class ApiServer {
  readonly server: Server;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly router: Router,
    private readonly control: ControlHandler | null,
  ) {
    this.server = createServer({ keepAliveTimeout: 10_000 }, (req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        // Last resort: the request handler itself failed (e.g. the client vanished mid-body).
        if (!res.headersSent && !res.destroyed) {
          res.writeHead(500, { 'Content-Type': 'application/json; charset=UTF-8' });
          res.end(JSON.stringify(errorBody(500, MESSAGES.internal)));
        }
        if (process.env.EVSYNC_SIMULATOR_DEBUG) console.error(err);
      });
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator.invalid');
    if (url.pathname.startsWith('/_control/') && this.control) return this.control(req, res, url);
    const outcome = await this.process(req, url);
    const latency = this.ctx.faults.latencyMs + (outcome.fault?.slowMs ?? 0);
    if (latency > 0) await sleep(latency);
    this.write(res, outcome);
  }

  private async process(req: IncomingMessage, url: URL): Promise<Outcome> {
    const ctx = this.ctx;
    const method = req.method ?? 'GET';
    if (!(url.pathname === '/v1' || url.pathname.startsWith('/v1/'))) {
      return { response: errorResponse(new HttpError(404, MESSAGES.notFound)), account: null, fault: null };
    }
    let path = url.pathname.slice(3).replace(/\/+$/, '');
    if (path.endsWith('.json')) path = path.slice(0, -5);
    let bodyText = '';
    if (method !== 'GET' && method !== 'HEAD') {
      try {
        bodyText = await readBody(req);
      } catch (e) {
        if (e instanceof HttpError) return { response: errorResponse(e), account: null, fault: null };
        throw e;
      }
    }
    const headers = req.headers;
    if (path === '/oauth2/token') return this.token(method, headers, bodyText);

    const now = ctx.clock.nowMs();
    const auth = ctx.auth.bearer(headers.authorization, now);
    if (!auth.ok) {
      return { response: errorResponse(new HttpError(401, MESSAGES.unauthorized)), account: auth.account, fault: null };
    }
    const account = auth.account;
    const match = this.router.match(method, path);
    const routeKey = match.ok ? `${method} ${match.route.pattern}` : `${method} (unmatched)`;
    const fault = ctx.faults.decide();
    if (fault.kind === 'storm429') {
      ctx.credits.noteRejected(account);
      return { response: errorResponse(new HttpError(429, MESSAGES.rateLimited)), account, fault };
    }
    if (!ctx.credits.tryCharge(account, match.ok ? match.route.kind : 'other', routeKey)) {
      return { response: errorResponse(new HttpError(429, MESSAGES.rateLimited)), account, fault: null };
    }
    if (fault.kind === 'error') {
      return {
        response: { status: fault.status, body: errorBody(fault.status, FAULT_MESSAGES[fault.status]!) },
        account,
        fault,
      };
    }
    if (!match.ok) {
      const e =
        match.status === 405
          ? new HttpError(
              405,
              `Method Not Allowed. This URL can only handle the following request methods: ${match.allow.join(', ')}.`,
            )
          : new HttpError(404, MESSAGES.notFound);
      return { response: errorResponse(e), account, fault };
    }
    try {
      const apiReq: ApiRequest = {
        method,
        path,
        query: url.searchParams,
        params: match.params,
        body: parseBody(bodyText, headers['content-type']),
        account,
        headers,
      };
      return { response: match.route.handler(apiReq), account, fault };
    } catch (e) {
      if (e instanceof HttpError) return { response: errorResponse(e), account, fault };
      if (process.env.EVSYNC_SIMULATOR_DEBUG) console.error(e);
      return { response: errorResponse(new HttpError(500, MESSAGES.internal)), account, fault };
    }
  }

  private token(method: string, headers: IncomingMessage['headers'], bodyText: string): Outcome {
    const ctx = this.ctx;
    const account = ctx.auth.basic(headers.authorization);
    if (account === null) {
      return { response: errorResponse(new HttpError(401, MESSAGES.unauthorized)), account: null, fault: null };
    }
    if (!ctx.credits.tryCharge(account, 'token', 'POST /oauth2/token')) {
      return { response: errorResponse(new HttpError(429, MESSAGES.rateLimited)), account, fault: null };
    }
    if (method !== 'POST') {
      const e = new HttpError(405, 'Method Not Allowed. This URL can only handle the following request methods: POST.');
      return { response: errorResponse(e), account, fault: null };
    }
    let body: Record<string, string>;
    try {
      body = parseBody(bodyText, headers['content-type']);
    } catch (e) {
      return { response: errorResponse(e as HttpError), account, fault: null };
    }
    if (body.grant_type !== 'client_credentials') {
      return {
        response: errorResponse(badRequest('grant_type must be "client_credentials".')),
        account,
        fault: null,
      };
    }
    const token = ctx.auth.issue(account, ctx.clock.nowMs(), ctx.tokenTtlSeconds);
    return { response: { status: 200, body: token }, account, fault: null };
  }

  private write(res: ServerResponse, outcome: Outcome): void {
    const { response, fault } = outcome;
    const rate: RateHeaders = this.ctx.credits.headers(outcome.account);
    const headers: Record<string, string | number> = {
      Date: new Date(this.ctx.clock.nowMs()).toUTCString(),
      'X-Rate-Limit-Limit': rate.limit,
      'X-Rate-Limit-Remaining': rate.remaining,
    };
    if (!this.ctx.faults.omitResetHeader) headers['X-Rate-Limit-Reset'] = rate.reset;
    Object.assign(headers, response.headers);
    res.sendDate = false;
    if (response.body === undefined) {
      res.writeHead(response.status, headers);
      res.end();
      return;
    }
    let body = typeof response.body === 'string' ? response.body : JSON.stringify(response.body as Json);
    if (this.ctx.faults.asciiJson) body = asciiJson(body);
    headers['Content-Type'] = 'application/json; charset=UTF-8';
    const kind = fault?.kind ?? NO_FAULT.kind;
    if (kind === 'malformed') {
      // A 200 whose body stops mid-way: valid headers, invalid JSON.
      body = body.slice(0, Math.max(1, Math.floor(body.length * 0.6)));
      if (body.length > 2) body = body.slice(0, -1);
      headers['Content-Length'] = Buffer.byteLength(body);
      res.writeHead(200, headers);
      res.end(body);
      return;
    }
    headers['Content-Length'] = Buffer.byteLength(body, 'utf8');
    res.writeHead(response.status, headers);
    if (kind === 'reset') {
      // Headers and part of the body, then the connection dies.
      const bytes = Buffer.from(body, 'utf8');
      res.write(bytes.subarray(0, Math.max(1, Math.floor(bytes.length / 2))), () => res.destroy());
      return;
    }
    res.end(body, 'utf8');
  }
}
