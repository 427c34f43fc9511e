/**
 * Merging what `_evsync.staged` registers: each stream's staged pages in one batch and one transaction (merge +
 * unregister, and for a warehouse that publishes, the partitions owed to readers), then their files are removed. A
 * batch that fails on a value is retried page by page; a page whose values its table refuses (normalizer output,
 * which its columns take by construction) has its rows moved to `_evsync.rejected` with DuckDB's reason instead of
 * blocking every later merge, since its cursor has moved on.
 */
import { readFile } from 'node:fs/promises';
import type { OpLog } from '../archive/op-log.js';
import type { Db } from '../db/connection.js';
import { WarehouseError } from '../db/errors.js';
import { utcNow } from '../db/sql.js';
import { distinctPartitions, owePartitions, type Partition } from '../state/publish-pending.js';
import { recordRejected } from '../state/rejected.js';
import { readTableColumns } from './ddl.js';
import { type CountsByRun, type MergeCounts, mergePages } from './merge.js';
import type { Staging } from './stage.js';
import { type PageFile, type StagedFilter, stagedPages, unregister } from './staged.js';

export type { MergeCounts };

interface StreamCounts {
  runId: string;
  stream: string;
  counts: MergeCounts;
}

type Timer = (step: string, since: number) => number;

/** What a merge of staged pages did: counts per run and stream, the partitions it changed, the rows it took. */
export interface StagedMerge {
  counts: StreamCounts[];
  /** Partitions whose pages were merged into their table (their changes are committed). */
  partitions: Partition[];
  /** Rows of the pages taken off the registry, per stream (merged or moved to `_evsync.rejected`). */
  rows: Map<string, number>;
}

interface MergeStagedOptions {
  time: Timer;
  /** Runs first when there are pages: a merge is part of a load, and holds DuckDB to the load's memory limit. */
  loading: () => Promise<void>;
  /** Record the merged partitions as owed to readers, in the merge's transaction (a warehouse that publishes). */
  owe: boolean;
  /** Where each batch is logged, with its pages and time, in its transaction (archive/op-log.ts). */
  ops: OpLog;
}

function partitionsOf(pages: readonly PageFile[]): Partition[] {
  return distinctPartitions(pages.map((p) => ({ table: p.stream, eventId: p.eventId })));
}

/** DuckDB's errors about a value (as opposed to memory, disk or a bug): the ones a page can be blamed for. */
const VALUE_ERROR = /^(Conversion Error|Invalid Input Error|Out of Range Error)/;

async function mergeBatch(db: Db, staging: Staging, stream: string, pages: PageFile[], o: MergeStagedOptions) {
  return db.transaction(async () => {
    const columns = await readTableColumns(db, stream);
    if (!columns) throw new WarehouseError(`staged pages of ${stream} cannot be merged: the table is gone`);
    const at = utcNow(db.now);
    const target = { table: stream, columns, pathOf: (f: string) => staging.path(f), time: o.time, at };
    const counts = await mergePages(db, pages, target);
    const ops = pages.map((p) => p.op).filter((op): op is number => op !== null);
    await o.ops.log(db, { kind: 'merge', stream, runId: null, entry: null, detail: { pages: ops } }, at);
    await unregister(db, pages);
    if (o.owe) await owePartitions(db, partitionsOf(pages));
    return counts;
  });
}

async function quarantine(db: Db, staging: Staging, page: PageFile, err: Error): Promise<void> {
  let rows: unknown[] = [];
  try {
    const parsed: unknown = JSON.parse(await readFile(staging.path(page.file), 'utf8'));
    if (Array.isArray(parsed)) rows = parsed;
  } catch {
    // Unreadable: one record says so below.
  }
  const reason = `staged page could not be merged: ${err.message.slice(0, 500)}`;
  const rejected = rows.length > 0 ? rows.map((raw) => ({ raw, reason })) : [{ raw: { file: page.file }, reason }];
  await db.transaction(async () => {
    await recordRejected(db, page.runId, page.stream, page.scope, rejected);
    await unregister(db, [page]);
  });
}

function toList(stream: string, counts: CountsByRun): StreamCounts[] {
  return [...counts].map(([runId, c]) => ({ runId, stream, counts: c }));
}

export function emptyStagedMerge(): StagedMerge {
  return { counts: [], partitions: [], rows: new Map() };
}

/**
 * Merges the staged pages `filter` selects, a stream per transaction; adds to `out` what each stream's merge did, per
 * run and stream, and where, as it commits (so a caller keeps what committed before a later stream's merge failed).
 */
export async function mergeStaged(
  db: Db,
  staging: Staging,
  filter: StagedFilter,
  o: MergeStagedOptions,
  out: StagedMerge = emptyStagedMerge(),
): Promise<StagedMerge> {
  const pages = await stagedPages(db, filter);
  if (pages.length === 0) return out;
  await o.loading();
  const byStream = new Map<string, PageFile[]>();
  for (const p of pages) {
    const list = byStream.get(p.stream) ?? [];
    list.push(p);
    byStream.set(p.stream, list);
  }
  for (const [name, list] of byStream) {
    const merged = await mergeStream(db, staging, name, list, o);
    out.counts.push(...merged.counts);
    out.partitions.push(...merged.partitions);
    out.rows.set(
      name,
      list.reduce((n, p) => n + p.rows, 0),
    );
    await staging.remove(list.map((p) => p.file));
  }
  return out;
}

/** One stream's pages: in one batch, or page by page when a value fails the batch (see the file's comment). */
async function mergeStream(
  db: Db,
  staging: Staging,
  name: string,
  list: PageFile[],
  o: MergeStagedOptions,
): Promise<{ counts: StreamCounts[]; partitions: Partition[] }> {
  try {
    return { counts: toList(name, await mergeBatch(db, staging, name, list, o)), partitions: partitionsOf(list) };
  } catch (err) {
    // Only a value DuckDB refuses is a page's fault. Anything else (memory, disk) fails the merge as it is: its
    // transaction rolled back, the pages stay registered for the next merge. (Retrying right after an out-of-
    // memory append once left DuckDB 1.5 with a corrupted in-memory column at the next checkpoint.)
    if (!(err instanceof Error && VALUE_ERROR.test(err.message))) throw err;
  }
  const counts: StreamCounts[] = [];
  const merged: PageFile[] = [];
  for (const page of list) {
    try {
      counts.push(...toList(name, await mergeBatch(db, staging, name, [page], o)));
      merged.push(page);
    } catch (one) {
      if (!(one instanceof Error && VALUE_ERROR.test(one.message))) throw one;
      await quarantine(db, staging, page, one);
    }
  }
  return { counts, partitions: partitionsOf(merged) };
}
