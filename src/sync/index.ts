export { formatTimestamp } from './clock.js';
export { AccountMismatchError, SyncUsageError } from './errors.js';
export { type EventFilters, eventsInScope } from './event-scope.js';
export { LOWER_BOUND_WARNING, type PlanReport, planSync } from './plan-report.js';
export { runSync } from './run.js';
export type {
  ProgressEvent,
  StreamStats,
  SyncMode,
  SyncOptions,
  SyncResult,
  UnavailableReport,
  WalkMode,
} from './types.js';
