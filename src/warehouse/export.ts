/**
 * Parquet export: `<out>/<table>/event_id=<id>/*.parquet` (Hive layout) for tables with event_id,
 * `<out>/<table>/*.parquet` otherwise; zstd. Current rows only unless `includeDeleted`.
 *
 * A full export of a table replaces its folder. With `partitions`, only the listed event partitions are rewritten:
 * their folders are deleted first (an event whose rows are all gone now must not keep stale files), then written
 * again with `OVERWRITE_OR_IGNORE`, which leaves every other partition on disk alone.
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Db } from './connection.js';
import { listStreamTables, readTableColumns } from './ddl.js';
import { ident, literal } from './sql.js';
import type { ExportOptions, ExportResult } from './types.js';

const TABLE_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

function countParquet(dir: string): number {
  if (!existsSync(dir)) return 0;
  let n = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) n += countParquet(join(dir, entry.name));
    else if (entry.name.endsWith('.parquet')) n++;
  }
  return n;
}

function partitionMap(partitions: ExportOptions['partitions']): Map<string, number[]> | null {
  if (!partitions) return null;
  const map = new Map<string, number[]>();
  const entries: [string, readonly number[]][] = Array.isArray(partitions)
    ? partitions.map((p) => [p.table, p.eventIds])
    : Object.entries(partitions);
  for (const [table, ids] of entries) {
    for (const id of ids) {
      if (!Number.isSafeInteger(id)) throw new Error(`export: partition event_id ${id} of ${table} is not an integer`);
    }
    map.set(table, [...new Set([...(map.get(table) ?? []), ...ids])]);
  }
  return map;
}

export async function exportParquet(db: Db, opts: ExportOptions): Promise<ExportResult> {
  const out = resolve(opts.out);
  const existing = await listStreamTables(db);
  const partitions = partitionMap(opts.partitions);
  const requested = opts.tables ?? (partitions ? [...partitions.keys()] : existing);
  const unknown = requested.filter((t) => !existing.includes(t));
  if (unknown.length) {
    throw new Error(`export: no such table: ${unknown.join(', ')} (tables: ${existing.join(', ') || 'none yet'})`);
  }
  mkdirSync(out, { recursive: true });
  const tables: string[] = [];
  let files = 0;
  for (const table of requested) {
    // Names come from the database, but they also become folder names that get deleted: keep them plain.
    if (!TABLE_NAME_RE.test(table)) throw new Error(`export: table name ${table} is not a plain identifier`);
    const columns = await readTableColumns(db, table);
    if (!columns) continue;
    const dir = join(out, table);
    const filters: string[] = [];
    if (!opts.includeDeleted) filters.push(`"_deleted_at" IS NULL`);
    const partitioned = columns.has('event_id');
    const only = partitions?.get(table);
    if (partitioned && only !== undefined) {
      // Nothing to rewrite: the table's other partitions stay as they are.
      if (only.length === 0) {
        tables.push(table);
        files += countParquet(dir);
        continue;
      }
      for (const id of only) rmSync(join(dir, `event_id=${id}`), { recursive: true, force: true });
      filters.push(`"event_id" IN (${only.join(', ')})`);
    } else {
      rmSync(dir, { recursive: true, force: true });
    }
    mkdirSync(dir, { recursive: true });
    const where = filters.length ? `WHERE ${filters.join(' AND ')}` : '';
    const select = `SELECT * FROM main.${ident(table)} ${where}`;
    if (partitioned) {
      await db.run(
        `COPY (${select}) TO ${literal(dir)}
          (FORMAT parquet, COMPRESSION zstd, PARTITION_BY ("event_id"), OVERWRITE_OR_IGNORE)`,
      );
    } else {
      await db.run(`COPY (${select}) TO ${literal(join(dir, 'data.parquet'))} (FORMAT parquet, COMPRESSION zstd)`);
    }
    tables.push(table);
    files += countParquet(dir);
  }
  return { files, tables };
}
