/**
 * `src/warehouse/history/`: the history of every record (versions.ts, history-views.ts).
 *
 * A stream table holds each record's current version; `_history.<stream>` holds every version it no longer holds:
 * the stream table's columns as they were (system columns included) plus `_valid_from`, when that version began.
 * A version is kept at the one moment a write replaces or marks a current row (merge.ts's changed rows,
 * deletes.ts's marks and restores, capture-rows.ts's webhook deletes), in that write's transaction, so the history
 * holds exactly what the table held, whatever brought the change (poll, webhook, sweep, rebuild's replay). A write
 * that finds a row unchanged leaves it alone and so keeps nothing: unchanged syncs add no version.
 *
 * Nothing is stored twice: a record never changed has no row here, its one version is its current row
 * (history-views.ts joins the two). `_valid_to`, whether a version follows its predecessor directly, and who
 * observed it are derived by the views from what is stored, so a late version (an old delivery that arrives after a
 * newer one, observations.ts) lands in its place without rewriting its neighbours.
 *
 * `_valid_from` of a version: when it was deleted (`_deleted_at`) for a delete, else the service's `updated_at`,
 * else (a stream without one, a record without one) when evsync recorded it (`_synced_at`).
 *
 * A stream's history is off when `_evsync.meta` key `history_off` lists it (the config's `streams.<name>.history:
 * false`): no version is kept, the `history` views are not made, and what was kept stays.
 */
import { getStream, hasStream } from '../../../connectors/index.js';
import { columnsOf, describeTable } from '../db/columns.js';
import type { Db } from '../db/connection.js';
import { ident } from '../db/sql.js';
import { tableExists } from '../state/bookkeeping.js';

export const HISTORY_DDL = [`CREATE SCHEMA IF NOT EXISTS _history`, `CREATE SCHEMA IF NOT EXISTS history`];

const OFF_KEY = 'history_off';

/** The key of a stream table whose history is kept, or null (not a catalogue stream, or an audit log). */
export function historyKey(table: string): readonly string[] | null {
  if (!hasStream(table)) return null;
  const def = getStream(table);
  return def.kind === 'audit' || def.key.length === 0 ? null : def.key;
}

/** Rows a rebuild wrote carry its run id, which starts so (state/runs-sql.ts): readers' copies have no runs table. */
export const REBUILD_RUN_PREFIX = 'rebuild-';

/** `_run_id` of the rows a webhook delivery wrote (sync/capture/applier.ts): the history says `webhook` for them. */
export const CAPTURE_RUN_ID = 'capture';

/**
 * Gives `_history.<table>` (holding `kept`) every column of `wanted` with its type: a column it lacks is added, one of
 * another type converted. Columns are never dropped.
 */
export async function alignHistoryColumns(
  db: Db,
  table: string,
  kept: ReadonlyMap<string, string>,
  wanted: ReadonlyMap<string, string>,
): Promise<void> {
  const t = ident(table);
  for (const [name, type] of wanted) {
    const has = kept.get(name);
    if (has === undefined) await db.run(`ALTER TABLE _history.${t} ADD COLUMN ${ident(name)} ${type}`);
    else if (has !== type) await db.run(`ALTER TABLE _history.${t} ALTER COLUMN ${ident(name)} SET DATA TYPE ${type}`);
  }
}

/** Drops the Db.memo entries whose key starts with `prefix` (what this module keeps there, see readyKey, onKey). */
function forgetMemo(db: Db, prefix: string): void {
  for (const key of [...db.memo.keys()]) if (key.startsWith(prefix)) db.memo.delete(key);
}

/** Db.memo's key for the columns `_history.<table>` was last made to hold (cleared by a rollback, as memo is). */
const readyKey = (table: string) => `history.ready.${table}`;

/** A number standing for a table's columns (Db.memo holds numbers). */
function columnsMark(columns: ReadonlyMap<string, string>): number {
  const text = JSON.stringify([...columns]);
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0;
  return h;
}

