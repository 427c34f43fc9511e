import type { NormalizedRow, ResolvedStream, ScalarType } from '../../connectors/types.js';

/** Defined beside the code that enforces them (connection.ts); listed here with the other warehouse types. */
export type { JsonQueryResult, Sandbox } from './db/connection.js';

/**
 * Which slice of a stream's table a walk covers: `account` (the whole table), `event:12` (rows with event_id 12),
 * `data_list:5` (rows with data_list_id 5). `column` is the table column holding the scope id, null for account.
 */
export interface ScopeRef {
  key: string;
  column: string | null;
  value: number | null;
}

export interface LoadPageInput {
  stream: ResolvedStream;
  scope: ScopeRef;
  runId: string;
  /** Normalized rows; they may carry columns the table lacks (listed in `newColumns`, or inferred). */
  rows: NormalizedRow[];
  /** Schema evolution: columns to add (ALTER TABLE ADD COLUMN, recorded in `_evsync.schema_changes`). */
  newColumns?: Record<string, ScalarType>;
  /** Records that failed validation or normalization: kept in `_evsync.rejected` with the raw JSON. */
  rejected: { raw: unknown; reason: string }[];
  /** Ids seen by a snapshot or id sweep walk, recorded in `_evsync.seen` for `markMissing`. */
  seen?: { walkId: string; ids: number[] };
  /** Default true; false for id sweeps (only `seen`, `rejected` and the cursor are written). */
  upsert?: boolean;
  /** Saved in the same transaction as the rows it covers. */
  cursor?: CursorState;
  /** The archive entry holding the page's records (archive/archive.ts), logged with the page's op. */
  archiveEntry?: number | null;
  /**
   * Stage the page (true) or merge it at once (false) whatever sessions are open: a rebuild reproducing how the
   * live page loaded. Absent: staged when its run's load session is open.
   */
  stage?: boolean;
  /**
   * Versions older than the rows they name (a late or superseded webhook delivery): kept in the history alone
   * (history/observations.ts), never merged into the table. Merged at once, never staged.
   */
  observed?: boolean;
}

export interface LoadResult {
  inserted: number;
  updated: number;
  rejected: number;
  /** Rows whose key existed with identical values (and not deleted): left untouched. */
  unchanged?: number;
  /**
   * Rows staged for a later batch merge (pages of a run started with Warehouse.runs.start): not yet counted as
   * inserted, updated or unchanged; Warehouse.finishLoads reports them once merged.
   */
  staged?: number;
}

export interface CursorWalk {
  mode: 'incremental' | 'backfill' | 'snapshot' | 'sweep' | 'audit';
  walkId: string;
  from: string | null;
  to: string | null;
  lastKey: number | null;
  pages: number;
  rows: number;
}

export interface CursorState {
  stream: string;
  scope: string;
  /** `YYYY-MM-DD HH:MM:SS`: the next incremental window starts here (the committed high-water mark). */
  watermark: string | null;
  /** The walk in progress (resumed after a crash or a partial run), null when none is open. */
  walk: null | CursorWalk;
  /** Pages the last complete walk of this scope took (prices the next one). */
  lastPages: number | null;
  /** When the last complete delete sweep (or snapshot) finished. */
  lastSweepAt: string | null;
  updatedAt: string;
}

export interface RunStreamSummary {
  inserted: number;
  updated: number;
  deleted: number;
  rejected: number;
  pages: number;
  errors?: string[];
}

export interface RunSummary {
  status: 'done' | 'partial' | 'failed';
  finishedAt?: string;
  credits: Record<string, number>;
  requests: number;
  waitsMs: number;
  rejected429: number;
  streams: Record<string, RunStreamSummary>;
  error?: string | null;
}

/**
 * One row of `_evsync.credits`: the credit window as the service reported it (an answer's `X-Rate-Limit-*`), when
 * it said so, and the credits spent since the previous row of the same recorder. Rows come every few seconds while
 * answers come and at each run's end, from one-shot runs and the daemon alike: the latest is the window as the
 * service last reported it to anyone here, and the rows of a window give the credits used in it.
 */
export interface CreditRow {
  limit: number | null;
  remaining: number | null;
  /** When the window resets (the answer's arrival plus its Reset seconds); null when unknown. */
  resetAt: Date | null;
  /** When the answer arrived: the row's `recorded_at`. */
  seenAt: Date;
  /** Credits spent since the previous row of the same recorder (a window's rows add up to what evsync spent in it). */
  spent: number;
  /** Kept whole as the row's `snapshot` JSON: the run's credits by kind so far (a killed run keeps them), the window. */
  detail: Record<string, unknown>;
}

/** One partition set to rewrite: the shape `partitions` may also take in `exportParquet`. */
export interface PartitionSelection {
  table: string;
  eventIds: number[];
}

export interface ExportOptions {
  /** Output directory: `<out>/<table>/event_id=<id>/*.parquet` or `<out>/<table>/*.parquet`. */
  out: string;
  /** Stream tables to export (default: every stream table). */
  tables?: string[];
  /** Also rows whose `_deleted_at` is set (default: current rows only). */
  includeDeleted?: boolean;
  /**
   * Rewrite only these event partitions of these tables (their files are replaced); other partitions on disk stay
   * as they are. Tables without event_id are rewritten whole.
   */
  partitions?: Record<string, number[]> | PartitionSelection[];
  /** With `partitions`: a table with no folder of evsync's in the output yet is written whole (all its events). */
  newTablesWhole?: boolean;
  /** Write into a table folder evsync did not create, or beside files it did not write (never removed). */
  force?: boolean;
  /** The sync run this export follows, recorded in each manifest. */
  runId?: string | null;
  /**
   * Each exported stream's history beside it (`<out>/history/<table>/...`, copies/export-unchanged.ts): default
   * true. `tables` and `partitions` may also name a history alone, `history/<table>`.
   */
  history?: boolean;
}

export interface ExportResult {
  /** Parquet files on disk for the exported tables after the export (as their manifests list them). */
  files: number;
  tables: string[];
  /** Names the files this export wrote (`<exportId>_*.parquet`) and the manifests it updated. */
  exportId: string;
  /** Rows in each exported table's files after the export. */
  rows: Record<string, number>;
  /** Bytes of the Parquet files this export wrote (replaced partitions only). */
  bytesWritten: number;
  /** Files left beside the export with `force` (never removed), said once per folder. */
  warnings: string[];
  /** The histories exported (`history/<table>`), their rows (versions) and files after the export. */
  history?: { tables: string[]; rows: Record<string, number>; files: number };
}
