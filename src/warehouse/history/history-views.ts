/**
 * The `history` schema readers query: per stream with a key (audit streams are histories already),
 *
 * - `history.<stream>`: every version of every record, its current row (`main.<stream>`) and the versions it no
 *   longer holds (`_history.<stream>`, versions.ts) together (a delete with the values of the version it ends), with
 *   - `_valid_from`, `_valid_to` (exclusive; NULL for the version that holds now), `_is_deleted`;
 *   - `_observed_by`: `webhook` (a delivery), `poll` (a list walk or a re-read), `sweep` (a delete found by a walk
 *     that covered its scope), `rebuild` (a row a rebuild changed);
 *   - `_recorded_at`: when evsync wrote it (UTC);
 *   - `_follows_previous`: TRUE when the change was delivered as it happened (a webhook: no state lies between it and
 *     the version before, unless the service gave up delivering one), FALSE when a poll saw the latest state only
 *     (states may be missing between), NULL for the first version evsync observed (what came before is unknown:
 *     history begins there);
 * - `history.<stream>_as_of(as_of)`: a table macro, the records as they stood at `as_of` (deleted ones left out);
 * - `history.<stream>_transitions`: for streams with `*status` columns, each change of one (`column`, `from`, `to`,
 *   `changed_at`, `_observed_by`, `_follows_previous`).
 *
 * Derived, not stored: versions are ordered per key by `_valid_from` (the current row last), and a version whose
 * `_valid_from` is not after its predecessor's (a record restored without a new `updated_at`) starts when it was
 * recorded instead, so the intervals of a key never overlap. `_valid_from` is the service's clock (`updated_at`)
 * where the stream has one.
 */
import { createHash } from 'node:crypto';
import type { Db } from '../db/connection.js';
import { ident, literal } from '../db/sql.js';
import { CAPTURE_RUN_ID, historyKey, historyOff, REBUILD_RUN_PREFIX, validFromSql } from './versions.js';

/** What createHistoryViews made (names in schema `history`) and what it could not. */
interface HistoryViewsReport {
  created: string[];
  warnings: string[];
}

/** `_observed_by` of a stored row (current or kept): see the module comment. */
function observedBySql(alias = ''): string {
  const a = alias ? `${alias}.` : '';
  return `CASE WHEN ${a}"_run_id" = '${CAPTURE_RUN_ID}' THEN 'webhook'
              WHEN starts_with(${a}"_run_id", '${REBUILD_RUN_PREFIX}') THEN 'rebuild'
              WHEN ${a}"_deleted_at" IS NOT NULL THEN 'sweep' ELSE 'poll' END`;
}

const INTERNAL = ['"_evsync_from"', '"_evsync_o"', '"_evsync_prev"', '"_evsync_n"'];

