import type { Dispatcher } from 'undici';
import type { Now } from '../../schemas/clock.js';
import type { Credentials } from './credentials.js';
import type { BulkLane } from './lane.js';
import type { LedgerSnapshot, WaitEvent } from './ledger.js';
import type { ListQuery } from './query.js';

export interface ClientOptions {
  /** The clock of every time the client reads (the ledger's window, the server clock's offset, token expiry). */
  now?: Now;
  /** The service root, ending in `/v1` (e.g. `https://api.swoogo.com/api/v1`). */
  baseUrl: string;
  credentials: Credentials;
  /** Injected for tests (MockAgent) or to share a pool; default: one keep-alive undici Agent owned by the client. */
  dispatcher?: Dispatcher;
  /** Default the spec's (DEFAULT_RATE_LIMIT, connectors/service.ts), corrected from the rate-limit headers of every answer. */
  rateLimit?: { limit: number; windowMs: number };
  /** Credits held back from each window (for another user of the credential). Default 0. */
  reserveCredits?: number;
  /** How long one call may wait (in total) for the window to reset. Default Infinity. */
  maxWaitMs?: number;
  /** Credit cap for this client's lifetime (`--budget`). Default unlimited. */
  runBudget?: number;
  /** Requests in flight at once. Default 4. */
  concurrency?: number;
  /** Default 30 s for the response headers, 60 s for the whole body. */
  timeouts?: { headersMs?: number; bodyMs?: number };
  /** Default 5 attempts, 250 ms base, 10 s cap; exponential with full jitter. */
  retry?: { attempts?: number; baseDelayMs?: number; maxDelayMs?: number };
  /** Answers larger than this many bytes are refused while they stream in. Default 64 MiB. */
  maxResponseBytes?: number;
  /** Refresh the token this long before its `expires_at` (server clock). Default 60_000. */
  tokenRefreshMarginMs?: number;
  userAgent?: string;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** Bulk work's lane (lane.ts): the call leaves a share of each window to the others. Default: interactive. */
  lane?: BulkLane | undefined;
}

export interface SendOptions extends CallOptions {
  /** How to encode an object body. Default: form when every value is a string or number (the service's action
   *  endpoints take forms), JSON otherwise. */
  encoding?: 'form' | 'json';
}

export interface PageMeta {
  /** Null when the answer does not say (the spec lists it; paging never needs it, counting does). */
  totalCount: number | null;
  pageCount: number;
  currentPage: number;
  perPage: number;
}

export interface ListPage<T = Record<string, unknown>> {
  items: T[];
  meta: PageMeta;
  /** The answer's `Date` header. */
  serverDate: Date | null;
  /** The request path relative to the base URL, query included. */
  path: string;
  /** The answer's body as the service sent it (the archive keeps it as it is); absent for a page not read so. */
  text?: string;
  /** The bytes `text` was decoded from, as they came. */
  bytes?: Buffer;
}

export interface KeysetQuery extends Omit<ListQuery, 'page' | 'sort'> {
  /** Start after this id (exclusive); omit to start from the lowest. */
  afterId?: number | undefined;
  perPage: number;
}

export interface KeysetPage<T> extends ListPage<T> {
  /** The last item's id, or the starting afterId (null if none) when the page is empty. */
  lastId: number | null;
  /** The answer itself says nothing remains (`_meta.pageCount <= 1` or no items). */
  done: boolean;
  /** Records the walk could not key (no integer id, repeated, not above the bound): `items` holds the rest. */
  quarantined: { raw: unknown; reason: string }[];
  /** Where each quarantined record was among the answer's items (`quarantined[i]` was item `quarantinedAt[i]`). */
  quarantinedAt: number[];
}

export interface OffsetPage<T> extends ListPage<T> {
  /** The page number asked for (the checkpoint of an offset walk). */
  page: number;
  /** The answer itself says nothing remains (no items, or this is `_meta.pageCount`'s last page). */
  done: boolean;
}

export interface RequestEvent {
  method: string;
  path: string;
  status: number;
  ms: number;
  cost: number;
}

export interface RetryEvent {
  attempt: number;
  delayMs: number;
  /** `network`, `timeout`, `status 503`, `malformed`, `unauthorized`. */
  reason: string;
  method: string;
  path: string;
}

export interface TokenEvent {
  expiresAt: Date;
}

export type ApiClientEvents = {
  wait: [WaitEvent];
  request: [RequestEvent];
  retry: [RetryEvent];
  token: [TokenEvent];
};

export interface ClientStats {
  /** Credits charged by call kind (a 429 is refunded: the server refuses before charging). */
  spent: LedgerSnapshot['spent'];
  /** The same with the total, for reports. */
  credits: LedgerSnapshot['spent'] & { total: number };
  creditsTotal: number;
  requests: number;
  retries: number;
  rejected429: number;
  waitMs: number;
  tokenRefreshes: number;
}
