/**
 * evsync as a library: the same operations as the CLI, typed. Talk to the service (ApiClient), keep the warehouse
 * (Warehouse), sync within the credit budget (runSync, planSync), pick streams from the catalogue. Importing it
 * loads neither the command line (commander) nor the simulator: that one is `evsync/simulator`.
 *
 * @example
 *   import { ApiClient, Warehouse, runSync } from 'evsync';
 *   const client = new ApiClient({ baseUrl, credentials: { clientId, clientSecret } });
 *   const warehouse = await Warehouse.open('./evsync.duckdb');
 *   const result = await runSync(client, warehouse, { mode: 'incremental', streams: 'core' });
 */
export {
  catalogue,
  customFieldsFromDefinitions,
  getStream,
  hasStream,
  type ResolvedStream,
  resolveStream,
  STREAM_SETS,
  type StreamDefinition,
  type StreamOverride,
  selectStreams,
} from '../connectors/index.js';
export { configSchema, type EvsyncConfig } from '../schemas/config.js';
export * from './api/index.js';
export * from './daemon/index.js';
export * from './outputs/index.js';
export {
  Applier,
  type ApplierOptions,
  CaptureMetrics,
  type CaptureOptions,
  createReceiver,
  describeWait,
  installWebhooks,
  parseDelivery,
  type Receiver,
  type ReceiverOptions,
  type RunningCapture,
  removeWebhooks,
  startCapture,
  type WaitState,
  type WebhookSetup,
  webhookStatus,
} from './sync/capture/index.js';
export {
  AccountMismatchError,
  formatTimestamp,
  type PlanReport,
  type ProgressEvent,
  planSync,
  type RebuildOptions,
  RebuildRefused,
  type RebuildResult,
  rebuild,
  runSync,
  type StreamStats,
  type SyncMode,
  type SyncOptions,
  type SyncResult,
  SyncUsageError,
  type UnavailableReport,
  type WalkMode,
} from './sync/index.js';
export {
  type CursorState,
  DatabaseInUseError,
  type ExportOptions,
  type ExportResult,
  type OpenOptions,
  type PartitionSelection,
  type QueryResult,
  type ScopeRef,
  type SnapshotOptions,
  SnapshotRefusedError,
  type SnapshotResult,
  Warehouse,
  WarehouseError,
  type WarehouseSide,
} from './warehouse/index.js';
