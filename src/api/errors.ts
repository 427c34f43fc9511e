import type { FieldErrors } from '../../schemas/wire.js';
import { redact } from './redact.js';

export interface ApiErrorInit {
  status?: number;
  method: string;
  /** Path relative to the base URL, query included. Redacted on the way in. */
  path: string;
  /** The `name` member of the error body (`Not Found`), when the service sent one. */
  apiName?: string;
  /** The `code` member of the error body (0 for all standard errors). */
  code?: number;
  cause?: unknown;
}

/** A redacted stand-in for an underlying error: undici errors may carry request details we do not control. */
function safeCause(cause: unknown): Error | undefined {
  if (cause === undefined) return undefined;
  const source = cause instanceof Error ? cause : new Error(String(cause));
  const copy = new Error(redact(source.message));
  copy.name = source.name;
  const code = (source as { code?: unknown }).code;
  if (typeof code === 'string') Object.assign(copy, { code });
  copy.stack = redact(copy.stack ?? '');
  return copy;
}

/**
 * Base of every error the client throws. `name` is the class name (so `String(err)` says what happened);
 * the body's own `name` is `apiName`. Every text member goes through `redact`, so no secret leaves through an error.
 */
export class EvsyncApiError extends Error {
  readonly status: number | undefined;
  readonly method: string;
  readonly path: string;
  readonly apiName: string | undefined;
  readonly code: number | undefined;

  constructor(message: string, init: ApiErrorInit) {
    const cause = safeCause(init.cause);
    super(redact(message), cause ? { cause } : undefined);
    this.name = new.target.name;
    this.status = init.status;
    this.method = init.method;
    this.path = redact(init.path);
    this.apiName = init.apiName === undefined ? undefined : redact(init.apiName);
    this.code = init.code;
    // The stack embeds the message computed before redaction in some engines: rebuild it from the safe one.
    if (this.stack) this.stack = redact(this.stack);
  }

  /** Plain-data form for logs and `--json` output. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      status: this.status,
      method: this.method,
      path: this.path,
      apiName: this.apiName,
      code: this.code,
    };
  }
}

/** The service answered with an error status this client has no narrower class for (400, 405, 5xx after retries...). */
export class ApiError extends EvsyncApiError {}

/** 401 or 403 on the token call: the key/secret (or the pre-encoded string) are wrong for this base URL. */
export class CredentialsRejectedError extends ApiError {
  readonly baseUrl: string;
  constructor(message: string, init: ApiErrorInit & { baseUrl: string }) {
    super(message, init);
    this.baseUrl = redact(init.baseUrl);
  }
}

/** 401 again on a data call right after a fresh token. */
export class UnauthorizedError extends ApiError {}

/** 403: a valid token without access to this resource (another account, a missing scope). Never retried. */
export class ForbiddenError extends ApiError {}

/** 404: the resource does not exist, was deleted or is not accessible. */
export class NotFoundError extends ApiError {}

/** 422: validation errors on input fields; `fieldErrors` from the array body form or the single-object form. */
export class ValidationError extends ApiError {
  readonly fieldErrors: FieldErrors;
  constructor(message: string, init: ApiErrorInit & { fieldErrors: FieldErrors }) {
    super(message, init);
    this.fieldErrors = init.fieldErrors.map((e) => ({ ...e, field: redact(e.field), message: redact(e.message) }));
  }
  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), fieldErrors: this.fieldErrors };
  }
}

/** 429 kept coming back for one call beyond the bound (a well-behaved run sees no 429 at all). */
export class RateLimitedError extends ApiError {}

/** A 2xx whose body is not JSON or does not match the expected envelope, after the retries. */
export class MalformedResponseError extends EvsyncApiError {
  /** What was wrong, e.g. the zod issue path. */
  readonly detail: string;
  constructor(message: string, init: ApiErrorInit & { detail: string }) {
    super(message, init);
    this.detail = redact(init.detail);
  }
}

/** An answer larger than `maxResponseBytes`, refused while it streamed in (not retried: it would be as large). */
export class ResponseTooLargeError extends EvsyncApiError {}

/** No answer: connection refused or reset, DNS, TLS, a body cut short; after the retries. */
export class NetworkError extends EvsyncApiError {}

/** No headers within `timeouts.headersMs`, or the body not complete within `timeouts.bodyMs`; after the retries. */
export class TimeoutError extends EvsyncApiError {
  readonly phase: 'headers' | 'body';
  constructor(message: string, init: ApiErrorInit & { phase: 'headers' | 'body' }) {
    super(message, init);
    this.phase = init.phase;
  }
}

export type BudgetReason = 'run-budget' | 'max-wait' | 'lane-closed';

/**
 * Not a failure: the credits ran out for now. `run-budget`: the per-run cap would be exceeded (`remaining` = what is
 * left of it). `max-wait`: the window resets later than the caller may wait (`resetAt` = when it will,
 * `remaining` = credits left in the window). `lane-closed`: bulk work's lane closed (lane.ts: a daemon's catch-up
 * slice yields to the tick). The engine saves state and exits 3; nothing was sent for this call.
 */
export class BudgetExhaustedError extends EvsyncApiError {
  readonly reason: BudgetReason;
  readonly resetAt: Date | null;
  readonly needed: number;
  readonly remaining: number;
  constructor(
    message: string,
    init: ApiErrorInit & { reason: BudgetReason; resetAt: Date | null; needed: number; remaining: number },
  ) {
    super(message, init);
    this.reason = init.reason;
    this.resetAt = init.resetAt;
    this.needed = init.needed;
    this.remaining = init.remaining;
  }
  override toJSON(): Record<string, unknown> {
    return {
      ...super.toJSON(),
      reason: this.reason,
      resetAt: this.resetAt?.toISOString() ?? null,
      needed: this.needed,
      remaining: this.remaining,
    };
  }
}

/** Misuse of the client (bad base URL, too many ids): a programming or configuration error, thrown before sending. */
export class ApiUsageError extends TypeError {
  constructor(message: string) {
    super(redact(message));
    this.name = 'ApiUsageError';
  }
}
