/** The DuckDB warehouse: public surface for the sync engine, the CLI and library users. */
export { newRunId, SCHEMA_VERSION } from './bookkeeping.js';
export {
  type JsonQueryResult,
  QueryRefusedError,
  type QueryResult,
  type ResultRow,
  type Sandbox,
  type ScalarJson,
} from './connection.js';
export { SYSTEM_COLUMNS } from './ddl.js';
export type { MarkMissingInput } from './deletes.js';
export { DatabaseInUseError, WarehouseError } from './errors.js';
export { ExportRefusedError } from './export-folder.js';
export type { Manifest as ExportManifest, ManifestFile as ExportManifestFile } from './export-manifest.js';
export type {
  CursorState,
  CursorWalk,
  CustomFieldLabel,
  ExportOptions,
  ExportResult,
  LoadPageInput,
  LoadResult,
  PartitionSelection,
  RunStreamSummary,
  RunSummary,
  ScopeRef,
} from './types.js';
export { VIEWS } from './views.js';
export { type OpenOptions, Warehouse } from './warehouse.js';
export { fits, widen } from './widen.js';
