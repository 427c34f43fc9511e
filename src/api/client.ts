import { EventEmitter } from 'node:events';
import pLimit, { type LimitFunction } from 'p-limit';
import { Agent, type Dispatcher } from 'undici';
import { DEFAULT_RATE_LIMIT } from '../../connectors/service.js';
import { type Now, systemNow } from '../../schemas/clock.js';
import { tokenAnswerSchema } from '../../schemas/wire.js';
import { type Bearer, withCredits } from './call-credits.js';
import { withFreshToken } from './call-retoken.js';
import { type CallErrors, withRetries } from './call-retry.js';
import {
  type CallReporter,
  type CallSpec,
  type CallState,
  callState,
  type RetryPolicy,
  type Step,
} from './call-state.js';
import { parseApiTimestamp, parseHttpDate, ServerClock } from './clock.js';
import { clientIdOf, encodeCredentials, secretsOf } from './credentials.js';
import { ApiUsageError, type EvsyncApiError, MalformedResponseError, NetworkError, TimeoutError } from './errors.js';
import { ExchangeTimeout, errorCode, exchange, header } from './http.js';
import type { BulkLane } from './lane.js';
import { CreditLedger, costOf } from './ledger.js';
import { keysetPages, offsetPages } from './pagination.js';
import { type ListQuery, listQueryPairs, toQueryString } from './query.js';
import { forgetSecret, registerSecret } from './redact.js';
import { httpError, MalformedBody, parseJson, parseListEnvelope } from './responses.js';
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

