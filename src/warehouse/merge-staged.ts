/**
 * Merging what `_evsync.staged` registers: each stream's staged pages in one batch and one transaction (merge +
 * unregister), then their files are removed. A batch that fails on a value is retried page by page; a page whose
 * values its table refuses (normalizer output, which its columns take by construction) has its rows moved to
 * `_evsync.rejected` with DuckDB's reason instead of blocking every later merge, since its cursor has moved on.
 */
import { readFile } from 'node:fs/promises';
import { recordRejected } from './bookkeeping.js';
import type { Db } from './connection.js';
import { readTableColumns } from './ddl.js';
import { WarehouseError } from './errors.js';
import { type CountsByRun, type MergeCounts, mergePages } from './merge.js';
import type { Staging } from './stage.js';
import { type PageFile, type StagedFilter, stagedPages, unregister } from './staged.js';

export type { CountsByRun, MergeCounts };

export interface StreamCounts {
  runId: string;
  stream: string;
  counts: MergeCounts;
}

type Timer = (step: string, since: number) => number;

/** DuckDB's errors about a value (as opposed to memory, disk or a bug): the ones a page can be blamed for. */
const VALUE_ERROR = /^(Conversion Error|Invalid Input Error|Out of Range Error)/;

async function mergeBatch(db: Db, staging: Staging, stream: string, pages: PageFile[], time: Timer) {
  return db.transaction(async () => {
    const columns = await readTableColumns(db, stream);
    if (!columns) throw new WarehouseError(`staged pages of ${stream} cannot be merged: the table is gone`);
    const counts = await mergePages(db, pages, { table: stream, columns, pathOf: (f) => staging.path(f), time });
    await unregister(db, pages);
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

/**
 * Merges the staged pages `filter` selects; returns what they did, per run and stream. `loading` runs first when
 * there are pages: a merge is part of a load, and holds DuckDB to the load's memory limit (Warehouse).
 */
export async function mergeStaged(
  db: Db,
  staging: Staging,
  filter: StagedFilter,
  time: Timer,
  loading: () => Promise<void>,
): Promise<StreamCounts[]> {
  const pages = await stagedPages(db, filter);
  if (pages.length === 0) return [];
  await loading();
  const byStream = new Map<string, PageFile[]>();
  for (const p of pages) {
    const list = byStream.get(p.stream) ?? [];
    list.push(p);
    byStream.set(p.stream, list);
  }
  const out: StreamCounts[] = [];
  for (const [name, list] of byStream) {
    try {
      out.push(...toList(name, await mergeBatch(db, staging, name, list, time)));
    } catch (err) {
      // Only a value DuckDB refuses is a page's fault. Anything else (memory, disk) fails the merge as it is: its
      // transaction rolled back, the pages stay registered for the next merge. (Retrying right after an out-of-
      // memory append once left DuckDB 1.5 with a corrupted in-memory column at the next checkpoint.)
      if (!(err instanceof Error && VALUE_ERROR.test(err.message))) throw err;
      for (const page of list) {
        try {
          out.push(...toList(name, await mergeBatch(db, staging, name, [page], time)));
        } catch (one) {
          if (!(one instanceof Error && VALUE_ERROR.test(one.message))) throw one;
          await quarantine(db, staging, page, one);
        }
      }
    }
    await staging.remove(list.map((p) => p.file));
  }
  return out;
}
