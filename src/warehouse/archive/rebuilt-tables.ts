/**
 * A rebuild's scratch warehouse against the live one (src/sync/rebuild/): what replacing the live tables with the
 * rebuilt ones would change (the dry run's report), and the replacement itself, in one transaction, so that readers
 * and later publishes see either every old table or every rebuilt one. The scratch is attached read-only; its
 * process must have closed it (DuckDB's lock is per process: see Db.openSnapshotReader).
 */

import { columnsOf } from '../db/columns.js';
import type { Db } from '../db/connection.js';
import { ident, literal, utcNow } from '../db/sql.js';
import { compareHistory, type HistoryChange, replaceHistory } from '../history/rebuilt-history.js';
import { owePartitions } from '../state/publish-pending.js';
import type { OpLog } from './op-log.js';

const SCRATCH_NAME = '_evsync_rebuild';
const SCRATCH = `"${SCRATCH_NAME}"`;

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
  /** What the rebuild changes in the table's history (history/rebuilt-history.ts); null when it keeps none. */
  history: HistoryChange | null;
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
  const columns = await columnsOf(db, 'main', table, inScratch ? SCRATCH_NAME : undefined);
  return columns.size === 0 ? null : columns;
}

/** The columns of a table in the live file and in the scratch, compared. */
interface TablePair {
  live: Map<string, string>;
  rebuilt: Map<string, string>;
  /** Columns both have. */
  both: string[];
  /** Of those, the ones whose type differs. */
  retyped: Set<string>;
  /** The key columns both have. */
  key: string[];
}

function pairOf(live: Map<string, string>, rebuilt: Map<string, string>, key: readonly string[]): TablePair {
  const both = [...rebuilt.keys()].filter((c) => live.has(c));
  const retyped = new Set(both.filter((c) => live.get(c) !== rebuilt.get(c)));
  return { live, rebuilt, both, retyped, key: key.filter((c) => both.includes(c)) };
}

/** One hash of a row's values over `columns` (a retyped column as its text: 1 and '1' equal, 1.0 and 1 not). */
function rowHash(columns: readonly string[], retyped: ReadonlySet<string>): string {
  return `hash(${columns.map((c) => (retyped.has(c) ? `CAST(x.${ident(c)} AS VARCHAR)` : `x.${ident(c)}`)).join(', ')})`;
}

const DIFF = 'temp."_evsync_diff"';

/**
 * Rows a slice of the comparison joins at most (per side): the join's hash table of a million registrants' keys and
 * hashes raised a rebuild's RSS by about 90 MB at once, beside three DuckDB instances (live, scratch, archive).
 */
const DIFF_SLICE_ROWS = 262_144;

/**
 * The key ranges the comparison is cut into: for a single integer key, ranges of about `sliceRows` rows of the
 * larger side over the keys both sides span (a scan skips the row groups outside a range by their min/max, and
 * hashes only the rows inside it); otherwise one slice, the whole table.
 */
async function slicesOf(db: Db, table: string, pair: TablePair, sliceRows: number): Promise<(string | null)[]> {
  const key = pair.key[0] as string;
  const type = pair.live.get(key);
  if (pair.key.length !== 1 || pair.retyped.has(key) || !(type === 'BIGINT' || type === 'INTEGER')) return [null];
  const k = ident(key);
  const t = ident(table);
  const r = await db.query(
    `SELECT max(n) AS n, CAST(min(lo) AS VARCHAR) AS lo, CAST(max(hi) AS VARCHAR) AS hi FROM (
       SELECT count(*) AS n, min(${k}) AS lo, max(${k}) AS hi FROM main.${t}
       UNION ALL SELECT count(*), min(${k}), max(${k}) FROM ${SCRATCH}.main.${t})`,
  );
  const row = r.rows[0];
  const n = Number(row?.n ?? 0);
  if (n <= sliceRows || row?.lo === null || row?.hi === null) return [null];
  const lo = BigInt(String(row?.lo));
  const hi = BigInt(String(row?.hi));
  const count = BigInt(Math.ceil(n / sliceRows));
  const width = (hi - lo) / count + 1n;
  const out: string[] = [];
  for (let from = lo; from <= hi; from += width) out.push(`x.${k} BETWEEN ${from} AND ${from + width - 1n}`);
  // A row without its key (none is stored so) would be in no range.
  out.push(`x.${k} IS NULL`);
  return out;
}