/** The SELECT of `history.<table>`: stored versions and current rows, ordered and closed per key. */
export function historySelect(
  table: string,
  key: readonly string[],
  live: ReadonlyMap<string, string>,
  /**
   * A condition on either table's rows (an export's event partitions): only the records with a version it selects
   * are read, each with every version (a window over the whole table per publish cost as much as the table).
   */
  scope?: string,
  /** Only the records with kept versions (the others are their row alone: they have no change to show). */
  keptOnly = false,
): string {
  const t = ident(table);
  const byKey = key.map(ident).join(', ');
  const order = `PARTITION BY ${byKey} ORDER BY "_evsync_o", "_evsync_from", "_synced_at"`;
  // A delete holds the values of the version it ends, whichever row the table held when the delete came (a delivery
  // that arrives after its delete lands before it: the values must not depend on the order deliveries came in).
  const data = [...live.keys()].filter((c) => !c.startsWith('_') && !key.includes(c)).map(ident);
  const ended = data.map(
    (c) => `CASE WHEN "_deleted_at" IS NOT NULL AND lag("_deleted_at") OVER w IS NULL AND row_number() OVER w > 1
                 THEN lag(${c}) OVER w ELSE ${c} END AS ${c}`,
  );
  const keyed = (a: string, b: string) => key.map((k) => `${a}.${ident(k)} = ${b}.${ident(k)}`).join(' AND ');
  const kept = (alias: string) => `EXISTS (SELECT 1 FROM k WHERE ${keyed('k', alias)})`;
  // k: the records with kept versions (with a scope: those of them with a version in it). Only their versions go
  // through the windows; every other record is its current row alone, projected (on `large`, a window over a million
  // rows with a lag per column cost minutes under the daemon's memory limit).
  const keys = scope
    ? `s AS (SELECT ${byKey} FROM _history.${t} WHERE ${scope} UNION SELECT ${byKey} FROM main.${t} WHERE ${scope}),
k AS (SELECT DISTINCT ${key.map((c) => `h.${ident(c)}`).join(', ')} FROM _history.${t} h SEMI JOIN s ON ${keyed('s', 'h')}),
`
    : `k AS (SELECT DISTINCT ${byKey} FROM _history.${t}),
`;
  // Records without kept versions: their current row is their one version.
  const single = keptOnly
    ? ''
    : `SELECT x.* EXCLUDE ("_synced_at", "_deleted_at"),
       ${validFromSql(live, 'x')} AS "_valid_from",
       CAST(NULL AS TIMESTAMP) AS "_valid_to",
       x."_deleted_at" IS NOT NULL AS "_is_deleted",
       ${observedBySql('x')} AS "_observed_by",
       x."_synced_at" AS "_recorded_at",
       CAST(NULL AS BOOLEAN) AS "_follows_previous"
  FROM main.${t} x WHERE NOT ${kept('x')}${scope ? ` AND ${scope}` : ''}
UNION ALL BY NAME
`;
  return `WITH ${keys}v AS (
  SELECT * EXCLUDE ("_valid_from"), "_valid_from" AS "_evsync_from", 0 AS "_evsync_o" FROM _history.${t} x WHERE ${kept('x')}
  UNION ALL BY NAME
  SELECT *, ${validFromSql(live)} AS "_evsync_from", 1 AS "_evsync_o" FROM main.${t} x WHERE ${kept('x')}
), o AS (
  SELECT *${ended.length ? ` REPLACE (${ended.join(',\n    ')})` : ''},
         lag("_evsync_from") OVER w AS "_evsync_prev", row_number() OVER w AS "_evsync_n"
    FROM v WINDOW w AS (${order})
), f AS (
  SELECT *, CASE WHEN "_evsync_prev" IS NULL OR "_evsync_from" >= "_evsync_prev" THEN "_evsync_from"
                 ELSE greatest("_synced_at", "_evsync_prev") END AS "_valid_from"
    FROM o
)
${single}SELECT * EXCLUDE (${INTERNAL.join(', ')}, "_valid_from", "_synced_at", "_deleted_at"),
       "_valid_from",
       lead("_valid_from") OVER (${order}) AS "_valid_to",
       "_deleted_at" IS NOT NULL AS "_is_deleted",
       ${observedBySql()} AS "_observed_by",
       "_synced_at" AS "_recorded_at",
       CASE WHEN "_evsync_n" = 1 THEN NULL ELSE "_run_id" = '${CAPTURE_RUN_ID}' END AS "_follows_previous"
  FROM f`;
}

/** The `_as_of` macro's body: the versions that held at `at`, deleted records left out. */
function asOfSql(table: string): string {
  return `SELECT * EXCLUDE ("_valid_to") FROM history.${ident(table)}
   WHERE "_valid_from" <= CAST(as_of AS TIMESTAMP) AND ("_valid_to" IS NULL OR "_valid_to" > CAST(as_of AS TIMESTAMP))
     AND NOT "_is_deleted"`;
}

/** The `_transitions` view: each change of a status column between consecutive versions of a record. */
function transitionsSql(
  table: string,
  key: readonly string[],
  live: ReadonlyMap<string, string>,
  statuses: readonly string[],
  scope: string | null,
) {
  const byKey = key.map(ident).join(', ');
  // Each part names its own window: DuckDB refuses one name defined twice in a UNION. Only records with kept versions
  // can have changed (the others are their row alone).
  const parts = statuses.map(
    (c, i) => `SELECT ${byKey}${scope ? `, ${ident(scope)}` : ''}, '${c}' AS "column",
       lag(${ident(c)}) OVER w${i} AS "from", ${ident(c)} AS "to", "_valid_from" AS "changed_at", "_observed_by",
       "_follows_previous", "_run_id"
  FROM (${historySelect(table, key, live, undefined, true)}) x WHERE NOT "_is_deleted"
WINDOW w${i} AS (PARTITION BY ${byKey} ORDER BY "_valid_from")
QUALIFY row_number() OVER w${i} > 1 AND "from" IS DISTINCT FROM "to"`,
  );
  return parts.join('\nUNION ALL\n');
}

