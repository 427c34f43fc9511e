import { EventEmitter } from 'node:events';
import pLimit, { type LimitFunction } from 'p-limit';
import { Agent, type Dispatcher } from 'undici';
import { DEFAULT_RATE_LIMIT } from '../../connectors/service.js';
import { tokenAnswerSchema } from '../../schemas/wire.js';
import { backoffDelay, sleep } from './backoff.js';
import { parseApiTimestamp, parseHttpDate, ServerClock } from './clock.js';
import { clientIdOf, encodeCredentials, secretsOf } from './credentials.js';
import {
  ApiUsageError,
  BudgetExhaustedError,
  EvsyncApiError,
  MalformedResponseError,
  NetworkError,
  type RateLimitedError,
  ResponseTooLargeError,
  TimeoutError,
} from './errors.js';
import {
  BodyTooLarge,
  type Exchange,
  ExchangeTimeout,
  errorCode,
  exchange,
  failedBeforeSending,
  header,
} from './http.js';
import { type CreditKind, CreditLedger, costOf } from './ledger.js';
import { keysetPages, offsetPages } from './pagination.js';
import { type ListQuery, listQueryPairs, toQueryString } from './query.js';
import { forgetSecret, registerSecret } from './redact.js';
import { httpError, MalformedBody, parseJson, parseListEnvelope, rateLimitHeaders } from './responses.js';
import { type Token, TokenManager } from './token.js';
import type {
  ApiClientEvents,
  CallOptions,
  ClientOptions,
  ClientStats,
  KeysetPage,
  KeysetQuery,
  ListPage,
  OffsetPage,
  SendOptions,
} from './types.js';

const DEFAULTS = {
  rateLimit: { limit: DEFAULT_RATE_LIMIT.credits, windowMs: DEFAULT_RATE_LIMIT.windowSeconds * 1000 },
  concurrency: 4,
  headersMs: 30_000,
  bodyMs: 60_000,
  attempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  tokenRefreshMarginMs: 60_000,
  userAgent: 'evsync',
  /** Far above the largest real page (1000 full registrants with custom fields are ~1.5 MB). */
  maxResponseBytes: 64 * 1_048_576,
};

/** 5xx statuses worth another try for a GET or the token call. */
const RETRY_STATUSES = new Set([500, 502, 503, 504]);
/** How many access tokens stay registered for redaction (a long-running daemon rotates one every 30 minutes). */
const TOKENS_REMEMBERED = 4;

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

interface CallSpec<T> {
  kind: CreditKind;
  method: Method;
  /** Relative to the base URL, query included: what errors and events show. */
  path: string;
  body?: string;
  contentType?: string;
  /** GETs and the token call: retried on faults. Others only when the request provably never left. */
  idempotent: boolean;
  parse: (ex: Exchange) => T;
  signal?: AbortSignal | undefined;
}

interface BaseUrl {
  origin: string;
  /** `/api/v1`, no trailing slash. */
  basePath: string;
  display: string;
}

function parseBaseUrl(raw: string): BaseUrl {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApiUsageError(`baseUrl is not a URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ApiUsageError(`baseUrl must be http(s): ${raw}`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new ApiUsageError('baseUrl must not carry credentials, a query or a fragment');
  }
  const basePath = url.pathname.replace(/\/+$/, '');
  if (!basePath.endsWith('/v1')) {
    throw new ApiUsageError(`baseUrl must end in /v1 (e.g. https://api.swoogo.com/api/v1), got ${raw}`);
  }
  return { origin: url.origin, basePath, display: `${url.origin}${basePath}` };
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!(value > 0)) throw new ApiUsageError(`${name} must be > 0, got ${value}`);
  return value;
}

/** Rejects as soon as the signal aborts, without cancelling `p` (a shared token refresh serves other callers). */
function raceAbort<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function isObjectBody(body: unknown): body is Record<string, unknown> {
  return typeof body === 'object' && body !== null && !Array.isArray(body);
}

/**
 * The service client: tokens, the credit ledger, retries and paging behind five calls. One instance per credential;
 * every call is charged to its ledger before it is sent.
 */
export class ApiClient extends EventEmitter<ApiClientEvents> {
  readonly ledger: CreditLedger;
  readonly baseUrl: string;
  /** The credentials' client id (public; the secret never leaves the token call). */
  readonly clientId: string;

