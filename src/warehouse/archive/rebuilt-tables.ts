/**
 * A rebuild's scratch warehouse against the live one (src/sync/rebuild/): what replacing the live tables with the
 * rebuilt ones would change (the dry run's report), and the replacement itself, in one transaction, so that readers
 * and later publishes see either every old table or every rebuilt one. The scratch is attached read-only; its
 * process must have closed it (DuckDB's lock is per process: see Db.openSnapshotReader).
 */
import type { Db } from '../db/connection.js';
import { ident, literal, utcNow } from '../db/sql.js';
import { owePartitions } from '../state/publish-pending.js';
import type { OpLog } from './op-log.js';

const SCRATCH = '"_evsync_rebuild"';

/** What a rebuilt table would change in the live one. */
export interface TableChange {
  table: string;
  /** Rows of the rebuilt table whose key the live one lacks. */
  added: number;
  /** Rows whose key both hold with a value that differs (any column both have, system columns included). */
  changed: number;
  /** Live rows whose key the rebuilt table lacks. */
  removed: number;
  columnsAdded: string[];
  columnsRemoved: string[];
  /** Columns both have with another type: `name: live -> rebuilt`. */
  columnsRetyped: string[];
  /** The live table is missing (dropped): every rebuilt row is added. */
  missing: boolean;
}

async function attached<T>(db: Db, scratch: string, work: () => Promise<T>): Promise<T> {
  await db.run(`ATTACH ${literal(scratch)} AS ${SCRATCH} (READ_ONLY)`);
  try {
    return await work();
  } finally {
    await db.run(`DETACH ${SCRATCH}`);
  }
}

/** A table's columns and their DuckDB types, in order (null: no such table) in the live file or the scratch. */
async function columnTypes(db: Db, table: string, inScratch: boolean): Promise<Map<string, string> | null> {
  const database = inScratch ? `'_evsync_rebuild'` : 'current_database()';
  const r = await db.query(
    `SELECT column_name, data_type FROM duckdb_columns()
      WHERE database_name = ${database} AND schema_name = 'main' AND table_name = ? ORDER BY column_index`,
    [table],
  );
  if (r.rows.length === 0) return null;
  return new Map(r.rows.map((row) => [String(row.column_name), String(row.data_type)]));
}

/**
 * Each row of `source` as its key and one hash of its values over `columns` (a column whose type differs between the
 * two tables as its text: 1 and '1' are equal, 1.0 and 1 are not): two scans of narrow rows instead of a join of
 * whole rows, which on a table of a million rows held both sides' every column.
 */
function digests(source: string, key: readonly string[], columns: readonly string[], retyped: ReadonlySet<string>) {
  const values = columns.map((c) => (retyped.has(c) ? `CAST(x.${ident(c)} AS VARCHAR)` : `x.${ident(c)}`));
  return `(SELECT ${key.map((c) => `x.${ident(c)}`).join(', ')}, hash(${values.join(', ')}) AS "_evsync_h" FROM ${source} x)`;
}

function retypedOf(live: Map<string, string>, rebuilt: Map<string, string>, both: readonly string[]): Set<string> {
  return new Set(both.filter((c) => live.get(c) !== rebuilt.get(c)));
}

/** Per table, what replacing the live table with the scratch's would change (tables the scratch lacks: skipped). */
export async function compareRebuilt(
  db: Db,
  scratch: string,
  tables: readonly string[],
  key: (table: string) => readonly string[],
): Promise<TableChange[]> {
  return attached(db, scratch, async () => {
    const out: TableChange[] = [];
    for (const table of tables) {
      const rebuilt = await columnTypes(db, table, true);
      if (!rebuilt) continue;
      const live = await columnTypes(db, table, false);
      const t = ident(table);
      if (!live) {
        const n = Number((await db.query(`SELECT count(*) AS n FROM ${SCRATCH}.main.${t}`)).rows[0]?.n ?? 0);
        out.push({
          table,
          added: n,
          changed: 0,
          removed: 0,
          columnsAdded: [...rebuilt.keys()],
          columnsRemoved: [],
          columnsRetyped: [],
          missing: true,
        });
        continue;
      }
      const both = [...rebuilt.keys()].filter((c) => live.has(c));
      const keys = key(table).filter((c) => both.includes(c));
      const retyped = retypedOf(live, rebuilt, both);
      const on = keys.map((c) => `l.${ident(c)} = r.${ident(c)}`).join(' AND ');
      const k = ident(keys[0] as string);
      const r = await db.query(
        `SELECT count(*) FILTER (WHERE l.${k} IS NULL) AS added, count(*) FILTER (WHERE r.${k} IS NULL) AS removed,
                count(*) FILTER (WHERE l.${k} IS NOT NULL AND r.${k} IS NOT NULL AND l."_evsync_h" <> r."_evsync_h") AS changed
           FROM ${digests(`main.${t}`, keys, both, retyped)} l
           FULL OUTER JOIN ${digests(`${SCRATCH}.main.${t}`, keys, both, retyped)} r ON ${on}`,
      );
      const row = r.rows[0] ?? {};
      out.push({
        table,
        added: Number(row.added ?? 0),
        changed: Number(row.changed ?? 0),
        removed: Number(row.removed ?? 0),
        columnsAdded: [...rebuilt.keys()].filter((c) => !live.has(c)),
        columnsRemoved: [...live.keys()].filter((c) => !rebuilt.has(c)),
        columnsRetyped: both
          .filter((c) => live.get(c) !== rebuilt.get(c))
          .map((c) => `${c}: ${live.get(c)} -> ${rebuilt.get(c)}`),
        missing: false,
      });
    }
    return out;
  });
}

