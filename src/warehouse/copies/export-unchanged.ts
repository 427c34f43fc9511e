/**
 * Which partitions of a Parquet output must be written again (issue 35): every file an export writes records in its
 * manifest entry (`source`) the fingerprint of the warehouse partition it was written from (table-parts.ts, one part
 * per event), so a partition whose rows did not change since is not written again, no byte, whoever says it was
 * touched (a run's page that re-read identical rows, a merge that left them alone). The local folder (export.ts)
 * and the lake (src/outputs/lake/publish.ts) ask the same question here.
 *
 * A source is the part's fingerprint prefixed by a digest of the table's columns: a column added or widened rewrites
 * every partition (its files lack or mistype the column) though no row was written. A manifest from before sources
 * (no `source`) matches nothing: its partitions are written once more, as they always were.
 */
import { createHash } from 'node:crypto';
import type { Db } from '../db/connection.js';
import { ident } from '../db/sql.js';
import { readTableColumns } from '../load/ddl.js';
import type { ManifestFile } from './export-manifest.js';
import { columnsSignature, historyId, keptHistories, tableParts } from './table-parts.js';

/** The Hive partition column of the Parquet outputs (folder and lake). */
export const PARTITION_COLUMN = 'event_id';
/** The Hive folder value of rows without an event (`event_id=NULL`, as DuckDB's own partitioned writes name it). */
export const NULL_PARTITION = 'NULL';

/**
 * The history outputs: every version of a stream's records that changed, as its `history.<stream>` view gives them
 * (history/history-views.ts, derived columns included: what users read; a record that never changed is its row in the
 * stream's own output), written beside the stream's own output under `history/<stream>` (`<out>/history/
 * registrants/event_id=10/...`, `<prefix>/history/registrants/account=<id>/event_id=10/...`), partitioned as the
 * stream is. An output id is a stream's name or `history/<stream>`.
 */
const HISTORY_OUTPUT = 'history';

export function historyOutputId(stream: string): string {
  return `${HISTORY_OUTPUT}/${stream}`;
}

/** The stream whose history the output id names, or null (a stream's own output). */
export function historyOutputStream(id: string): string | null {
  return id.startsWith(`${HISTORY_OUTPUT}/`) ? id.slice(HISTORY_OUTPUT.length + 1) : null;
}

/** The history outputs of the stream tables `tables` that keep one (table-parts.ts keptHistories). */
export async function historyOutputs(db: Db, tables: readonly string[]): Promise<string[]> {
  return (await keptHistories(db, tables)).map(historyOutputId);
}

/**
 * Whether an output's files hold deleted rows: a history holds every version, deletes included (`_is_deleted`), so
 * its outputs always do, whatever the stream's output chose.
 */
export function includesDeleted(id: string, includeDeleted: boolean): boolean {
  return historyOutputStream(id) !== null || includeDeleted;
}

/**
 * Per partition as a manifest's files name it (`file.partition.event_id`: `"10"`, NULL_PARTITION for rows without
 * an event; `""` for a table without event_id, written whole), the source of its rows now. A partition with no row is
 * absent.
 */
export type PartFingerprints = Map<string, string>;

/** The partition a manifest file belongs to, in PartFingerprints' keys. */
export function partitionKey(file: Pick<ManifestFile, 'partition'>): string {
  return file.partition[PARTITION_COLUMN] ?? '';
}

/** The columns every write of a row sets (table-parts.ts): without them no source can be told. */
const WRITE_COLUMNS = ['_synced_at', '_run_id', '_deleted_at'];

/**
 * The sources of `table`'s partitions now, as an export with or without deleted rows (`includeDeleted`) writes them:
 * without, an event whose rows are all deleted has no file, so no partition (else it would never match and be
 * written, empty, at every export). Null for a table whose rows carry no record of their writes (not a stream table
 * evsync loads: every partition asked for is written, as always).
 *
 * Read them BEFORE the COPY that writes the files: a write landing between the two is in the files but not in the
 * recorded source, so the next export sees a source that differs and writes that partition once more (a write too
 * many, never a change missed).
 */
