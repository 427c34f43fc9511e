/**
 * The files and folders a warehouse keeps beside itself, named once. Its own code writes them (the WAL is DuckDB's,
 * the staging folder stage.ts's, the query copy query-copy.ts's, the daemon's socket and the lake's staging folder
 * the CLI's), and the CLI refuses an output (`--snapshot`, a local `--parquet-out`, `export --out`) that would land
 * on one of them: a snapshot renamed over `<db>.wal` or the query copy destroys what the warehouse or the daemon
 * holds, and an export folder inside the staging folder is removed with it.
 */
import { basename, dirname, join } from 'node:path';

/** DuckDB's write-ahead log of the database at `db`. */
function walPathOf(db: string): string {
  return `${db}.wal`;
}

/** Where pages wait to be merged (stage.ts): a folder beside the database. */
export function stagePathOf(db: string): string {
  return `${db}.stage`;
}

/** The daemon's copy of the warehouse that queries through it read (query-copy.ts). */
export function queryCopyPathOf(db: string): string {
  return `${db}.query-copy`;
}

/** The daemon's socket, when the path is short enough for one (src/daemon/socket.ts falls back to the temp folder). */
export function socketPathBeside(db: string): string {
  return `${db}.sock`;
}

/** `.evsync.duckdb.lake-staging` beside `evsync.duckdb`: where lake uploads are staged (same disk, same owner). */
export function lakeStagingPathOf(db: string): string {
  return join(dirname(db), `.${basename(db)}.lake-staging`);
}

export interface OwnPath {
  path: string;
  /** What it is, for a message that goes on "of the warehouse <db>" (but for the warehouse itself). */
  what: string;
}

interface WarehouseLayout {
  /** Files, each a name no output may take. */
  files: OwnPath[];
  /** Name prefixes of temporary files (`<query copy>.tmp-<hex>`). */
  temporaries: OwnPath[];
  /** Folders whose contents are the warehouse's: no output may be one or lie inside one. */
  folders: OwnPath[];
}

/** Every path the warehouse at `db` (absolute) writes beside itself. */
export function warehouseLayout(db: string): WarehouseLayout {
  const copy = queryCopyPathOf(db);
  return {
    files: [
      { path: db, what: 'the warehouse itself' },
      { path: walPathOf(db), what: 'the write-ahead log' },
      { path: socketPathBeside(db), what: "the daemon's socket" },
      { path: copy, what: "the daemon's query copy" },
      { path: walPathOf(copy), what: "the write-ahead log of the daemon's query copy" },
    ],
    temporaries: [{ path: `${copy}.tmp-`, what: "a temporary file of the daemon's query copy" }],
    folders: [
      { path: stagePathOf(db), what: 'the staging folder' },
      { path: lakeStagingPathOf(db), what: 'the lake staging folder' },
    ],
  };
}