  private readonly base: BaseUrl;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly basic: string;
  private readonly secrets: string[];
  private readonly tokenSecrets: string[] = [];
  private readonly clock = new ServerClock();
  private readonly tokens: TokenManager;
  private readonly limit: LimitFunction;
  private readonly maxWaitMs: number;
  private readonly headersMs: number;
  private readonly bodyMs: number;
  private readonly maxResponseBytes: number;
  private readonly attempts: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly userAgent: string;
  private closed = false;
  private readonly counters = { requests: 0, retries: 0, tokenRefreshes: 0 };

  constructor(options: ClientOptions) {
    super();
    this.base = parseBaseUrl(options.baseUrl);
    this.baseUrl = this.base.display;
    this.clientId = clientIdOf(options.credentials);
    this.basic = encodeCredentials(options.credentials);
    this.secrets = secretsOf(options.credentials);
    for (const s of this.secrets) registerSecret(s);

    const concurrency = Math.floor(positive('concurrency', options.concurrency, DEFAULTS.concurrency));
    this.limit = pLimit(concurrency);
    this.maxWaitMs = options.maxWaitMs ?? Number.POSITIVE_INFINITY;
    if (!(this.maxWaitMs >= 0)) throw new ApiUsageError(`maxWaitMs must be >= 0, got ${options.maxWaitMs}`);
    this.headersMs = positive('timeouts.headersMs', options.timeouts?.headersMs, DEFAULTS.headersMs);
    this.bodyMs = positive('timeouts.bodyMs', options.timeouts?.bodyMs, DEFAULTS.bodyMs);
    this.maxResponseBytes = positive('maxResponseBytes', options.maxResponseBytes, DEFAULTS.maxResponseBytes);
    this.attempts = Math.floor(positive('retry.attempts', options.retry?.attempts, DEFAULTS.attempts));
    this.baseDelayMs = options.retry?.baseDelayMs ?? DEFAULTS.baseDelayMs;
    this.maxDelayMs = options.retry?.maxDelayMs ?? DEFAULTS.maxDelayMs;
    this.userAgent = options.userAgent ?? DEFAULTS.userAgent;

    const rate = options.rateLimit ?? DEFAULTS.rateLimit;
    this.ledger = new CreditLedger({
      limit: rate.limit,
      windowMs: rate.windowMs,
      reserveCredits: options.reserveCredits ?? 0,
      runBudget: options.runBudget ?? null,
    });
    this.ledger.on('wait', (e) => this.emit('wait', e));

    this.tokens = new TokenManager(
      () => this.fetchToken(),
      this.clock,
      options.tokenRefreshMarginMs ?? DEFAULTS.tokenRefreshMarginMs,
    );

    if (options.dispatcher) {
      this.dispatcher = options.dispatcher;
      this.ownsDispatcher = false;
    } else {
      // One keep-alive pool; +1 connection so the token call never queues behind data calls.
      this.dispatcher = new Agent({ connections: concurrency + 1, keepAliveTimeout: 30_000 });
      this.ownsDispatcher = true;
    }
  }

  /** ONE list call (10 credits). `path` is relative to the base URL, e.g. `/registrants`. */
  list<T = Record<string, unknown>>(path: string, query: ListQuery = {}, opts: CallOptions = {}): Promise<ListPage<T>> {
    const rel = this.relativePath(path, listQueryPairs(query));
    return this.limit(() =>
      this.call({
        kind: 'list',
        method: 'GET',
        path: rel,
        idempotent: true,
        signal: opts.signal,
        parse: (ex) => {
          const { items, meta } = parseListEnvelope(ex);
          return { items: items as T[], meta, serverDate: parseHttpDate(header(ex.headers, 'date')), path: rel };
        },
      }),
    );
  }

  /** One non-list GET (1 credit); an empty body is null. */
  get<T = unknown>(
    path: string,
    params: Record<string, string | number> = {},
    opts: CallOptions = {},
  ): Promise<{ body: T; serverDate: Date | null }> {
    const rel = this.relativePath(path, Object.entries(params));
    return this.limit(() =>
      this.call({
        kind: 'other',
        method: 'GET',
        path: rel,
        idempotent: true,
        signal: opts.signal,
        parse: (ex) => ({ body: parseJson(ex.text) as T, serverDate: parseHttpDate(header(ex.headers, 'date')) }),
      }),
    );
  }