/**
 * Logs the rows the stamp changed (their keys), so that a later rebuild gives them the same `_synced_at` and
 * `_run_id` (replayed by stampRows).
 */
async function logStamped(db: Db, ops: OpLog, table: string, key: readonly string[], stamp: RebuildStamp) {
  const r = await db.query(
    `SELECT ${key.map((c) => `to_json(${ident(c)})`).join(', ')} FROM main.${ident(table)} WHERE "_run_id" = ? ORDER BY ALL`,
    [stamp.runId],
  );
  if (r.rows.length === 0) return;
  const rows = r.rows.map((row) => Object.values(row).map((v) => JSON.parse(String(v)) as unknown));
  await ops.log(
    db,
    { kind: 'stamped', stream: table, runId: stamp.runId, entry: null, detail: { key: [...key], rows } },
    stamp.at,
  );
}

/** A replay of a `stamped` op: the rows of `keys` get the clock's time and `runId`, in one logged transaction. */
export async function stampRows(
  db: Db,
  ops: OpLog,
  table: string,
  detail: { key: string[]; rows: unknown[][] },
  runId: string,
): Promise<void> {
  const at = utcNow(db.now);
  const t = ident(table);
  // Keys compared as the text of their JSON values (to_json in logStamped): any key type, a rare and small write.
  const match = detail.key.map((c, i) => `CAST(t.${ident(c)} AS VARCHAR) = (k.v->>${i})`).join(' AND ');
  await db.transaction(async () => {
    if (detail.rows.length > 0) {
      await db.run(
        `UPDATE main.${t} t SET "_synced_at" = CAST($1 AS TIMESTAMP), "_run_id" = $2
           FROM (SELECT unnest(CAST(CAST($3 AS JSON) AS JSON[])) AS v) k WHERE ${match}`,
        [at, runId, JSON.stringify(detail.rows)],
      );
    }
    await ops.log(db, { kind: 'stamped', stream: table, runId, entry: null, detail }, at);
  });
}

/** What a rebuild stamps on the rows it changed: readers' copies find them by these (table-parts.ts fingerprints). */
interface RebuildStamp {
  /** UTC `YYYY-MM-DD HH:MM:SS.mmm`: the rows' `_synced_at`. */
  at: string;
  runId: string;
}

/**
 * Replaces each live table with the scratch's, all in one transaction; a warehouse that publishes owes every
 * replaced table to its readers. A row whose key the live table holds with other values (or other deletion) gets
 * `stamp` as its `_synced_at` and `_run_id`: evsync wrote it now, and the snapshot and Parquet, which find changed
 * rows by them, publish it. Every other row keeps the live write's. Returns the tables replaced.
 */
export async function replaceWithRebuilt(
  db: Db,
  ops: OpLog,
  scratch: string,
  tables: readonly string[],
  keys: (table: string) => readonly string[],
  stamp: RebuildStamp,
  owe: boolean,
): Promise<string[]> {
  return attached(db, scratch, () =>
    db.transaction(async () => {
      const done: string[] = [];
      for (const table of tables) {
        const rebuilt = await columnTypes(db, table, true);
        if (!rebuilt) continue;
        const live = await columnTypes(db, table, false);
        const t = ident(table);
        const key = keys(table).filter((c) => rebuilt.has(c) && live?.has(c));
        if (!live || key.length === 0) {
          await db.run(`CREATE OR REPLACE TABLE main.${t} AS SELECT * FROM ${SCRATCH}.main.${t}`);
        } else {
          const compared = [...rebuilt.keys()].filter((c) => live.has(c) && c !== '_synced_at' && c !== '_run_id');
          const retyped = retypedOf(live, rebuilt, compared);
          const on = (a: string, b: string) => key.map((c) => `${a}.${ident(c)} = ${b}.${ident(c)}`).join(' AND ');
          const changed = `SELECT l.* EXCLUDE ("_evsync_h") FROM ${digests(`main.${t}`, key, compared, retyped)} l
                            JOIN ${digests(`${SCRATCH}.main.${t}`, key, compared, retyped)} s ON ${on('l', 's')}
                           WHERE l."_evsync_h" <> s."_evsync_h"`;
          const hit = `c.${ident(key[0] as string)} IS NOT NULL`;
          // DuckDB reads the old table to the end before the new one takes its name (in this transaction).
          await db.run(
            `CREATE OR REPLACE TABLE main.${t} AS
               SELECT r.* REPLACE (
                 CASE WHEN ${hit} THEN CAST($1 AS TIMESTAMP) ELSE r."_synced_at" END AS "_synced_at",
                 CASE WHEN ${hit} THEN $2 ELSE r."_run_id" END AS "_run_id")
                 FROM ${SCRATCH}.main.${t} r LEFT JOIN (${changed}) c ON ${on('c', 'r')}`,
            [stamp.at, stamp.runId],
          );
          await logStamped(db, ops, table, key, stamp);
        }
        done.push(table);
      }
      if (owe && done.length > 0)
        await owePartitions(
          db,
          done.map((table) => ({ table, eventId: null })),
        );
      return done;
    }),
  );
}
