/**
 * The registry of staged pages (`_evsync.staged`): a page the sync engine loaded is committed as a file beside the
 * database plus one row here, in the same transaction as its cursor, and merged into its table later in a batch
 * with others (merge.ts). So the cursor never runs ahead of data the database holds, and a table is rewritten once
 * per batch instead of once per page. Until merged, a row here is part of the database's state: a process that
 * dies leaves them for the next open, which merges them first.
 */
import { z } from 'zod';
import type { ScalarType } from '../../../connectors/types.js';
import { isScalarType } from '../../../schemas/columns.js';
import type { Db } from '../db/connection.js';
import { utcNow } from '../db/sql.js';

export interface PageColumn {
  name: string;
  type: ScalarType;
}

/** What merging a page file needs: where it is, its columns as written, and what the rows get besides them. */
export interface PageFile {
  /** Merge order: a later page's row replaces an earlier page's row of the same key. */
  seq: number;
  stream: string;
  /** The scope key (`event:12`), for records of the page that end up in `_evsync.rejected`. */
  scope: string;
  /** File name in the staging directory. */
  file: string;
  rows: number;
  /** Every column the page carries, with its type: a column left out here keeps its stored value in the table. */
  columns: PageColumn[];
  /** Of those, the ones null in every row of the page: the file leaves them out. */
  nulls: string[];
  key: string[];
  /** The rows' keys, for a single integer key (null otherwise): a merge finds existing keys without the file. */
  keys: number[] | null;
  /** The run that loaded the page: its rows' `_run_id`. */
  runId: string;
  /** The walk that read it (seen ids' walk, else the cursor's), if any: see Warehouse.markMissing. */
  walkId: string | null;
  /** The event partition its rows land in (publish-pending.ts partitionOf), null for the whole table. */
  eventId: number | null;
  /** The page's op in `_evsync.archive_ops` (null: registered before the op log, or with it off). */
  op: number | null;
}

/** Which registered pages to take: of a stream, of one scope of it, leaving out one walk's pages. */
export interface StagedFilter {
  stream?: string;
  scope?: string;
  exceptWalk?: string;
  /** Only the pages of these ops (a rebuild merging what a logged merge took). */
  ops?: readonly number[];
}

const pageSpec = z.object({
  columns: z.array(z.tuple([z.string(), z.custom<ScalarType>((v) => typeof v === 'string' && isScalarType(v))])),
  nulls: z.array(z.string()),
  key: z.array(z.string()).min(1),
  // Absent in pages registered before it was recorded: those count as the whole table's.
  event: z.number().int().nullable().optional(),
  // Absent in pages registered before the op log (archive/op-log.ts).
  op: z.number().int().nullable().optional(),
});

const keyList = z.array(z.number().int()).nullable();

const REGISTER_SQL = `INSERT INTO _evsync.staged
  (seq, stream, scope, file, row_count, page, keys, run_id, walk_id, staged_at)
  VALUES (nextval('_evsync.staged_seq'), $1, $2, $3, $4, $5, $6, $7, $8, CAST($9 AS TIMESTAMP))`;

/** Registers a written, synced page file; call inside the page's transaction. */
export async function registerPage(db: Db, page: Omit<PageFile, 'seq'>): Promise<void> {
  const spec = {
    columns: page.columns.map((c) => [c.name, c.type]),
    nulls: page.nulls,
    key: page.key,
    event: page.eventId,
    op: page.op,
  };
  await db.runPrepared(REGISTER_SQL, [
    page.stream,
    page.scope,
    page.file,
    page.rows,
    JSON.stringify(spec),
    page.keys === null ? null : JSON.stringify(page.keys),
    page.runId,
    page.walkId,
    utcNow(db.now),
  ]);
}

/** Registered pages in merge order. */
export async function stagedPages(db: Db, filter: StagedFilter = {}): Promise<PageFile[]> {
  const where: string[] = [];
  const params: string[] = [];
  if (filter.stream !== undefined) {
    where.push('stream = ?');
    params.push(filter.stream);
  }
  if (filter.scope !== undefined) {
    where.push('scope = ?');
    params.push(filter.scope);
  }
  if (filter.exceptWalk !== undefined) {
    where.push('walk_id IS DISTINCT FROM ?');
    params.push(filter.exceptWalk);
  }
  if (filter.ops !== undefined) {
    where.push(
      `CAST(json_extract(page, '$.op') AS BIGINT) IN (${filter.ops.map((o) => Math.trunc(o)).join(',') || 'NULL'})`,
    );
  }
  const r = await db.query(
    `SELECT seq, stream, scope, file, row_count, CAST(page AS VARCHAR) AS page, keys, run_id, walk_id
       FROM _evsync.staged ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq`,
    params,
  );
  return r.rows.map((row) => {
    const spec = pageSpec.parse(JSON.parse(String(row.page)));
    return {
      seq: Number(row.seq),
      stream: String(row.stream),
      scope: String(row.scope),
      file: String(row.file),
      rows: Number(row.row_count),
      columns: spec.columns.map(([name, type]) => ({ name, type })),
      nulls: spec.nulls,
      key: spec.key,
      keys: keyList.parse(row.keys === null ? null : JSON.parse(String(row.keys))),
      runId: String(row.run_id ?? ''),
      walkId: row.walk_id === null ? null : String(row.walk_id),
      eventId: spec.event ?? null,
      op: spec.op ?? null,
    };
  });
}

/** Drops registrations once their pages are merged (same transaction as the merge). */
export async function unregister(db: Db, pages: readonly PageFile[]): Promise<void> {
  if (pages.length === 0) return;
  await db.run(`DELETE FROM _evsync.staged WHERE seq IN (${pages.map((p) => Math.trunc(p.seq)).join(', ')})`);
}