/** Forgets which history tables were made ready (after a change made outside the writes: a rebuild, a user). */
export function forgetReadyHistory(db: Db): void {
  forgetMemo(db, 'history.ready.');
}

/** Db.memo's key for whether a stream's history is on (1) or off (0), read once from `_evsync.meta`. */
const onKey = (table: string) => `history.on.${table}`;

/** Whether a stream's history is kept, in the warehouse (the answer kept in Db.memo until setHistoryOff). */
async function historyOn(db: Db, table: string): Promise<boolean> {
  const known = db.memo.get(onKey(table));
  if (known !== undefined) return known === 1;
  const on = !(await historyOff(db, true)).has(table);
  db.memo.set(onKey(table), on ? 1 : 0);
  return on;
}

/** The streams whose history is off (`history_off` in `_evsync.meta`). */
export async function historyOff(db: Db, inWarehouse = false): Promise<Set<string>> {
  // A snapshot's catalogue has no meta: it holds the histories the warehouse kept, and no other.
  if (!inWarehouse && !(await tableExists(db, '_evsync', 'meta'))) return new Set();
  const r = await db.query(`SELECT value FROM _evsync.meta WHERE key = ?`, [OFF_KEY]);
  const value = r.rows[0]?.value;
  if (value === undefined || value === null) return new Set();
  const parsed: unknown = JSON.parse(String(value));
  return new Set(Array.isArray(parsed) ? parsed.map(String) : []);
}

/** Records which streams' history is off (the config's choice, written by each sync). */
export async function setHistoryOff(db: Db, streams: readonly string[]): Promise<void> {
  const sorted = [...new Set(streams)].sort();
  // Written only when it changes: every run says it, and a write would make readers' copies look stale.
  if (JSON.stringify([...(await historyOff(db))].sort()) === JSON.stringify(sorted)) return;
  await db.run(`INSERT OR REPLACE INTO _evsync.meta VALUES (?, ?)`, [OFF_KEY, JSON.stringify(sorted)]);
  forgetMemo(db, 'history.on.');
}

/** `_valid_from` of the current row of a table with these columns (see the module comment). */
export function validFromSql(columns: ReadonlyMap<string, unknown>, alias = ''): string {
  const a = alias ? `${alias}.` : '';
  const updated = columns.has('updated_at') ? `TRY_CAST(${a}"updated_at" AS TIMESTAMP), ` : '';
  return `coalesce(${a}"_deleted_at", ${updated}${a}"_synced_at")`;
}

/**
 * Makes `_history.<table>` hold every column the stream table has, with its type (a column the table gained is
 * added, a widened one widened): a kept version is the table's row as it was. Columns are never dropped.
 */
async function ensureHistoryTable(db: Db, table: string, live: ReadonlyMap<string, string>): Promise<void> {
  const t = ident(table);
  const kept = await columnsOf(db, '_history', table);
  if (kept.size === 0) {
    await db.run(
      `CREATE TABLE IF NOT EXISTS _history.${t} AS
         SELECT *, CAST(NULL AS TIMESTAMP) AS "_valid_from" FROM main.${t} LIMIT 0`,
    );
    return;
  }
  await alignHistoryColumns(db, table, kept, live);
}

/**
 * Makes `_history.<table>` for a stream table whose history is kept (see historyKey), or brings it
 * up to the table's columns: called as the stream table is made or evolves, so `history.<table>` exists from the
 * first sync.
 */
export async function ensureHistory(db: Db, table: string, keyed: boolean): Promise<void> {
  if (keyed) await readyHistory(db, table);
}

/**
 * The stream table's columns, once `_history.<table>` holds every one of them; null when the stream's history is
 * off or the table does not exist.
 */
