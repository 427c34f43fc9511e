import { parseJsonExact } from '../../normalizer/exact-json.js';
import { errorBodySchema, type FieldErrors, fieldErrorsSchema, listEnvelopeSchema } from '../../schemas/wire.js';
import {
  ApiError,
  type ApiErrorInit,
  CredentialsRejectedError,
  ForbiddenError,
  NotFoundError,
  RateLimitedError,
  UnauthorizedError,
  ValidationError,
} from './errors.js';
import { type Exchange, intHeader } from './http.js';
import type { RateLimitHeaders } from './ledger.js';
import type { PageMeta } from './types.js';

/** A 2xx body that is not what was expected: retried like a network fault (a proxy or a cut body may cause it). */
export class MalformedBody extends Error {
  constructor(readonly detail: string) {
    super(detail);
    this.name = 'MalformedBody';
  }
}

export function rateLimitHeaders(ex: Exchange): RateLimitHeaders {
  return {
    limit: intHeader(ex.headers, 'x-rate-limit-limit'),
    remaining: intHeader(ex.headers, 'x-rate-limit-remaining'),
    resetSeconds: intHeader(ex.headers, 'x-rate-limit-reset'),
  };
}

/** JSON.parse of the whole text (faster than streaming JSON); empty text is null. */
export function parseJson(text: string): unknown {
  if (text.trim() === '') return null;
  try {
    // Exact: integers past 2^53 (and numbers a double cannot hold) keep their digits as text.
    return parseJsonExact(text);
  } catch (err) {
    throw new MalformedBody(`invalid JSON (${(err as Error).message}; ${text.length} bytes)`);
  }
}

/**
 * The list envelope, validated. A body without `_meta` is accepted only when the X-Pagination headers say the same
 * thing; anything else is malformed (paging on a guess loses or repeats rows).
 */
export function parseListEnvelope(ex: Exchange): { items: Record<string, unknown>[]; meta: PageMeta } {
  const body = parseJson(ex.text);
  if (body && typeof body === 'object' && !Array.isArray(body) && !('_meta' in body)) {
    const meta = metaFromHeaders(ex);
    if (meta) return pickEnvelope({ ...body, _meta: meta });
  }
  return pickEnvelope(body);
}

function pickEnvelope(body: unknown): { items: Record<string, unknown>[]; meta: PageMeta } {
  const parsed = listEnvelopeSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'not a list envelope';
    throw new MalformedBody(`list envelope invalid at ${where}`);
  }
  const { totalCount, pageCount, currentPage, perPage } = parsed.data._meta;
  return { items: parsed.data.items, meta: { totalCount: totalCount ?? null, pageCount, currentPage, perPage } };
}

function metaFromHeaders(ex: Exchange): PageMeta | null {
  const totalCount = intHeader(ex.headers, 'x-pagination-total-count');
  const pageCount = intHeader(ex.headers, 'x-pagination-page-count');
  const currentPage = intHeader(ex.headers, 'x-pagination-current-page');
  const perPage = intHeader(ex.headers, 'x-pagination-per-page');
  if (pageCount === undefined || currentPage === undefined || perPage === undefined) return null;
  return { totalCount: totalCount ?? null, pageCount, currentPage, perPage };
}

interface ErrorContext {
  method: string;
  path: string;
  baseUrl: string;
  tokenCall: boolean;
}

/** The typed error for a non-2xx answer, from its status and body (object form or the 422 array form). */
export function httpError(exchange: Exchange, ctx: ErrorContext): ApiError {
  let body: unknown = null;
  try {
    body = parseJson(exchange.text);
  } catch {
    // An HTML error page from a proxy: keep the status, drop the body.
  }
  const fields: FieldErrors = [];
  let apiName: string | undefined;
  let message: string | undefined;
  let code: number | undefined;
  const asArray = fieldErrorsSchema.safeParse(body);
  if (asArray.success) {
    fields.push(...asArray.data);
    message = asArray.data.map((e) => `${e.field}: ${e.message}`).join('; ');
  } else {
    const asObject = errorBodySchema.safeParse(body);
    if (asObject.success) {
      ({ name: apiName, message, code } = asObject.data);
      // Some validation answers wrap the array: {"message": ..., "errors": [{field, message}]}.
      const nested = fieldErrorsSchema.safeParse((body as { errors?: unknown }).errors);
      if (nested.success) fields.push(...nested.data);
    }
  }
  const status = exchange.status;
  const init: ApiErrorInit = { status, method: ctx.method, path: ctx.path, apiName, code };
  const what = `${ctx.method} ${ctx.path} -> HTTP ${status}${apiName ? ` ${apiName}` : ''}${message ? `: ${message}` : ''}`;

  if (ctx.tokenCall && (status === 401 || status === 403)) {
    return new CredentialsRejectedError(
      `credentials rejected by ${ctx.baseUrl} (HTTP ${status}${message ? `: ${message}` : ''}); check the client id and secret or the pre-encoded credentials`,
      { ...init, baseUrl: ctx.baseUrl },
    );
  }
  switch (status) {
    case 401:
      return new UnauthorizedError(`${what} (again after a fresh token)`, init);
    case 403:
      return new ForbiddenError(what, init);
    case 404:
      return new NotFoundError(what, init);
    case 422:
      return new ValidationError(what, { ...init, fieldErrors: fields });
    case 429:
      return new RateLimitedError(what, init);
    default:
      return new ApiError(what, init);
  }
}
