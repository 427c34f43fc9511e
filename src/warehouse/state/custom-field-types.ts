/**
 * `_evsync.custom_field_types` (table_name, column_name `c_<id>`, type; key both): the types the custom-field
 * answers of each stream table were last normalized with (`streams.<name>.customFieldTypes`). The analytics
 * custom-field views type such a field by it instead of by its definition (custom-field-views.ts): the views are
 * built from the database alone (also inside a snapshot, which copies this table), and the stored answers have the
 * form the setting of their last sync gave them.
 *
 * Part of layout 3 (layout/create.ts, migrate-2-to-3.ts); also made on first use by a warehouse opened read-only
 * from an older layout, which the next writing open migrates.
 */
import type { CustomFieldType, ResolvedStream } from '../../../connectors/types.js';
import type { QueryResult } from '../db/connection.js';

export const CUSTOM_FIELD_TYPES_TABLE = 'custom_field_types';

export const CUSTOM_FIELD_TYPES_DDL = `CREATE TABLE IF NOT EXISTS _evsync.${CUSTOM_FIELD_TYPES_TABLE} (
  table_name VARCHAR NOT NULL, column_name VARCHAR NOT NULL, type VARCHAR NOT NULL,
  PRIMARY KEY (table_name, column_name))`;

/** What the writer needs of the warehouse: SQL with parameters (`Warehouse.query`, or a `Db`). */
interface SqlRunner {
  query(sql: string, params?: unknown[]): Promise<QueryResult>;
}

/** Types by table, then by field (`registrants` -> `c_7` -> `bigint`). */
type CustomFieldTypesByTable = ReadonlyMap<string, ReadonlyMap<string, string>>;

async function exists(sql: SqlRunner): Promise<boolean> {
  const r = await sql.query(
    `SELECT count(*) AS n FROM duckdb_tables()
      WHERE database_name = current_database() AND schema_name = '_evsync' AND table_name = ?`,
    [CUSTOM_FIELD_TYPES_TABLE],
  );
  return Number(r.rows[0]?.n ?? 0) > 0;
}

/**
 * Records the types the given streams' answers are normalized with this run (each stream's rows replaced). Streams
 * not given keep what an earlier run recorded: their stored answers were not normalized again. Each statement
 * leaves a consistent table on its own, so a run stopped between them is set right by the next.
 */
export async function recordCustomFieldTypes(sql: SqlRunner, streams: readonly ResolvedStream[]): Promise<void> {
  const withCustom = streams.filter((s) => s.customFields);
  if (withCustom.length === 0) return;
  const anyTypes = withCustom.some((s) => Object.keys(s.customFieldTypes ?? {}).length > 0);
  if (!anyTypes && !(await exists(sql))) return;
  await sql.query(CUSTOM_FIELD_TYPES_DDL);
  for (const stream of withCustom) {
    const types: Readonly<Record<string, CustomFieldType>> = stream.customFieldTypes ?? {};
    for (const [column, type] of Object.entries(types)) {
      await sql.query(`INSERT OR REPLACE INTO _evsync.${CUSTOM_FIELD_TYPES_TABLE} VALUES (?, ?, ?)`, [
        stream.name,
        column,
        type,
      ]);
    }
    const kept = Object.keys(types);
    const notKept = kept.length > 0 ? ` AND column_name NOT IN (${kept.map(() => '?').join(', ')})` : '';
    await sql.query(`DELETE FROM _evsync.${CUSTOM_FIELD_TYPES_TABLE} WHERE table_name = ?${notKept}`, [
      stream.name,
      ...kept,
    ]);
  }
}

/** The recorded types (empty when the table does not exist: no stream ever had one). */
export async function readCustomFieldTypes(sql: SqlRunner): Promise<CustomFieldTypesByTable> {
  const out = new Map<string, Map<string, string>>();
  if (!(await exists(sql))) return out;
  const r = await sql.query(`SELECT table_name, column_name, type FROM _evsync.${CUSTOM_FIELD_TYPES_TABLE}`);
  for (const row of r.rows) {
    const table = String(row.table_name);
    const fields = out.get(table) ?? new Map<string, string>();
    fields.set(String(row.column_name), String(row.type));
    out.set(table, fields);
  }
  return out;
}
