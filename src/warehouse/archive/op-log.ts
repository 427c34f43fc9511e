/**
 * The op log (`_evsync.archive_ops`): every write to a stream table, in the order it committed, each logged in the
 * transaction of the write itself, so the log holds exactly what the tables hold. A rebuild (src/sync/rebuild/)
 * replays it from the archive's bodies and gets the same tables, `_synced_at` and `_run_id` included, because each
 * op carries what its write took from outside the rows:
 *
 * - `page`: a page loaded (a polled page, a webhook's records, a re-read): the archive entry holding its records,
 *   its scope, the walk that saw it, and whether it was staged for a later merge or merged at once (at `at`);
 * - `merge`: staged pages merged into their table in one batch at `at` (the rows' `_synced_at`), by their page ops;
 * - `missing`: a completed walk's delete detection (Warehouse.markMissing): `at` is the write's time, the detail
 *   holds the deletion time and the rows it compared;
 * - `deleted`: rows a webhook said were deleted, each with its time;
 * - `stamped`: rows a rebuild changed, given the rebuild's run and time (so the next rebuild gives them again).
 *
 * Merges are logged with the exact pages they took: a batch leaves a row that ends equal to its stored value alone,
 * so a replay merging other batches could differ in `_synced_at` where a record changed and changed back.
 */
import { z } from 'zod';
import type { Db } from '../db/connection.js';
import { utcNow } from '../db/sql.js';

/** Db.memo's key for the seq the next op gets. */
const NEXT_SEQ = 'archive_ops.next_seq';

export const OP_LOG_DDL = [
  `CREATE TABLE IF NOT EXISTS _evsync.archive_ops (
     seq BIGINT NOT NULL, kind VARCHAR NOT NULL, stream VARCHAR NOT NULL, run_id VARCHAR, written_at TIMESTAMP NOT NULL,
     entry BIGINT, detail VARCHAR NOT NULL)`,
];

const scopeSchema = z.object({ key: z.string(), column: z.string().nullable(), value: z.number().int().nullable() });

const pageDetail = z.object({
  scope: scopeSchema,
  /** The walk whose seen ids the page recorded (delete detection), if any. */
  walk: z.string().nullable(),
  idsOnly: z.boolean(),
  staged: z.boolean(),
  /** Versions kept in the history alone (history/observations.ts); absent for every other page. */
  observed: z.boolean().optional(),
});
const mergeDetail = z.object({ pages: z.array(z.number().int()) });
const missingDetail = z.object({
  scope: scopeSchema,
  walk: z.string(),
  deletedAt: z.string(),
  within: z.object({ column: z.string(), values: z.array(z.number().int()) }).nullable(),
});
const deletedDetail = z.object({ rows: z.array(z.tuple([z.number().int(), z.string()])) });
const stampedDetail = z.object({ key: z.array(z.string()), rows: z.array(z.array(z.unknown())) });

type PageOpDetail = z.infer<typeof pageDetail>;
type MissingOpDetail = z.infer<typeof missingDetail>;

type OpInput =
  | { kind: 'page'; stream: string; runId: string; entry: number | null; detail: PageOpDetail }
  | { kind: 'merge'; stream: string; runId: null; entry: null; detail: { pages: number[] } }
  | { kind: 'missing'; stream: string; runId: string; entry: null; detail: MissingOpDetail }
  | { kind: 'deleted'; stream: string; runId: string; entry: null; detail: { rows: [number, string][] } }
  | { kind: 'stamped'; stream: string; runId: string; entry: null; detail: z.infer<typeof stampedDetail> };

export type Op = OpInput & { seq: number; at: string };

/** What a writer logs its writes through: the warehouse's one op log (or none for a read-only open). */
export class OpLog {
  /**
   * Set by a replay before each op it reproduces: the writes log that op's seq, so a replay's own log says how far
   * it got (a killed rebuild resumes after the last op it committed).
   */
  replaying: number | null = null;

  constructor(readonly enabled: boolean) {}