/** How many access tokens stay registered for redaction (a long-running daemon rotates one every 30 minutes). */
const TOKENS_REMEMBERED = 4;

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
  /** The clock the client reads every time from (the one its caller composed it with). */
  readonly now: Now;
  private readonly clock: ServerClock;
  private readonly tokens: TokenManager;
  /** Calls in flight at once, per lane: a bulk call waiting for its share of the window holds no interactive slot. */
  private readonly limit: LimitFunction;
  private readonly bulkLimit: LimitFunction;
  /** The lane of calls that name none: set on a view made by `inBulkLane`, absent (interactive) on the client. */
  private defaultLane: BulkLane | undefined;
  private readonly headersMs: number;
  private readonly bodyMs: number;
  private readonly maxResponseBytes: number;
  private readonly layers: <T>(state: CallState<T>) => Promise<T>;
  private readonly userAgent: string;
  private closed = false;
  private readonly counters = { requests: 0, retries: 0, tokenRefreshes: 0 };

  constructor(options: ClientOptions) {
    super();
    this.now = options.now ?? systemNow;
    this.clock = new ServerClock(this.now);
    this.base = parseBaseUrl(options.baseUrl);
    this.baseUrl = this.base.display;
    this.clientId = clientIdOf(options.credentials);
    this.basic = encodeCredentials(options.credentials);
    this.secrets = secretsOf(options.credentials);
    for (const secret of this.secrets) registerSecret(secret);

    const concurrency = Math.floor(positive('concurrency', options.concurrency, DEFAULTS.concurrency));
    this.limit = pLimit(concurrency);
    this.bulkLimit = pLimit(concurrency);
    const maxWaitMs = options.maxWaitMs ?? Number.POSITIVE_INFINITY;
    if (!(maxWaitMs >= 0)) throw new ApiUsageError(`maxWaitMs must be >= 0, got ${options.maxWaitMs}`);
    this.headersMs = positive('timeouts.headersMs', options.timeouts?.headersMs, DEFAULTS.headersMs);
    this.bodyMs = positive('timeouts.bodyMs', options.timeouts?.bodyMs, DEFAULTS.bodyMs);
    this.maxResponseBytes = positive('maxResponseBytes', options.maxResponseBytes, DEFAULTS.maxResponseBytes);
    const policy: RetryPolicy = {
      attempts: Math.floor(positive('retry.attempts', options.retry?.attempts, DEFAULTS.attempts)),
      baseDelayMs: options.retry?.baseDelayMs ?? DEFAULTS.baseDelayMs,
      maxDelayMs: options.retry?.maxDelayMs ?? DEFAULTS.maxDelayMs,
    };
    this.userAgent = options.userAgent ?? DEFAULTS.userAgent;

    const rate = options.rateLimit ?? DEFAULTS.rateLimit;
    this.ledger = new CreditLedger({
      limit: rate.limit,
      windowMs: rate.windowMs,
      reserveCredits: options.reserveCredits ?? 0,
      runBudget: options.runBudget ?? null,
      now: this.now,
    });
    this.ledger.on('wait', (e) => this.emit('wait', e));

    this.tokens = new TokenManager(
      () => this.fetchToken(),
      this.clock,
      this.now,
      options.tokenRefreshMarginMs ?? DEFAULTS.tokenRefreshMarginMs,
    );
    this.layers = this.composeLayers(policy, maxWaitMs);

    if (options.dispatcher) {
      this.dispatcher = options.dispatcher;
      this.ownsDispatcher = false;
    } else {
      // One keep-alive pool with room for both lanes (the exchange's timeout starts before the pool hands it a
      // connection); +1 so the token call never queues behind data calls.
      this.dispatcher = new Agent({ connections: 2 * concurrency + 1, keepAliveTimeout: 30_000 });
      this.ownsDispatcher = true;
    }
  }

  /** ONE list call (10 credits). `path` is relative to the base URL, e.g. `/registrants`. */
  list<T = Record<string, unknown>>(path: string, query: ListQuery = {}, opts: CallOptions = {}): Promise<ListPage<T>> {
    const rel = this.relativePath(path, listQueryPairs(query));
    return this.call(opts, {
      kind: 'list',
      method: 'GET',
      path: rel,
      idempotent: true,
      parse: (ex) => {
        const { items, meta } = parseListEnvelope(ex);
        const serverDate = parseHttpDate(header(ex.headers, 'date'));
        return {
          items: items as T[],
          meta,
          serverDate,
          path: rel,
          text: ex.text,
          ...(ex.bytes ? { bytes: ex.bytes } : {}),
        };
      },
    });
  }

  /** One non-list GET (1 credit); an empty body is null. */
  get<T = unknown>(
    path: string,
    params: Record<string, string | number> = {},
    opts: CallOptions = {},
  ): Promise<{ body: T; serverDate: Date | null }> {
    const rel = this.relativePath(path, Object.entries(params));
    return this.call(opts, {
      kind: 'other',
      method: 'GET',
      path: rel,
      idempotent: true,
      parse: (ex) => ({ body: parseJson(ex.text) as T, serverDate: parseHttpDate(header(ex.headers, 'date')) }),
    });
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
    return this.call(opts, {
      kind: 'other',
      method,
      path: rel,
      body: encoded,
      contentType,
      idempotent: false,
      parse: (ex) => ({ status: ex.status, body: parseJson(ex.text) as T | null }),
    });
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
   * This client with every call that names no lane in `lane` (bulk work: see lane.ts), for code that makes many
   * calls through a client it is handed (the engine's walks). A view, not a copy: the same ledger, token,
   * connections, counters and events. Close the client, not the view.
   */
  inBulkLane(lane: BulkLane): ApiClient {
    const view = Object.create(this) as ApiClient;
    view.defaultLane = lane;
    return view;
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
    const token = await this.throughLayers<Token>({
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
        const now = this.clock.nowMs() ?? this.now();
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

  /** One data call in its lane, within that lane's calls in flight. */
  private call<T>(opts: CallOptions, spec: Omit<CallSpec<T>, 'signal' | 'lane'>): Promise<T> {
    const lane = opts.lane ?? this.defaultLane;
    return (lane ? this.bulkLimit : this.limit)(() => this.throughLayers({ ...spec, signal: opts.signal, lane }));
  }

  /** One call through the layers (call-retry, call-retoken, call-credits) around the exchange. */
  private throughLayers<T>(spec: CallSpec<T>): Promise<T> {
    if (this.closed) return Promise.reject(new ApiUsageError('the API client is closed'));
    return this.layers(callState(spec));
  }

  /** Transient faults retried outermost, then a 401 answered with a fresh token, then credits and 429 innermost. */
  private composeLayers(policy: RetryPolicy, maxWaitMs: number): <T>(state: CallState<T>) => Promise<T> {
    const report: CallReporter = {
      retry: (state, delayMs, reason) => {
        this.counters.retries += 1;
        const { method, path } = state.spec;
        this.emit('retry', { attempt: state.attempt, delayMs, reason, method, path });
      },
      answered: (state, exchange) => {
        this.counters.requests += 1;
        this.clock.observe(parseHttpDate(header(exchange.headers, 'date')), exchange.sentAt, exchange.receivedAt);
        const { method, path, kind } = state.spec;
        this.emit('request', {
          method,
          path,
          status: exchange.status,
          ms: exchange.receivedAt - exchange.sentAt,
          cost: costOf(kind),
        });
      },
      wait: (event) => this.emit('wait', event),
    };
    const bearer: Bearer = {
      current: async (spec) => (spec.kind === 'token' ? null : this.currentToken(spec.signal)),
      afterWait: async (spec, token) => (token && this.tokens.isStale(token) ? this.currentToken(spec.signal) : token),
    };
    const errors: CallErrors = {
      answer: (spec, ex) => httpError(ex, this.errorContext(spec)),
      transport: (spec, err) => this.transportError(spec, err),
      malformed: (spec, detail) => this.malformed(spec.method, spec.path, detail),
    };
    const exchangeOnce: Step = (state) =>
      exchange(this.dispatcher, {
        origin: this.base.origin,
        path: this.base.basePath + state.spec.path,
        method: state.spec.method,
        headers: this.headers(state.spec, state.token),
        body: state.spec.body,
        headersMs: this.headersMs,
        bodyMs: this.bodyMs,
        maxBytes: this.maxResponseBytes,
        signal: state.spec.signal,
        now: this.now,
      });
    const credits = withCredits(
      { ledger: this.ledger, maxWaitMs, policy, bearer, report, now: this.now },
      exchangeOnce,
    );
    const retoken = withFreshToken({ invalidate: (token) => this.tokens.invalidate(token), report }, credits);
    return withRetries({ policy, errors, report }, retoken);
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
}
