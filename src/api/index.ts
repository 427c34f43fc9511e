/** The API client layer: public surface. */
export { ApiClient } from './client.js';
export { formatApiTimestamp, parseApiTimestamp, parseHttpDate } from './clock.js';
export { type Credentials, credentialsFromEnv, encodeCredentials, urlencodeRfc1738 } from './credentials.js';
export {
  ApiError,
  type ApiErrorInit,
  ApiUsageError,
  BudgetExhaustedError,
  type BudgetReason,
  CredentialsRejectedError,
  EvsyncApiError,
  ForbiddenError,
  MalformedResponseError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  ResponseTooLargeError,
  TimeoutError,
  UnauthorizedError,
  ValidationError,
} from './errors.js';
export type { BulkLane } from './lane.js';
export {
  type CreditKind,
  CreditLedger,
  costOf,
  type LedgerSnapshot,
  type LedgerWait,
  type LimitReading,
  type WaitEvent,
} from './ledger.js';
export { idOf } from './pagination.js';
export type { ListQuery } from './query.js';
export { redact, registeredSecrets } from './redact.js';
export type * from './types.js';
export { type Answer, answerOf, type CallTraits, decide, isTransient, type Verdict } from './verdict.js';