  /**
   * One write (1 credit). Not retried (it may have taken effect) except when the connection was refused before
   * anything was sent, on a 429 (refused before processing) and once on a 401 with a fresh token.
   */
  send<T = unknown>(
    method: 'POST' | 'PUT' | 'DELETE',
    path: string,
    body?: Record<string, string> | object,
    opts: SendOptions = {},
  ): Promise<{ status: number; body: T | null }> {
    const rel = this.relativePath(path, []);
    let encoded: string | undefined;
    let contentType: string | undefined;
    if (body !== undefined) {
      const scalar =
        isObjectBody(body) && Object.values(body).every((v) => typeof v === 'string' || typeof v === 'number');
      const asForm = opts.encoding ? opts.encoding === 'form' : scalar;
      if (asForm) {
        if (!isObjectBody(body)) throw new ApiUsageError('a form body must be a flat object');
        encoded = toQueryString(Object.entries(body).map(([k, v]) => [k, String(v)]));
        contentType = 'application/x-www-form-urlencoded;charset=UTF-8';
      } else {
        encoded = JSON.stringify(body);
        contentType = 'application/json';
      }
    }
    return this.limit(() =>
      this.call({
        kind: 'other',
        method,
        path: rel,
        body: encoded,
        contentType,
        idempotent: false,
        signal: opts.signal,
        parse: (ex) => ({ status: ex.status, body: parseJson(ex.text) as T | null }),
      }),
    );
  }

  /**
   * Offset pages following `_meta.pageCount` and the granted `_meta.perPage` from the answers, from `query.page`
   * (default 1). Refuses an answer that repeats the page before or pages past the first answer's `totalCount`.
   */
  pages<T = Record<string, unknown>>(
    path: string,
    query: ListQuery = {},
    opts: CallOptions = {},
  ): AsyncGenerator<OffsetPage<T>> {
    return offsetPages<T>(
      (q) => this.list<T>(path, q, opts),
      query,
      (detail, page) => this.malformed('GET', page, detail),
    );
  }

  /**
   * Keyset pages: `sort=id`, `search=<conditions>&id>{afterId}`, always `page=1`. Stops when the answer says nothing
   * remains, so a row count that is an exact multiple of the page size costs no extra empty call.
   */
  keyset<T extends { id: number | string }>(
    path: string,
    q: KeysetQuery,
    opts: CallOptions = {},
  ): AsyncGenerator<KeysetPage<T>> {
    return keysetPages<T>(
      (query) => this.list<T>(path, query, opts),
      q,
      (detail, page) => this.malformed('GET', page, detail),
    );
  }

  /** Local clock corrected by the offset measured from `Date` headers (the local clock if answers carry none). */
  serverNow(): Date {
    const ms = this.clock.nowMs();
    if (ms === null) throw new ApiUsageError('serverNow: no answer seen yet; await ensureToken() first');
    return new Date(ms);
  }

  /** Server clock minus local clock in ms (0 before any answer). */
  get clockOffsetMs(): number {
    return this.clock.offsetMs;
  }

  /** Fetches a token unless a valid one is cached (the answer also calibrates serverNow). */
  async ensureToken(opts: CallOptions = {}): Promise<void> {
    await this.currentToken(opts.signal);
  }

  /** When the cached token expires (server clock), or null. */
  get tokenExpiresAt(): Date | null {
    return this.tokens.current?.expiresAt ?? null;
  }

  stats(): ClientStats {
    const s = this.ledger.snapshot();
    const total = s.spent.list + s.spent.other + s.spent.token;
    return {
      spent: s.spent,
      credits: { ...s.spent, total },
      creditsTotal: total,
      requests: this.counters.requests,
      retries: this.counters.retries,
      rejected429: s.rejected429,
      waitMs: s.waitedMs,
      tokenRefreshes: this.counters.tokenRefreshes,
    };
  }

