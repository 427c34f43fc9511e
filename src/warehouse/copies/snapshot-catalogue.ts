/**
 * The snapshot's catalogue: the small DuckDB file readers open. It holds a view per stream table over that table's
 * Parquet parts (snapshot-parts.ts, by absolute path), a view `_history.<stream>` per stream's kept versions over
 * theirs, the `analytics` and `history` views made inside it, `_evsync.custom_fields`,
 * and what the next publish needs to know: `_evsync.snapshot` (when, from which warehouse, after which run, the
 * digest of what is not in the parts), `_evsync.snapshot_parts` (each part read: its table's id, `registrants` or
 * `_history.registrants`, its file, rows, fingerprint and the table's columns when it was written: the columns of
 * earlier releases, which read the parts of a history as those of a table they no longer have and retire them) and `_evsync.snapshot_retired` (replaced parts kept for the grace).
 */
import type { Db } from '../db/connection.js';
import { ident, literal } from '../db/sql.js';
import type { RecordedPart, RetiredPart } from './snapshot-parts.js';
import { copiedTable, HISTORY_SCHEMA, historyId } from './table-parts.js';

/** What the snapshot at the target was, as read before publishing over it. */
export interface PreviousSnapshot {
  /** Published from the warehouse publishing now. */
  same: boolean;
  digest: string | null;
  /**
   * Its parts, when this warehouse published it; null when another did, or it is a snapshot of the earlier layout
   * (the tables copied into the file).
   */
  parts: RecordedPart[] | null;
  /** Parts it keeps for the grace period: replaced ones, and (published by another warehouse) all it reads. */
  retired: RetiredPart[];
}

/** True when `_evsync.<name>` exists in the attached database `alias`. */
async function hasTable(db: Db, alias: string, name: string): Promise<boolean> {
  const r = await db.query(
    `SELECT count(*) AS n FROM duckdb_tables() WHERE database_name = ? AND schema_name = '_evsync' AND table_name = ?`,
    [alias, name],
  );
  return Number(r.rows[0]?.n ?? 0) === 1;
}

/** Reads the attached previous snapshot `alias` (null: not one evsync published). */
export async function readPrevious(db: Db, alias: string): Promise<PreviousSnapshot | null> {
  if (!(await hasTable(db, alias, 'snapshot'))) return null;
  const a = ident(alias);
  const head = await db.query(`SELECT * FROM ${a}._evsync.snapshot`);
  const row = head.rows.length === 1 ? head.rows[0] : undefined;
  const same = row?.source === db.path;
  const digest = same && typeof row?.digest === 'string' ? row.digest : null;
  if (!(await hasTable(db, alias, 'snapshot_parts'))) return { same, digest, parts: null, retired: [] };
  const parts = await db.query(
    `SELECT table_name, part_key, file, rows, fingerprint, columns, bytes FROM ${a}._evsync.snapshot_parts`,
  );
  const retired = await db.query(`SELECT file, epoch_ms(retired_at) AS at FROM ${a}._evsync.snapshot_retired`);
  const kept = retired.rows.map((r) => ({ file: String(r.file), retiredAt: Number(r.at) }));
  if (!same) {
    // Another warehouse's snapshot: none of its parts is reused, and all it reads stays for its readers' grace.
    const now = db.now();
    return {
      same,
      digest,
      parts: null,
      retired: [...kept, ...parts.rows.map((r) => ({ file: String(r.file), retiredAt: now }))],
    };
  }
  return {
    same,
    digest,
    parts: parts.rows.map((r) => ({
      table: String(r.table_name),
      key: String(r.part_key),
      file: String(r.file),
      rows: Number(r.rows),
      fingerprint: String(r.fingerprint),
      columns: String(r.columns),
      bytes: Number(r.bytes),
    })),
    retired: kept,
  };
}

interface CatalogueContent {
  /** The live warehouse's database name on the connection (the bookkeeping is copied from it). */
  live: string;
  /** Every part the snapshot reads, by table. */
  parts: ReadonlyMap<string, readonly RecordedPart[]>;
  /** The tables whose view must be (re)made: their files changed, or the catalogue is new. */
  remake: ReadonlySet<string>;
  /** Absolute path of the parts folder. */
  folder: string;
  retired: readonly RetiredPart[];
  record: { publishedAt: string; source: string; runId: string | null; digest: string; tables: number };
  bookkeeping: readonly string[];
}

const SCHEMA_SQL = [
  'CREATE SCHEMA IF NOT EXISTS {a}._evsync',
  'CREATE SCHEMA IF NOT EXISTS {a}.analytics',
  `CREATE SCHEMA IF NOT EXISTS {a}.${HISTORY_SCHEMA}`,
  `CREATE OR REPLACE TABLE {a}._evsync.snapshot_parts (table_name VARCHAR, part_key VARCHAR, file VARCHAR,
     rows BIGINT, fingerprint VARCHAR, columns VARCHAR, bytes BIGINT)`,
  'CREATE OR REPLACE TABLE {a}._evsync.snapshot_retired (file VARCHAR, retired_at TIMESTAMP)',
];