/**
 * The keys whose rows differ between the live table and the scratch's, in DIFF: `change` added, removed or changed
 * (any column both have, system columns included), and `data` whether a changed row's values or deletion differ
 * (not only its `_synced_at`/`_run_id`). Each side is read as its keys and two hashes: narrow rows, where a join
 * of whole rows held both sides' every column (out of memory on a million registrants); and in slices of the key's
 * range (slicesOf), so that the join holds a slice's keys, not the table's.
 */
async function diffTable(db: Db, table: string, pair: TablePair, sliceRows: number): Promise<void> {
  const t = ident(table);
  const data = pair.both.filter((c) => c !== '_synced_at' && c !== '_run_id');
  const side = (source: string, where: string | null) =>
    `(SELECT ${pair.key.map((c) => `x.${ident(c)}`).join(', ')}, ${rowHash(pair.both, pair.retyped)} AS ha,
             ${rowHash(data, pair.retyped)} AS hd FROM ${source} x${where ? ` WHERE ${where}` : ''})`;
  const k0 = ident(pair.key[0] as string);
  const slices = await slicesOf(db, table, pair, sliceRows);
  for (let i = 0; i < slices.length; i++) {
    const where = slices[i] ?? null;
    await db.run(
      `${i === 0 ? 'CREATE OR REPLACE TEMP TABLE "_evsync_diff" AS' : `INSERT INTO ${DIFF}`}
         SELECT ${pair.key.map((c) => `coalesce(l.${ident(c)}, r.${ident(c)}) AS ${ident(c)}`).join(', ')},
                CASE WHEN l.${k0} IS NULL THEN 'added' WHEN r.${k0} IS NULL THEN 'removed' ELSE 'changed' END AS change,
                l.hd IS DISTINCT FROM r.hd AS data
           FROM ${side(`main.${t}`, where)} l FULL OUTER JOIN ${side(`${SCRATCH}.main.${t}`, where)} r
             ON ${pair.key.map((c) => `l.${ident(c)} = r.${ident(c)}`).join(' AND ')}
          WHERE l.${k0} IS NULL OR r.${k0} IS NULL OR l.ha <> r.ha`,
    );
  }
}