  /**
   * Logs one write, in the caller's transaction; returns its seq (0 when the log is off). `at` is the time the write
   * stamped on its rows (`_synced_at`): a replay's clock gives it back.
   */
  async log(db: Db, op: OpInput, at: string = utcNow(db.now)): Promise<number> {
    if (!this.enabled) return 0;
    // The next seq is read once and then kept (Db.memo): a `max(seq)` per page cost a round trip per page. Only this
    // method writes the log, so the kept value stays right; a rollback clears it, and a replay's seq (from the
    // live log) leaves it to be read again.
    const seq = this.replaying ?? db.memo.get(NEXT_SEQ) ?? (await lastOpSeq(db)) + 1;
    await db.runPrepared(`INSERT INTO _evsync.archive_ops VALUES ($1, $2, $3, $4, CAST($5 AS TIMESTAMP), $6, $7)`, [
      seq,
      op.kind,
      op.stream,
      op.runId,
      at,
      op.entry,
      JSON.stringify(op.detail),
    ]);
    if (this.replaying === null) db.memo.set(NEXT_SEQ, seq + 1);
    else db.memo.delete(NEXT_SEQ);
    return seq;
  }
}

function parseOp(row: Record<string, unknown>): Op {
  const base = {
    seq: Number(row.seq),
    stream: String(row.stream),
    at: String(row.at),
  };
  const detail: unknown = JSON.parse(String(row.detail));
  const runId = row.run_id === null ? null : String(row.run_id);
  const entry = row.entry === null ? null : Number(row.entry);
  switch (row.kind) {
    case 'page':
      return { ...base, kind: 'page', runId: runId ?? '', entry, detail: pageDetail.parse(detail) };
    case 'merge':
      return { ...base, kind: 'merge', runId: null, entry: null, detail: mergeDetail.parse(detail) };
    case 'missing':
      return { ...base, kind: 'missing', runId: runId ?? '', entry: null, detail: missingDetail.parse(detail) };
    case 'deleted':
      return { ...base, kind: 'deleted', runId: runId ?? '', entry: null, detail: deletedDetail.parse(detail) };
    case 'stamped':
      return { ...base, kind: 'stamped', runId: runId ?? '', entry: null, detail: stampedDetail.parse(detail) };
    default:
      throw new Error(`_evsync.archive_ops ${base.seq}: unknown kind ${String(row.kind)}`);
  }
}

/** Ops after `afterSeq`, in order, at most `limit` (a replay reads the log a window at a time). */
export async function readOps(db: Db, afterSeq: number, limit: number, streams?: readonly string[]): Promise<Op[]> {
  const only = streams ? `AND stream IN (SELECT unnest(from_json(CAST($3 AS JSON), '["VARCHAR"]')))` : '';
  const r = await db.query(
    `SELECT seq, kind, stream, run_id, strftime(written_at, '%Y-%m-%d %H:%M:%S.%g') AS at, entry, detail
       FROM _evsync.archive_ops WHERE seq > $1 ${only} ORDER BY seq LIMIT $2`,
    streams ? [afterSeq, limit, JSON.stringify(streams)] : [afterSeq, limit],
  );
  return r.rows.map(parseOp);
}

/** The first archive entry a page op of `streams` refers to (null: none). */
export async function firstPageEntry(db: Db, streams: readonly string[]): Promise<number | null> {
  const r = await db.query(
    `SELECT min(entry) AS e FROM _evsync.archive_ops
      WHERE kind = 'page' AND stream IN (SELECT unnest(from_json(CAST($1 AS JSON), '["VARCHAR"]')))`,
    [JSON.stringify(streams)],
  );
  const e = r.rows[0]?.e;
  return e === null || e === undefined ? null : Number(e);
}

/** The streams the log has ops of. */
export async function loggedStreams(db: Db): Promise<string[]> {
  const r = await db.query(`SELECT DISTINCT stream FROM _evsync.archive_ops ORDER BY stream`);
  return r.rows.map((row) => String(row.stream));
}

/** The last op a log holds (0 for none): where a replay stands. */
export async function lastOpSeq(db: Db): Promise<number> {
  const r = await db.query(`SELECT coalesce(max(seq), 0) AS n FROM _evsync.archive_ops`);
  return Number(r.rows[0]?.n ?? 0);
}