async function attempt(db: Db, name: string, sql: string, report: HistoryViewsReport): Promise<void> {
  try {
    await db.run(sql);
    report.created.push(name);
  } catch (err) {
    report.warnings.push(`history view ${name} not created: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Drops the views `held` (schema `history`), and every macro there, that `keep` does not name. */
async function dropOthers(db: Db, held: Iterable<string>, keep: ReadonlySet<string>): Promise<void> {
  for (const name of held) if (!keep.has(name)) await db.run(`DROP VIEW IF EXISTS history.${ident(name)}`);
  const macros = await db.query(
    `SELECT DISTINCT function_name AS name FROM duckdb_functions()
      WHERE database_name = current_database() AND schema_name = 'history' AND function_type = 'table_macro'`,
  );
  for (const row of macros.rows) {
    const name = String(row.name);
    if (!keep.has(name)) await db.run(`DROP MACRO TABLE IF EXISTS history.${ident(name)}`);
  }
}

/** Every column of the tables (or views, in a snapshot) of schemas `main` and `_history`, by `schema.table`. */
async function allColumns(db: Db): Promise<Map<string, Map<string, string>>> {
  const r = await db.query(
    `SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns()
      WHERE database_name = current_database() AND schema_name IN ('main', '_history') ORDER BY column_index`,
  );
  const out = new Map<string, Map<string, string>>();
  for (const row of r.rows) {
    const name = `${String(row.schema_name)}.${String(row.table_name)}`;
    const columns = out.get(name) ?? new Map<string, string>();
    columns.set(String(row.column_name), String(row.data_type));
    out.set(name, columns);
  }
  return out;
}

/** The statements of one table's history views (name and SQL), in the order they depend on each other. */
function historyStatements(table: string, key: readonly string[], live: ReadonlyMap<string, string>) {
  const out = [
    { name: table, sql: `CREATE OR REPLACE VIEW history.${ident(table)} AS\n${historySelect(table, key, live)}` },
  ];
  out.push({
    name: `${table}_as_of`,
    sql: `CREATE OR REPLACE MACRO history.${ident(`${table}_as_of`)}(as_of) AS TABLE\n${asOfSql(table)}`,
  });
  const statuses = [...live].filter(([c, type]) => c.endsWith('status') && type === 'VARCHAR').map(([c]) => c);
  if (statuses.length > 0) {
    const scope = live.has('event_id') && !key.includes('event_id') ? 'event_id' : null;
    const name = `${table}_transitions`;
    out.push({
      name,
      sql: `CREATE OR REPLACE VIEW history.${ident(name)} AS\n${transitionsSql(table, key, live, statuses, scope)}`,
    });
  }
  return out;
}

/** The mark a table's history views carry (the comment of `history.<table>`): a hash of their statements. */
function markOf(statements: readonly { sql: string }[]): string {
  const hash = createHash('sha256').update(statements.map((s) => s.sql).join('\n'));
  return `evsync:${hash.digest('hex').slice(0, 16)}`;
}

/**
 * (Re)creates the history views and macros of the stream tables `tables` whose history is kept (`_history.<t>`
 * present, not turned off); drops the others. A view that cannot be made is a warning, as the analytics views'.
 * A table's views whose statements are unchanged (their mark, the comment of `history.<table>`) are left as they are:
 * every sync makes the views, and three statements per stream cost time.
 */
export async function createHistoryViews(db: Db, tables: readonly string[]): Promise<HistoryViewsReport> {
  const report: HistoryViewsReport = { created: [], warnings: [] };
  await db.run(`CREATE SCHEMA IF NOT EXISTS history`);
  const off = await historyOff(db);
  const columns = await allColumns(db);
  const held = await db.query(
    `SELECT view_name, comment FROM duckdb_views()
      WHERE database_name = current_database() AND schema_name = 'history' AND NOT internal`,
  );
  const marks = new Map(held.rows.map((row) => [String(row.view_name), row.comment]));
  for (const table of tables) {
    const key = historyKey(table);
    const live = columns.get(`main.${table}`);
    if (!key || off.has(table) || !columns.has(`_history.${table}`) || !live) continue;
    if (!key.every((k) => live.has(k))) continue;
    const statements = historyStatements(table, key, live);
    const mark = markOf(statements);
    const views = statements.filter((s) => !s.name.endsWith('_as_of'));
    if (marks.get(table) === mark && views.every((s) => marks.has(s.name))) {
      for (const s of statements) report.created.push(s.name);
      continue;
    }
    for (const s of statements) {
      await attempt(db, s.name, s.sql, report);
      if (!report.created.includes(table)) break;
    }
    if (report.created.includes(table)) await db.run(`COMMENT ON VIEW history.${ident(table)} IS ${literal(mark)}`);
  }
  // Views (and with them their macros) of tables no longer kept: looked for only when a view is gone from the list
  // (the functions' catalogue is thousands of rows).
  const made = new Set(report.created);
  if ([...marks.keys()].some((name) => !made.has(name))) await dropOthers(db, marks.keys(), made);
  return report;
}