export async function partFingerprints(
  db: Db,
  table: string,
  includeDeleted: boolean,
): Promise<PartFingerprints | null> {
  const stream = historyOutputStream(table);
  if (stream !== null) return historyFingerprints(db, stream);
  const columns = await readTableColumns(db, table);
  if (!columns || !WRITE_COLUMNS.every((c) => columns.has(c))) return null;
  const out: PartFingerprints = new Map();
  const partitioned = columns.has(PARTITION_COLUMN);
  const digest = createHash('sha256')
    .update(await columnsSignature(db, table))
    .digest('hex')
    .slice(0, 16);
  const written = partitioned && !includeDeleted ? await eventsWithLiveRows(db, table) : null;
  for (const part of await tableParts(db, table, Number.POSITIVE_INFINITY)) {
    // An empty partitioned table is one empty part `a`: no partition, no file.
    if (partitioned && part.eventId === null && part.rows === 0) continue;
    const key = !partitioned ? '' : part.eventId === null ? NULL_PARTITION : String(part.eventId);
    if (written && !written.has(key)) continue;
    out.set(key, `${digest}:${part.fingerprint}`);
  }
  return out;
}

/** The source of a partition that has no row to write (a history output's partition with no kept version). */
const NO_ROWS = 'no-rows';

/**
 * The sources of the partitions of a stream's history output (historyOutputId): a partition's rows are every version
 * of its records that changed, its kept versions and their current rows (deleted ones included), so its source is
 * both fingerprints (table-parts.ts), under a digest of both tables' columns; a partition with no kept version has
 * NO_ROWS. Null when the stream keeps no history (no `_history.<stream>`, or turned off): it has no history output.
 */
async function historyFingerprints(db: Db, stream: string): Promise<PartFingerprints | null> {
  if ((await keptHistories(db, [stream])).length === 0) return null;
  const columns = await readTableColumns(db, stream);
  if (!columns) return null;
  const partitioned = columns.has(PARTITION_COLUMN);
  const digest = createHash('sha256')
    .update(await columnsSignature(db, stream))
    .update('\n')
    .update(await columnsSignature(db, historyId(stream)))
    .digest('hex')
    .slice(0, 16);
  const both = new Map<string, [string, string]>();
  for (const [i, id] of [stream, historyId(stream)].entries()) {
    for (const part of await tableParts(db, id, Number.POSITIVE_INFINITY)) {
      if (part.rows === 0) continue;
      const key = !partitioned ? '' : part.eventId === null ? NULL_PARTITION : String(part.eventId);
      const pair = both.get(key) ?? ['-', '-'];
      pair[i] = part.fingerprint;
      both.set(key, pair);
    }
  }
  // A partition with no kept version has no history rows (the output holds the records that changed): its source
  // says so (NO_ROWS), and it is unchanged while it has no file (or, a table's one empty file, that file).
  return new Map(
    [...both].map(([key, [current, kept]]) => [
      key,
      kept === '-' ? `${digest}:${NO_ROWS}` : `${digest}:${current}+${kept}`,
    ]),
  );
}

/** The partitions (PartFingerprints' keys) of a partitioned table holding a row not deleted. */
async function eventsWithLiveRows(db: Db, table: string): Promise<Set<string>> {
  const r = await db.query(
    `SELECT DISTINCT ${ident(PARTITION_COLUMN)} AS e FROM main.${ident(table)} WHERE "_deleted_at" IS NULL`,
  );
  return new Set(r.rows.map((row) => (row.e === null || row.e === undefined ? NULL_PARTITION : String(row.e))));
}

/**
 * Of the partitions asked for (`asked`: event ids; null: the whole table), those to write again: event ids ([]:
 * nothing), or null for the whole table (a partition no event id names, `""` or NULL_PARTITION, changed). A partition is
 * unchanged when every file of it the manifest lists carries the live source and is still in the output
 * (`present`), or when it has neither rows nor files. A partition with files and no rows any more is written
 * (nothing), which removes its files.
 */
export function partitionsToWrite(
  files: readonly ManifestFile[],
  live: PartFingerprints | null,
  asked: number[] | null,
  present: (file: ManifestFile) => boolean,
): number[] | null {
  if (live === null) return asked;
  const recorded = new Map<string, ManifestFile[]>();
  for (const file of files) {
    const key = partitionKey(file);
    recorded.set(key, [...(recorded.get(key) ?? []), file]);
  }
  const keys = asked ? asked.map(String) : [...new Set([...recorded.keys(), ...live.keys()])];
  const changed = keys.filter((key) => {
    const source = live.get(key);
    const written = recorded.get(key) ?? [];
    if (written.length === 0) return source !== undefined && !source.endsWith(`:${NO_ROWS}`);
    return source === undefined || !written.every((f) => f.source === source && present(f));
  });
  if (changed.some((key) => !/^-?\d+$/.test(key))) return null;
  return changed.map(Number);
}