/** The view of one copied table (by id) over its parts (all with the table's columns, in its order). */
function viewSql(a: string, table: string, folder: string, parts: readonly RecordedPart[]): string {
  const files = parts.map((p) => literal(`${folder}/${p.file}`)).join(', ');
  return `CREATE OR REPLACE VIEW ${a}.${copiedTable(table).ref} AS SELECT * FROM read_parquet([${files}])`;
}

/**
 * The catalogue's `_history` schema: a view per stream's kept versions over their parts, an empty table with its
 * columns for a history that holds nothing yet (no Parquet file to read), nothing for a stream without one.
 */
async function writeHistories(db: Db, a: string, alias: string, c: CatalogueContent): Promise<void> {
  const kinds = new Map<string, 'view' | 'table'>();
  const held = await db.query(
    `SELECT view_name AS name, 'view' AS kind FROM duckdb_views()
      WHERE database_name = ? AND schema_name = '${HISTORY_SCHEMA}' AND NOT internal
     UNION ALL
     SELECT table_name, 'table' FROM duckdb_tables() WHERE database_name = ? AND schema_name = '${HISTORY_SCHEMA}'`,
    [alias, alias],
  );
  for (const r of held.rows) kinds.set(historyId(String(r.name)), r.kind === 'view' ? 'view' : 'table');
  const drop = async (id: string) => {
    const kind = kinds.get(id);
    if (kind) await db.run(`DROP ${kind === 'view' ? 'VIEW' : 'TABLE'} ${a}.${copiedTable(id).ref}`);
    kinds.delete(id);
  };
  for (const id of [...kinds.keys()]) if (!c.parts.has(id)) await drop(id);
  for (const [id, parts] of c.parts) {
    const copied = copiedTable(id);
    if (copied.schema !== HISTORY_SCHEMA) continue;
    if (parts.length === 0) {
      if (kinds.get(id) === 'view') await drop(id);
      await db.run(
        `CREATE OR REPLACE TABLE ${a}.${copied.ref} AS SELECT * FROM ${ident(c.live)}.${copied.ref} LIMIT 0`,
      );
      continue;
    }
    if (kinds.get(id) === 'table') await drop(id);
    if (!kinds.has(id) || c.remake.has(id)) await db.run(viewSql(a, id, c.folder, parts));
  }
}

/**
 * Writes the catalogue into the attached copy `alias` (new, or a copy of the previous catalogue): the views of the
 * tables to remake, no view of a table the warehouse no longer has, the records. Inside the caller's transaction.
 */
export async function writeCatalogue(db: Db, alias: string, c: CatalogueContent): Promise<void> {
  const a = ident(alias);
  for (const sql of SCHEMA_SQL) await db.run(sql.replaceAll('{a}', a));
  const held = await db.query(
    `SELECT view_name FROM duckdb_views() WHERE database_name = ? AND schema_name = 'main' AND NOT internal`,
    [alias],
  );
  for (const r of held.rows) {
    const name = String(r.view_name);
    if (!c.parts.has(name)) await db.run(`DROP VIEW ${a}.main.${ident(name)}`);
  }
  for (const [table, parts] of c.parts) {
    if (copiedTable(table).schema === 'main' && c.remake.has(table)) await db.run(viewSql(a, table, c.folder, parts));
  }
  await writeHistories(db, a, alias, c);
  const rows = [...c.parts.values()].flat();
  if (rows.length > 0) {
    const values = rows
      .map(
        (p) =>
          `(${[p.table, p.key, p.file].map(literal).join(', ')}, ${p.rows}, ${literal(p.fingerprint)}, ${literal(
            p.columns,
          )}, ${p.bytes})`,
      )
      .join(', ');
    await db.run(`INSERT INTO ${a}._evsync.snapshot_parts VALUES ${values}`);
  }
  if (c.retired.length > 0) {
    const values = c.retired.map((r) => `(${literal(r.file)}, make_timestamp(${r.retiredAt * 1000}))`).join(', ');
    await db.run(`INSERT INTO ${a}._evsync.snapshot_retired VALUES ${values}`);
  }
  for (const table of c.bookkeeping) {
    await db.run(
      `CREATE OR REPLACE TABLE ${a}._evsync.${ident(table)} AS SELECT * FROM ${ident(c.live)}._evsync.${ident(table)}`,
    );
  }
  await db.run(
    `CREATE OR REPLACE TABLE ${a}._evsync.snapshot AS
       SELECT CAST(? AS TIMESTAMP) AS published_at, ? AS source, ? AS run_id, ? AS tables, ? AS digest,
              'parquet-parts' AS layout`,
    [c.record.publishedAt, c.record.source, c.record.runId, c.record.tables, c.record.digest],
  );
}
