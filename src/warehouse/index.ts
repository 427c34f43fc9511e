/** The DuckDB warehouse: public surface for the sync engine, the CLI and library users. */
export type { AccountRecord } from './account.js';
export { newRunId, SCHEMA_VERSION } from './bookkeeping.js';
export type {
  CaptureStore,
  CaptureStreamState,
  DeliveryStatus,
  JournaledDelivery,
  NewDelivery,
  Settlement,
  StoredVersion,
  StreamSettlement,
} from './capture.js';
export type { QueryResult, ResultRow, ScalarJson } from './connection.js';
export {
  COPY_FILE_OPTIONS,
  DEFAULT_MEMORY_LIMIT,
  type JsonQueryResult,
  LOAD_MEMORY_LIMIT,
  NEW_FILE_OPTIONS,
  QueryCancelledError,
  type QueryLimits,
  QueryRefusedError,
  QueryTooLargeError,
  type Sandbox,
} from './connection.js';
export type { CurrentRows } from './current-rows.js';
export type { Cursors } from './cursors.js';
export { SYSTEM_COLUMNS } from './ddl.js';
export type { MarkMissingInput } from './deletes.js';
export { DatabaseInUseError, WarehouseError } from './errors.js';
export type { Marks } from './marks.js';
export type { PendingPartition } from './publish-pending.js';
export { type QueryCopyWritten, removeQueryCopyLeftovers } from './query-copy.js';
export type { RunLog } from './run-log.js';
export type { WarehouseSide } from './side.js';
export { type SnapshotOptions, SnapshotRefusedError, type SnapshotResult } from './snapshot.js';
export { snapshotTargetProblem } from './snapshot-target.js';
export { utcNow } from './sql.js';
export type {
  AccountBinding,
  EventRow,
  EventSize,
  ExportOrigins,
  LedgerRecord,
  RunRecord,
  UnavailableStream,
} from './state.js';
export { statementRefusal } from './statement-check.js';
export {
  type CreditWindow,
  DELIVERY_BUCKET_MINUTES,
  type DeliveryBucket,
  type StatusHistory,
  type WallLag,
} from './status-history.js';
export type {
  CreditRow,
  CursorState,
  CursorWalk,
  ExportOptions,
  ExportResult,
  LoadPageInput,
  LoadResult,
  PartitionSelection,
  RunStreamSummary,
  RunSummary,
  ScopeRef,
} from './types.js';
export type { UnavailableStreams } from './unavailable.js';
export { AnalyticsViewsError, type AnalyticsViewsReport, VIEWS } from './views.js';
export { type ChangeListener, type OpenOptions, Warehouse } from './warehouse.js';
export { fits, widen } from './widen.js';
