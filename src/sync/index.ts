export { formatTimestamp } from './clock.js';
export { CreditRecorder, type CreditRecorderOptions, DAEMON_CREDIT_LABEL } from './credit-recorder.js';
export { AccountMismatchError, SyncUsageError } from './errors.js';
export { type Eta, estimateEnd } from './eta.js';
export { type EventFilters, eventsInScope } from './event-scope.js';
export {
  LOWER_BOUND_WARNING,
  type PlanEstimate,
  type PlanOptions,
  type PlanReport,
  planSync,
  type RateLimitView,
} from './plan-report.js';
export { runSync } from './run.js';
export { type RunProgress, RunProgressTracker, type RunWait, type StreamProgress } from './run-progress.js';
export type {
  ProgressEvent,
  StreamStats,
  SyncMode,
  SyncOptions,
  SyncResult,
  UnavailableReport,
  WalkMode,
} from './types.js';
