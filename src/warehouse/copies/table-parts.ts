/**
 * A stream table, or the versions it no longer holds (`_history.<stream>`, CopiedTable below), cut into parts for
 * readers' copies, each part with a fingerprint of its rows, so that a copy is written again only where the warehouse
 * changed (issue 35): the snapshot's Parquet parts (snapshot.ts) and the Parquet outputs' event partitions (export.ts,
 * the history outputs from both fingerprints: export-unchanged.ts) compare the fingerprint they recorded with the
 * table's now.
 *
 * A part is the rows of one scope (an event of an event-scoped table, `event_id` null, or the whole table), cut
 * further into hash buckets of `id` when the scope holds more than `splitAbove` rows: one changed registrant of a
 * 400,000-registrant event then costs a bucket, not the event.
 *
 * The fingerprint is the part's row count, its latest `_synced_at`, and a sum of a hash of every row's
 * (`_synced_at`, `_run_id`, `_deleted_at`). Every write of a row sets `_synced_at` and `_run_id` (a page's merge, a
 * delete mark, a restore, a webhook's change: merge.ts leaves identical rows alone, so an unchanged page changes no
 * fingerprint), and a run's id is new: a row rewritten by another run changes the sum even when the clock did not
 * move. Reading it scans three system columns, not the data: on `large`'s registrants a small share of copying them.
 */

import { columnsOf } from '../db/columns.js';
import type { Db } from '../db/connection.js';
import { ident } from '../db/sql.js';
import { historyOff } from '../history/versions.js';

/**
 * A table copied for readers, named by an id: `<stream>`, the stream table (schema `main`), or `_history.<stream>`,
 * the versions it no longer holds (history/versions.ts). Both are cut into parts and fingerprinted alike: a kept
 * version carries the system columns of the row it was, and `_valid_from`.
 */
interface CopiedTable {
  id: string;
  schema: 'main' | '_history';
  /** The table's name in its schema (the stream's name). */
  name: string;
  /** Its SQL reference: `main."registrants"`, `_history."registrants"`. */
  ref: string;
}

export const HISTORY_SCHEMA = '_history';
const HISTORY_PREFIX = `${HISTORY_SCHEMA}.`;

/** The id of a stream's kept versions. */
export function historyId(stream: string): string {
  return `${HISTORY_PREFIX}${stream}`;
}

/** What an id names (see CopiedTable). */
export function copiedTable(id: string): CopiedTable {
  const history = id.startsWith(HISTORY_PREFIX);
  const name = history ? id.slice(HISTORY_PREFIX.length) : id;
  const schema = history ? HISTORY_SCHEMA : 'main';
  return { id, schema, name, ref: `${schema}.${ident(name)}` };
}

/**
 * Of the stream tables `tables`, those whose history readers' copies carry: `_history.<stream>` exists and the
 * stream's history is not off (the views are made for exactly these: history-views.ts).
 */
export async function keptHistories(db: Db, tables: readonly string[]): Promise<string[]> {
  const r = await db.query(
    `SELECT table_name FROM duckdb_tables()
      WHERE database_name = current_database() AND schema_name = '${HISTORY_SCHEMA}' AND NOT temporary`,
  );
  const held = new Set(r.rows.map((row) => String(row.table_name)));
  const off = await historyOff(db);
  return tables.filter((t) => held.has(t) && !off.has(t));
}

/** A scope above this many rows is cut into hash buckets of its ids (a power of two, each near this size or under). */
const PART_ROWS = 65_536;

export interface TablePart {
  /**
   * The part's name, stable while its scope and bucket count are: `e<event id>`, `n` (event_id null), `a` (a table
   * without event_id), followed by `.b<bucket>of<buckets>` when its scope is cut.
   */
  key: string;
  /** SQL condition selecting its rows from the table. */
  where: string;
  /** The event it holds (null: not one event). */
  eventId: number | null;
  rows: number;
  /** Changes whenever a row of the part is written, added or removed. */
  fingerprint: string;
}

interface Scope {
  eventId: number | null;
  /** The table has no event_id. */
  whole: boolean;
  rows: number;
  buckets: number;
}

function bucketsFor(rows: number, splitAbove: number, hasId: boolean): number {
  if (!hasId || !Number.isFinite(splitAbove) || rows <= splitAbove) return 1;
  return 2 ** Math.ceil(Math.log2(Math.ceil(rows / splitAbove)));
}

function scopeKey(s: Scope): string {
  return s.whole ? 'a' : s.eventId === null ? 'n' : `e${s.eventId}`;
}

function scopeWhere(s: Scope): string {
  return s.whole ? 'true' : s.eventId === null ? '"event_id" IS NULL' : `"event_id" = ${s.eventId}`;
}

/** The bucket of a row (0 for a scope that is not cut); `id`'s hash, so a row stays in its bucket. */
function bucketSql(scopes: readonly Scope[]): string {
  const cut = scopes.filter((s) => s.buckets > 1);
  if (cut.length === 0) return '0';
  const whens = cut.map((s) => `WHEN ${scopeWhere(s)} THEN hash("id") % ${s.buckets}`).join(' ');
  return `CASE ${whens} ELSE 0 END`;
}

