/** A table's columns as DuckDB's catalogue lists them, for code that reads tables of any schema or attached file. */
import type { Db } from './connection.js';
import { literal } from './sql.js';

/**
 * Columns of a table in a schema of this database (or of the attached `database`), with DuckDB's type names, in
 * order (empty: no table).
 */
export async function columnsOf(
  db: Db,
  schema: string,
  table: string,
  database?: string,
): Promise<Map<string, string>> {
  const r = await db.query(
    `SELECT column_name, data_type FROM duckdb_columns()
      WHERE database_name = ${database === undefined ? 'current_database()' : literal(database)}
        AND schema_name = ? AND table_name = ? ORDER BY column_index`,
    [schema, table],
  );
  return new Map(r.rows.map((row) => [String(row.column_name), String(row.data_type)]));
}
