/**
 * The engine: what one sync run decides and does. The planner (plan.ts, with each stream kind's rules in
 * stream-kinds.ts) turns the selected streams over their scopes into work items (work-item.ts), each one range of
 * the run's sync window (window.ts: the signpost, the cursors' watermarks, the items' range ends); the executor
 * (executor.ts) runs them under the credit budget; the walks (walk.ts, refresh.ts, delete-check.ts) read an item
 * each through the one page loop (page-loop.ts), which loads every page with its checkpoint; run.ts holds the run
 * together and records it. The warehouse answers every question about state.
 */
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
export { type RebuildOptions, RebuildRefused, type RebuildResult, rebuild } from './rebuild/rebuild.js';
export { MissingArchiveError, type ReplayProgress } from './rebuild/replay.js';
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