/**
 * The parts of `table` as they are now, with their fingerprints (`splitAbove`: rows of a scope before it is cut;
 * Infinity keeps one part per scope, as the Parquet outputs' event folders are). A table with no row is one empty
 * part `a` (a reader still finds the table, with its columns). Read inside the caller's transaction so that what
 * it copies next is what was fingerprinted.
 */
export async function tableParts(db: Db, id: string, splitAbove = PART_ROWS): Promise<TablePart[]> {
  const copied = copiedTable(id);
  const columns = await columnsOf(db, copied.schema, copied.name);
  if (columns.size === 0) return [];
  const byEvent = columns.has('event_id');
  const hasId = columns.has('id');
  const t = copied.ref;
  // A kept version's row is never written again (versions are appended, a rebuild replaces the table): its
  // `_valid_from` joins the hash so that a replaced table with the same count tells.
  const hashed = [
    '"_synced_at"',
    '"_run_id"',
    '"_deleted_at"',
    ...(columns.has('_valid_from') ? ['"_valid_from"'] : []),
  ];
  const counted = await db.query(
    byEvent
      ? `SELECT "event_id" AS scope, count(*) AS n FROM ${t} GROUP BY ALL ORDER BY ALL`
      : `SELECT NULL AS scope, count(*) AS n FROM ${t}`,
  );
  const scopes: Scope[] = counted.rows
    .map((r) => ({
      eventId: r.scope === null || r.scope === undefined ? null : Number(r.scope),
      whole: !byEvent,
      rows: Number(r.n),
      buckets: 1,
    }))
    .filter((s) => s.rows > 0);
  if (scopes.length === 0) return [{ key: 'a', where: 'false', eventId: null, rows: 0, fingerprint: '0' }];
  for (const s of scopes) s.buckets = bucketsFor(s.rows, splitAbove, hasId);
  const scopeSql = byEvent ? '"event_id"' : 'NULL';
  const r = await db.query(
    `SELECT scope, bucket, count(*) AS n, CAST(max("_synced_at") AS VARCHAR) AS at,
            CAST(sum(CAST(h AS HUGEINT)) AS VARCHAR) AS h
       FROM (SELECT ${scopeSql} AS scope, ${bucketSql(scopes)} AS bucket, "_synced_at",
                    hash(${hashed.join(', ')}) AS h FROM ${t})
      GROUP BY ALL`,
  );
  const found = new Map<string, { n: number; at: unknown; h: unknown }>();
  for (const row of r.rows) {
    const scope = row.scope === null || row.scope === undefined ? null : Number(row.scope);
    found.set(`${scope}:${Number(row.bucket)}`, { n: Number(row.n), at: row.at, h: row.h });
  }
  const parts: TablePart[] = [];
  for (const s of scopes) {
    for (let b = 0; b < s.buckets; b++) {
      const f = found.get(`${s.eventId}:${b}`);
      // A bucket no id hashes into holds nothing: no part (a reader's union of the others is the scope).
      if (!f) continue;
      const cut = s.buckets > 1;
      parts.push({
        key: cut ? `${scopeKey(s)}.b${b}of${s.buckets}` : scopeKey(s),
        where: cut ? `${scopeWhere(s)} AND hash("id") % ${s.buckets} = ${b}` : scopeWhere(s),
        eventId: s.eventId,
        rows: f.n,
        fingerprint: `${f.n}|${String(f.at)}|${String(f.h)}`,
      });
    }
  }
  return parts;
}

/**
 * Each copied table's columns (or `only` that one's, by id) as one text (name and type, in order), read in one query,
 * by id (table-parts.ts CopiedTable: the `main` tables and the `_history` ones): parts written under another text are
 * all rewritten (a column added or widened writes no row, so no fingerprint sees it).
 */
export async function columnsSignatures(db: Db, only?: string): Promise<Map<string, string>> {
  const one = only === undefined ? null : copiedTable(only);
  const r = await db.query(
    `SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns()
      WHERE database_name = current_database() AND ${
        one ? 'schema_name = ? AND table_name = ?' : `schema_name IN ('main', '${HISTORY_SCHEMA}')`
      }
      ORDER BY schema_name, table_name, column_index`,
    one ? [one.schema, one.name] : [],
  );
  const columns = new Map<string, string[]>();
  for (const row of r.rows) {
    const name = String(row.table_name);
    const id = String(row.schema_name) === HISTORY_SCHEMA ? historyId(name) : name;
    columns.set(id, [...(columns.get(id) ?? []), `${String(row.column_name)} ${String(row.data_type)}`]);
  }
  return new Map([...columns].map(([id, list]) => [id, list.join(', ')]));
}

/** One copied table's columns signature (columnsSignatures), '' for a table that does not exist. */
export async function columnsSignature(db: Db, id: string): Promise<string> {
  return (await columnsSignatures(db, id)).get(id) ?? '';
}
