/**
 * Every stream table of a warehouse as text: each row with every column (ordered by name, values as DuckDB's text of
 * them), the rows sorted, and each table's column types. Two warehouses, or one before and after, are equal when
 * these are.
 */
import type { Warehouse } from '../../src/warehouse/index.js';

export type TablesText = Record<string, { types: string[]; rows: string[] }>;

export async function tablesAsText(w: Warehouse): Promise<TablesText> {
  const out: TablesText = {};
  for (const table of await w.listTables()) {
    const cols = await w.query(
      `SELECT column_name, data_type FROM duckdb_columns()
        WHERE schema_name = 'main' AND table_name = ? AND database_name = current_database() ORDER BY column_name`,
      [table],
    );
    const names = cols.rows.map((r) => String(r.column_name));
    const json = names.map((n) => `'${n}', CAST("${n}" AS VARCHAR)`).join(', ');
    const rows = await w.query(`SELECT CAST(json_object(${json}) AS VARCHAR) AS r FROM main."${table}" ORDER BY r`);
    out[table] = {
      types: cols.rows.map((r) => `${r.column_name} ${r.data_type}`),
      rows: rows.rows.map((r) => String(r.r)),
    };
  }
  return out;
}
