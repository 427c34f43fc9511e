/** The DuckDB warehouse: public surface for the sync engine, the CLI and library users. */

export { Archive, type ArchiveRemote, type ArchiveStats, type EntryMeta } from './archive/archive.js';
export type { Op } from './archive/op-log.js';
export type { TableChange } from './archive/rebuilt-tables.js';
export { type QueryCopyWritten, removeQueryCopyLeftovers } from './copies/query-copy.js';
export type { WarehouseSide } from './copies/side.js';
export {
  SNAPSHOT_GRACE_MS,
  type SnapshotOptions,
  SnapshotRefusedError,
  type SnapshotResult,
} from './copies/snapshot.js';
export { snapshotTargetProblem } from './copies/snapshot-target.js';
export type { QueryResult, ResultRow, ScalarJson } from './db/connection.js';
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
} from './db/connection.js';
export { DatabaseInUseError, WarehouseError } from './db/errors.js';
export { utcNow } from './db/sql.js';
export { statementRefusal } from './db/statement-check.js';
export { CAPTURE_RUN_ID } from './history/versions.js';
export type {
  CaptureStore,
  CaptureStreamState,
  DeliveryStatus,
  JournaledDelivery,
  NewDelivery,
  Settlement,
  StoredVersion,
  StreamSettlement,
} from './journal/capture.js';
export { LAYOUT_VERSION, WarehouseLayoutError } from './layout/version.js';
export { SYSTEM_COLUMNS } from './load/ddl.js';
export type { LoadSession } from './load/session.js';
export { fits, widen } from './load/widen.js';
export type { AccountBinding, AccountRecord, ExportOrigins } from './state/account.js';
export { newRunId } from './state/bookkeeping.js';
export type { CurrentRows, EventRow, EventSize } from './state/current-rows.js';
export type { Cursors } from './state/cursors.js';
export { recordCustomFieldTypes } from './state/custom-field-types.js';
export type { MarkMissingInput } from './state/deletes.js';
export type { Marks } from './state/marks.js';
export type { Partition } from './state/publish-pending.js';
export type { RunLog } from './state/run-log.js';
export type { LedgerRecord, RunRecord } from './state/runs-sql.js';
export {
  type CreditWindow,
  DELIVERY_BUCKET_MINUTES,
  type DeliveryBucket,
  type StatusHistory,
  type WallLag,
} from './state/status-history.js';
export type { UnavailableStream, UnavailableStreams } from './state/unavailable.js';
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
export { AnalyticsViewsError, type AnalyticsViewsReport, VIEWS } from './views/views.js';
export { type ChangeListener, type OpenOptions, Warehouse } from './warehouse.js';
