/**
 * What the local folder and the lake share as outputs: one write's request and result, and the output held for
 * writing. `export`, `sync --parquet-out` and the daemon's publisher write either through these calls.
 */
import type { ExportResult } from '../warehouse/index.js';
import type { LakeExportResult } from './lake/export-lake.js';
import type { ParquetSource } from './lake/publish.js';
import type { TouchedPartitions } from './partition.js';

export type { ParquetSource };

export interface WriteRequest {
  /** Only these tables (default: the touched ones, else every table). */
  tables?: string[];
  /** Only these partitions; a table the output has nothing of yet is written whole. */
  touched?: TouchedPartitions;
  includeDeleted?: boolean;
  /** Write beside what evsync did not write (never removed). */
  force?: boolean;
  /** The run this write follows, recorded in each manifest. */
  runId?: string | null;
}

export type Written = { kind: 'folder'; report: ExportResult } | { kind: 'lake'; report: LakeExportResult };

/** An output taken for writing: a folder's owner record and lease, or the lake's store (each write leases the account). */
export interface OutputWriter {
  /** Of these tables, those the output holds nothing of yet (a daemon publishes them whole when it starts). */
  missingTables(tables: readonly string[]): string[];
  write(source: ParquetSource, request: WriteRequest): Promise<Written>;
  /** Gives the output back; a failure to is said, never thrown. */
  release(): Promise<void>;
}

/** The export's selection from a request: the named tables, or the touched ones, with their partitions. */
export function selectionOf(request: WriteRequest) {
  const touched = request.touched?.selection();
  const tables = request.tables ?? touched?.tables;
  return { ...(tables ? { tables } : {}), ...(touched ? { partitions: touched.partitions } : {}) };
}

/** Bytes a write put into the output (Parquet files written, or uploaded). */
export function bytesWritten(w: Written): number {
  return w.kind === 'folder' ? w.report.bytesWritten : w.report.uploaded.bytes;
}