  /**
   * Starts a new run on this client: stats and the run budget restart from 0 (see CreditLedger.startRun), while the
   * token, the credit window and the connections are kept, so a daemon does not fetch a token per run.
   */
  beginRun(): void {
    this.ledger.startRun();
    this.counters.requests = 0;
    this.counters.retries = 0;
    this.counters.tokenRefreshes = 0;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.ledger.close(new Error('the API client was closed'));
    for (const s of this.secrets) forgetSecret(s);
    for (const s of this.tokenSecrets.splice(0)) forgetSecret(s);
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private relativePath(path: string, pairs: [string, string | number][]): string {
    if (!path.startsWith('/') || path.includes('?') || path.includes('#')) {
      throw new ApiUsageError(`path must start with '/' and carry no query (pass it as parameters): ${path}`);
    }
    const qs = toQueryString(pairs);
    return qs ? `${path}?${qs}` : path;
  }

  private currentToken(signal: AbortSignal | undefined): Promise<Token> {
    return raceAbort(this.tokens.get(), signal);
  }

  private async fetchToken(): Promise<Token> {
    const token = await this.call<Token>({
      kind: 'token',
      method: 'POST',
      path: '/oauth2/token',
      body: 'grant_type=client_credentials',
      contentType: 'application/x-www-form-urlencoded;charset=UTF-8',
      idempotent: true,
      parse: (ex) => {
        const parsed = tokenAnswerSchema.safeParse(parseJson(ex.text));
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          throw new MalformedBody(`token answer invalid at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
        }
        const expiresAt = parseApiTimestamp(parsed.data.expires_at);
        if (!expiresAt) throw new MalformedBody('token answer: expires_at is not a timestamp');
        const now = this.clock.nowMs() ?? Date.now();
        return { accessToken: parsed.data.access_token, expiresAt, lifetimeMs: Math.max(0, expiresAt.getTime() - now) };
      },
    });
    registerSecret(token.accessToken);
    this.tokenSecrets.push(token.accessToken);
    if (this.tokenSecrets.length > TOKENS_REMEMBERED) forgetSecret(this.tokenSecrets.shift()!);
    this.counters.tokenRefreshes += 1;
    this.emit('token', { expiresAt: token.expiresAt });
    return token;
  }

  private malformed(method: string, path: string, detail: string): MalformedResponseError {
    return new MalformedResponseError(`${method} ${path}: malformed answer: ${detail}`, {
      status: 200,
      method,
      path,
      detail,
    });
  }

  /** One call with credits, token, retries and typed errors. */
  private async call<T>(spec: CallSpec<T>): Promise<T> {
    if (this.closed) throw new ApiUsageError('the API client is closed');
    const bearer = spec.kind !== 'token';
    const cost = costOf(spec.kind);
    let attempt = 1;
    let authRetried = false;
    let rateLimited = 0;
    let waited = 0;

    while (true) {
      let token = bearer ? await this.currentToken(spec.signal) : null;
      const waitStart = Date.now();
      const reservation = await this.ledger.acquire(spec.kind, {
        method: spec.method,
        path: spec.path,
        signal: spec.signal,
        maxWaitMs: this.maxWaitMs - waited,
        priority: spec.kind === 'token',
      });
      const waitedNow = Date.now() - waitStart;
      waited += waitedNow;

      let ex: Exchange;
      try {
        // A long wait for the window may have outlived the token.
        if (token && waitedNow > 0 && this.tokens.isStale(token)) token = await this.currentToken(spec.signal);
        this.ledger.markSent(reservation);
        ex = await exchange(this.dispatcher, {
          origin: this.base.origin,
          path: this.base.basePath + spec.path,
          method: spec.method,
          headers: this.headers(spec, token),
          body: spec.body,
          headersMs: this.headersMs,
          bodyMs: this.bodyMs,
          maxBytes: this.maxResponseBytes,
          signal: spec.signal,
        });
      } catch (err) {
        if (spec.signal?.aborted) {
          this.ledger.release(reservation);
          throw spec.signal.reason;
        }
        if (err instanceof BodyTooLarge) {
          // It reached the service (and was charged); asking again would bring the same answer.
          this.ledger.settle(reservation, {}, Date.now());
          const mb = Math.round(err.limit / 1_048_576);
          throw new ResponseTooLargeError(
            `${spec.method} ${spec.path}: the answer is larger than ${mb} MB, refused (maxResponseBytes)`,
            { method: spec.method, path: spec.path, status: err.status },
          );
        }
        if (err instanceof EvsyncApiError || (!(err instanceof ExchangeTimeout) && !isTransportError(err))) {
          this.ledger.release(reservation);
          throw err;
        }
        const notSent = failedBeforeSending(err);
        // A refused connection cost nothing; anything later may have reached the server and been charged.
        if (notSent) this.ledger.release(reservation);
        else this.ledger.settle(reservation, {}, Date.now());
        const failure = this.transportError(spec, err);
        if (!(spec.idempotent || notSent) || attempt >= this.attempts) throw failure;
        await this.backoff(spec, attempt, err instanceof ExchangeTimeout ? 'timeout' : 'network');
        attempt += 1;
        continue;
      }

      this.counters.requests += 1;
      this.clock.observe(parseHttpDate(header(ex.headers, 'date')), ex.sentAt, ex.receivedAt);
      const limits = rateLimitHeaders(ex);
      this.emit('request', {
        method: spec.method,
        path: spec.path,
        status: ex.status,
        ms: ex.receivedAt - ex.sentAt,
        cost,
      });

      if (ex.status === 429) {
        rateLimited += 1;
        const window = this.ledger.windowMs;
        const { until, blocked } = this.ledger.rateLimited(reservation, limits, ex.receivedAt, {
          fallbackMs: Math.min(window, Math.max(1000, this.baseDelayMs) * 2 ** (rateLimited - 1)),
          transientMs: Math.min(window, Math.max(50, this.baseDelayMs) * 2 ** (rateLimited - 1)),
        });
        if (rateLimited > Math.max(10, this.attempts * 2)) {
          throw httpError(ex, this.errorContext(spec)) as RateLimitedError;
        }
        // Blocked: the next acquire waits for the reset (counted against maxWaitMs there).
        if (!blocked) waited += await this.pause429(spec, until, this.maxWaitMs - waited);
        continue;
      }
      if (ex.status === 401 && token) {
        // No credential was identified: the answer's rate headers are not ours, and nothing was charged.
        this.ledger.settleUncharged(reservation);
      } else {
        this.ledger.settle(reservation, limits, ex.receivedAt);
      }

      if (ex.status === 401 && token) {
        if (authRetried) throw httpError(ex, this.errorContext(spec));
        authRetried = true;
        this.tokens.invalidate(token);
        this.counters.retries += 1;
        this.emit('retry', { attempt, delayMs: 0, reason: 'unauthorized', method: spec.method, path: spec.path });
        continue;
      }

      if (ex.status >= 200 && ex.status < 300) {
        try {
          return spec.parse(ex);
        } catch (err) {
          if (!(err instanceof MalformedBody)) throw err;
          if (!spec.idempotent || attempt >= this.attempts) {
            throw this.malformed(spec.method, spec.path, err.detail);
          }
          await this.backoff(spec, attempt, 'malformed');
          attempt += 1;
          continue;
        }
      }

      if (spec.idempotent && RETRY_STATUSES.has(ex.status) && attempt < this.attempts) {
        await this.backoff(spec, attempt, `status ${ex.status}`);
        attempt += 1;
        continue;
      }
      throw httpError(ex, this.errorContext(spec));
    }
  }

  private headers(spec: CallSpec<unknown>, token: Token | null): Record<string, string> {
    const h: Record<string, string> = {
      accept: 'application/json',
      'user-agent': this.userAgent,
      authorization: token ? `Bearer ${token.accessToken}` : `Basic ${this.basic}`,
    };
    if (spec.contentType) h['content-type'] = spec.contentType;
    return h;
  }

  private errorContext(spec: CallSpec<unknown>) {
    return { method: spec.method, path: spec.path, baseUrl: this.baseUrl, tokenCall: spec.kind === 'token' };
  }

  private transportError(spec: CallSpec<unknown>, err: unknown): EvsyncApiError {
    const init = { method: spec.method, path: spec.path, cause: err };
    if (err instanceof ExchangeTimeout) {
      return new TimeoutError(`${spec.method} ${spec.path}: ${err.message}`, { ...init, phase: err.phase });
    }
    const code = errorCode(err);
    return new NetworkError(
      `${spec.method} ${spec.path}: ${code ? `${code}: ` : ''}${(err as Error).message ?? String(err)}`,
      init,
    );
  }

  /** A transient 429 (credits left per the headers): pause briefly, within what is left of maxWaitMs. */
  private async pause429(spec: CallSpec<unknown>, until: Date, allowedMs: number): Promise<number> {
    const ms = Math.max(0, until.getTime() - Date.now());
    if (ms > allowedMs) {
      const snap = this.ledger.snapshot();
      throw new BudgetExhaustedError(`429 pause of ${ms} ms exceeds the allowed wait`, {
        method: spec.method,
        path: spec.path,
        reason: 'max-wait',
        resetAt: until,
        needed: costOf(spec.kind),
        remaining: snap.remaining,
      });
    }
    this.emit('wait', { ms, until, reason: '429' });
    await sleep(ms, spec.signal);
    this.ledger.noteWait(ms);
    return ms;
  }

  private async backoff(spec: CallSpec<unknown>, attempt: number, reason: string): Promise<void> {
    const delayMs = backoffDelay(attempt, this.baseDelayMs, this.maxDelayMs);
    this.counters.retries += 1;
    this.emit('retry', { attempt, delayMs, reason, method: spec.method, path: spec.path });
    await sleep(delayMs, spec.signal);
  }
}

/** Errors from the transport (undici, sockets, DNS), as opposed to bugs or usage errors thrown on our side. */
function isTransportError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = errorCode(err);
  if (code !== undefined) return true;
  // undici's own error classes all carry a UND_ERR_* code; a body cut short surfaces as a plain socket error.
  return (
    err.name === 'SocketError' || err.name === 'AbortError' || /socket|terminated|other side closed/i.test(err.message)
  );
}
