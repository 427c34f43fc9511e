/**
 * What readers see, per partition (a table's event): `id@updated_at` of the current rows, from the simulator's
 * ground truth or from a reader process (the snapshot, the Parquet), and the two questions the tests of readers
 * beside a run ask: did a partition lose a row that still exists, and did a partition's repairs land.
 */
import { join } from 'node:path';
import type { Simulator } from '../../src/simulator/index.js';
import { DuckDbReader } from './duckdb-reader.js';

/** Per `<table>/<event_id>`: `id@updated_at` of each current row. */
export type Partitions = Map<string, Set<string>>;

export function partitionKey(table: string, eventId: unknown): string {
  return `${table}/${String(eventId)}`;
}

/** The source's current rows of `tables`, per partition. */
export function truthPartitions(sim: Simulator, tables: readonly string[]): Partitions {
  const out: Partitions = new Map();
  for (const table of tables) {
    for (const r of sim.truth(table).records) {
      const key = partitionKey(table, r.event_id);
      const rows = out.get(key) ?? new Set<string>();
      rows.add(`${String(r.id)}@${String(r.updated_at)}`);
      out.set(key, rows);
    }
  }
  return out;
}

/** A reader's current rows of `table`, read from `from` (a table of the snapshot, or a read_parquet(...)). */
export async function readerPartitions(reader: DuckDbReader, table: string, from: string): Promise<Partitions> {
  const rows = await reader.query(
    `SELECT event_id, list(CAST(id AS VARCHAR) || '@' || strftime(updated_at, '%Y-%m-%d %H:%M:%S')) AS rows
       FROM ${from} WHERE _deleted_at IS NULL GROUP BY event_id`,
  );
  return new Map(rows.map((r) => [partitionKey(table, r.event_id), new Set((r.rows as string[] | null) ?? [])]));
}

/**
 * What another process reads now: the tables' partitions in the snapshot and in the Parquet; null when a glob read
 * met a file a publish removed between DuckDB's listing and its read (README, "What readers see": a glob reader
 * retries).
 */
export async function readersView(
  snapshot: string,
  parquet: string,
  tables: readonly string[],
): Promise<{ snap: Partitions; pq: Partitions } | null> {
  const reader = await DuckDbReader.open(snapshot);
  try {
    const snap: Partitions = new Map();
    const pq: Partitions = new Map();
    for (const t of tables) {
      for (const [k, v] of await readerPartitions(reader, t, `main.${t}`)) snap.set(k, v);
      const files = `read_parquet('${join(parquet, t)}/**/*.parquet', hive_partitioning = true)`;
      for (const [k, v] of await readerPartitions(reader, t, files)) pq.set(k, v);
    }
    return { snap, pq };
  } catch (err) {
    if (err instanceof Error && /No such file or directory/.test(err.message)) return null;
    throw err;
  } finally {
    await reader.close();
  }
}

const ids = (rows: Iterable<string> | undefined) => new Set([...(rows ?? [])].map((r) => r.split('@')[0]));

/**
 * Rows a reader lost: of each partition, the ids it showed before the run that the source still has, missing now.
 * A run only adds and updates rows, and marks deleted what the source deleted: this is empty at every publish.
 */
export function lostRows(now: Partitions, before: Partitions, source: Partitions): string[] {
  const lost: string[] = [];
  for (const [key, rows] of before) {
    const kept = ids(source.get(key));
    const shown = ids(now.get(key));
    for (const id of ids(rows)) if (kept.has(id) && !shown.has(id)) lost.push(`${key}#${id}`);
  }
  return lost.sort();
}

/** Rows of the source's partition `key` a reader does not show as they are (missing, or an older version). */
export function unrepaired(now: Partitions, source: Partitions, key: string): string[] {
  const shown = now.get(key) ?? new Set<string>();
  return [...(source.get(key) ?? [])].filter((r) => !shown.has(r)).sort();
}

/** Whether two views hold the same partitions with the same rows. */
export function samePartitions(a: Partitions, b: Partitions): boolean {
  if (a.size !== b.size) return false;
  for (const [key, rows] of a) {
    const other = b.get(key);
    if (!other || other.size !== rows.size || [...rows].some((r) => !other.has(r))) return false;
  }
  return true;
}