export async function readyHistory(
  db: Db,
  table: string,
  /** The table's columns as the caller knows them (a merge's): when they are those last made ready, nothing is asked. */
  known?: ReadonlyMap<string, unknown>,
): Promise<ReadonlyMap<string, unknown> | null> {
  if (!(await historyOn(db, table))) return null;
  // Made ready once per process and columns: a batch of a stream whose columns did not change asks DuckDB nothing.
  const knownMark = known ? columnsMark(new Map([...known].map(([c, type]) => [c, String(type)]))) : null;
  if (known && db.memo.get(`${readyKey(table)}.known`) === knownMark) return known;
  const live = await describeTable(db, 'main', table);
  const mark = columnsMark(live);
  if (db.memo.get(readyKey(table)) !== mark) {
    await ensureHistoryTable(db, table, live);
    db.memo.set(readyKey(table), mark);
  }
  if (knownMark !== null) db.memo.set(`${readyKey(table)}.known`, knownMark);
  return live;
}

/**
 * Keeps the current rows of `table` that `where` selects (a condition on `main.<table>`, which it may name) as
 * versions, before the caller's write replaces or marks them, in the caller's transaction. Returns how many were
 * kept (0 when the stream's history is off).
 */
export async function keepVersions(
  db: Db,
  table: string,
  where: string,
  params: unknown[] = [],
  known?: ReadonlyMap<string, unknown>,
): Promise<number> {
  const live = await readyHistory(db, table, known);
  if (!live) return 0;
  const t = ident(table);
  const key = historyKey(table) ?? (live.has('id') ? ['id'] : []);
  const natural = validFromSql(live, t);
  if (key.length === 0) {
    return db.run(
      `INSERT INTO _history.${t} BY NAME SELECT *, ${natural} AS "_valid_from" FROM main.${t} WHERE ${where}`,
      params,
    );
  }
  // A version never starts before the one it follows (a record restored without a new updated_at): then it started
  // when evsync recorded it. The view orders kept versions by what is stored here. The versions it follows are
  // looked up for the selected rows' keys alone (a semi join: not an aggregate over the whole history per write).
  const on = (a: string, b: string) => key.map((k) => `${a}.${ident(k)} = ${b}.${ident(k)}`).join(' AND ');
  // Prepared once per text (the same for every batch of a table): planning this statement over a wide table cost
  // about a millisecond a write. DuckDB binds it again when a table it reads was replaced or changed.
  return db.runPrepared(
    `INSERT INTO _history.${t} BY NAME
       WITH s AS (SELECT *, ${natural} AS "_evsync_nat" FROM main.${t} WHERE ${where}),
            p AS (SELECT ${key.map((k) => `h.${ident(k)}`).join(', ')}, max(h."_valid_from") AS "_evsync_last"
                    FROM _history.${t} h SEMI JOIN s ON ${on('h', 's')} GROUP BY ALL)
       SELECT s.* EXCLUDE ("_evsync_nat"),
              CASE WHEN p."_evsync_last" IS NULL OR s."_evsync_nat" >= p."_evsync_last" THEN s."_evsync_nat"
                   ELSE greatest(s."_synced_at", p."_evsync_last") END AS "_valid_from"
         FROM s LEFT JOIN p ON ${on('p', 's')}`,
    params,
  );
}

/** What the history holds: versions kept beyond the current rows, per stream, and the streams whose history is off. */
export interface HistoryStats {
  /** Versions in `_history.<stream>`, per stream that has the table. */
  kept: Record<string, number>;
  off: string[];
}

export async function historyStats(db: Db): Promise<HistoryStats> {
  const tables = await db.query(
    `SELECT table_name FROM duckdb_tables()
      WHERE database_name = current_database() AND schema_name = '_history' ORDER BY table_name`,
  );
  const kept: Record<string, number> = {};
  for (const row of tables.rows) {
    const t = String(row.table_name);
    kept[t] = Number((await db.query(`SELECT count(*) AS n FROM _history.${ident(t)}`)).rows[0]?.n ?? 0);
  }
  return { kept, off: [...(await historyOff(db))].sort() };
}
