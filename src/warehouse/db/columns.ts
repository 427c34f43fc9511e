/** A table's columns as DuckDB's catalogue lists them: of any schema or attached file (columnsOf), or one table fast. */
import type { Db } from './connection.js';
import { ident, literal } from './sql.js';

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

/**
 * Columns of a table known to exist, as columnsOf gives them, for a hot path: DESCRIBE binds that table alone, where
 * duckdb_columns() lists every table's and view's columns (milliseconds on a warehouse with its views, per batch).
 */
export async function describeTable(db: Db, schema: string, table: string): Promise<Map<string, string>> {
  const r = await db.query(`DESCRIBE ${schema}.${ident(table)}`);
  return new Map(r.rows.map((row) => [String(row.column_name), String(row.column_type)]));
}