/** Per table, what replacing the live table with the scratch's would change (tables the scratch lacks: skipped). */
export async function compareRebuilt(
  db: Db,
  scratch: string,
  tables: readonly string[],
  key: (table: string) => readonly string[],
  sliceRows = DIFF_SLICE_ROWS,
): Promise<TableChange[]> {
  return attached(db, scratch, async () => {
    const out: TableChange[] = [];
    for (const table of tables) {
      const rebuilt = await columnTypes(db, table, true);
      if (!rebuilt) continue;
      const live = await columnTypes(db, table, false);
      if (!live) {
        const n = Number((await db.query(`SELECT count(*) AS n FROM ${SCRATCH}.main.${ident(table)}`)).rows[0]?.n ?? 0);
        const columnsAdded = [...rebuilt.keys()];
        out.push({
          table,
          added: n,
          changed: 0,
          removed: 0,
          columnsAdded,
          columnsRemoved: [],
          columnsRetyped: [],
          missing: true,
          history: await compareHistory(db, SCRATCH_NAME, table),
        });
        continue;
      }
      const pair = pairOf(live, rebuilt, key(table));
      await diffTable(db, table, pair, sliceRows);
      const r = await db.query(
        `SELECT count(*) FILTER (WHERE change = 'added') AS added, count(*) FILTER (WHERE change = 'removed') AS removed,
                count(*) FILTER (WHERE change = 'changed') AS changed FROM ${DIFF}`,
      );
      await db.run(`DROP TABLE ${DIFF}`);
      const row = r.rows[0] ?? {};
      out.push({
        table,
        added: Number(row.added ?? 0),
        changed: Number(row.changed ?? 0),
        removed: Number(row.removed ?? 0),
        columnsAdded: [...rebuilt.keys()].filter((c) => !live.has(c)),
        columnsRemoved: [...live.keys()].filter((c) => !rebuilt.has(c)),
        columnsRetyped: [...pair.retyped].map((c) => `${c}: ${live.get(c)} -> ${rebuilt.get(c)}`),
        missing: false,
        history: await compareHistory(db, SCRATCH_NAME, table),
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
 * Puts each rebuilt table in place of the live one, all in one transaction; a warehouse that publishes owes every
 * table it changed to its readers. Where the columns allow it (none retyped), only the rows that differ are written:
 * those the live table lacks or holds otherwise go in as rebuilt, those the rebuilt one lacks go out, the columns it
 * added are added (a column it no longer makes is kept); a rebuild that changes nothing writes nothing. Otherwise (a
 * retyped column, a missing table) the table is replaced whole. A row whose key the live table holds with other values
 * (or another deletion) gets `stamp` as its `_synced_at` and `_run_id`: evsync wrote it now, and the snapshot and
 * Parquet, which find changed rows by them, publish it. Every other row keeps the live write's. Returns the tables
 * changed.
 */
export async function replaceWithRebuilt(
  db: Db,
  ops: OpLog,
  scratch: string,
  tables: readonly string[],
  keys: (table: string) => readonly string[],
  stamp: RebuildStamp,
  owe: boolean,
  sliceRows = DIFF_SLICE_ROWS,
): Promise<string[]> {
  return attached(db, scratch, () =>
    db.transaction(async () => {
      const done: string[] = [];
      for (const table of tables) {
        const rebuilt = await columnTypes(db, table, true);
        if (!rebuilt) continue;
        const live = await columnTypes(db, table, false);
        const pair = live ? pairOf(live, rebuilt, keys(table)) : null;
        const t = ident(table);
        // The history first: its versions are the scratch's whatever the table's rows need.
        const history = await replaceHistory(db, SCRATCH_NAME, table);
        if (!pair || pair.key.length === 0 || pair.retyped.size > 0) {
          await db.run(`CREATE OR REPLACE TABLE main.${t} AS SELECT * FROM ${SCRATCH}.main.${t}`);
          done.push(table);
          continue;
        }
        if (await writeDifferences(db, table, pair, stamp, sliceRows)) {
          await logStamped(db, ops, table, pair.key, stamp);
          done.push(table);
        } else if (history) done.push(table);
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

/** The rows of the live table that differ from the rebuilt ones replaced by them; false when none differ. */
async function writeDifferences(
  db: Db,
  table: string,
  pair: TablePair,
  stamp: RebuildStamp,
  sliceRows: number,
): Promise<boolean> {
  await diffTable(db, table, pair, sliceRows);
  const t = ident(table);
  const n = Number((await db.query(`SELECT count(*) AS n FROM ${DIFF}`)).rows[0]?.n ?? 0);
  if (n === 0) {
    await db.run(`DROP TABLE ${DIFF}`);
    return false;
  }
  for (const c of [...pair.rebuilt.keys()].filter((c) => !pair.live.has(c))) {
    await db.run(`ALTER TABLE main.${t} ADD COLUMN ${ident(c)} ${pair.rebuilt.get(c)}`);
  }
  const on = (a: string, b: string) => pair.key.map((c) => `${a}.${ident(c)} = ${b}.${ident(c)}`).join(' AND ');
  await db.run(
    `DELETE FROM main.${t} x WHERE EXISTS (SELECT 1 FROM ${DIFF} d WHERE d.change <> 'added' AND ${on('d', 'x')})`,
  );
  const stamped = `d.change = 'changed' AND d.data`;
  await db.run(
    `INSERT INTO main.${t} BY NAME
       SELECT r.* REPLACE (
         CASE WHEN ${stamped} THEN CAST($1 AS TIMESTAMP) ELSE r."_synced_at" END AS "_synced_at",
         CASE WHEN ${stamped} THEN $2 ELSE r."_run_id" END AS "_run_id")
         FROM ${SCRATCH}.main.${t} r JOIN ${DIFF} d ON ${on('d', 'r')} WHERE d.change <> 'removed'`,
    [stamp.at, stamp.runId],
  );
  await db.run(`DROP TABLE ${DIFF}`);
  return true;
}
