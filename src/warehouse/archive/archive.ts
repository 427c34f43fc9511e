/**
 * The archive: every page of records evsync loaded and every webhook delivery it accepted, as evsync received them
 * (scrubbed of secrets), append-only, beside the warehouse in `<database>.archive/`. Why this format, measured by
 * bench/archive-format.ts (bench/results/archive-format.json, 150 `large` pages):
 *
 * - On the live path an entry is a file of its own in the spool (`spool/g<gen>/<entry>.json`, fsynced with its folder
 *   before the caller commits the page) and a line of `meta.jsonl` beside it, with no compression in Node (gzip -1
 *   cost 10 us a row, brotli 13; Node 20 has no zstd): 1.8 us a row on `large` registrant pages (1.4 KB a row).
 *   A list page is kept as the service's answer itself (src/sync/archived-page.ts), not written out again: the
 *   bytes it came in when the scrub found nothing in it, else its text (written as strings, never joined first).
 * - Generations of the spool (32 MiB each, four at a time: ROLL_GENERATIONS) are rolled up by DuckDB (read_text:
 *   the bodies never cross into JavaScript) into two Parquet files, `segments/<gen>-<last entry>.pages.parquet`
 *   (entry, body: zstd level 1, no dictionary) and `.meta.parquet` (the entries' metadata): 12.4% of the raw JSON of
 *   a `large` backfill, 3.6-4 us a row (zstd's own share about 2.2; lz4_raw and snappy cost as much on these pages,
 *   for 23-25% of the raw JSON). A DuckDB table was ruled out: `USING COMPRESSION zstd` does nothing in files of
 *   the default storage version (198% of raw), 15-53 us a row, +0.7-1.8 GB RSS. zstd's faster levels save little
 *   (-3: 3.0 us, 17.8%; -1 on a backfill's sync-cost: within the bench's noise).
 *
 * With a remote (`archive.to` in the configuration: the lake), a segment's pages file goes there once rolled up
 * (`<gen>-<last>.remote.json` records it, then the local file is removed); its small metadata file stays beside the
 * warehouse too, so `status` and prune read it locally. A rebuild fetches a remote segment when it reads it.
 *
 * Appends are synchronous, so a roll-up's switch to a new generation never splits an entry. A kill at any moment
 * leaves either the spool generation or its segment (the pages file is renamed into place last; the spool is
 * removed after it), and an open finishes what a killed roll-up left.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { Db } from '../db/connection.js';
import { fsyncPath } from '../db/fsync.js';
import { literal } from '../db/sql.js';

/** What an entry says besides its body. */
export interface EntryMeta {
  kind: 'page' | 'delivery';
  /** The stream whose records the page holds; for a delivery, the webhook's object as the service named it. */
  stream: string;
  account: string | null;
  runId: string | null;
  /** When evsync received it (its own clock, UTC `YYYY-MM-DD HH:MM:SS.mmm`). */
  at: string;
  /** The service's Date header of the answer, when it had one. */
  serverDate: string | null;
  /** The request that produced it: path, window, page (a delivery: its id). */
  request: Record<string, unknown> | null;
  rows: number;
}

/** Object storage for the archive's segments (the lake: src/outputs/archive-remote.ts), by file name. */
export interface ArchiveRemote {
  /** `s3://bucket/prefix/...` of a name, for messages. */
  describe(name: string): string;
  put(name: string, file: string, size: number): Promise<void>;
  /** Writes the object to `to`; false when there is none. */
  get(name: string, to: string): Promise<boolean>;
  remove(names: readonly string[]): Promise<void>;
  /** Releases the connection (the warehouse that was opened with the remote calls it when it closes). */
  close?(): void;
}

export interface ArchiveStats {
  entries: number;
  /** Of the entries, webhook deliveries (the others are pages of records). */
  deliveries: number;
  bytes: number;
  /** The earliest entry's time (null when empty). */
  since: string | null;
  latest: string | null;
  /** Entries still in the spool (not yet compressed). */
  spooled: number;
  /** Why this process's last roll-up failed (its spool is kept and rolled at the next one), if it did. */
  rollUpError?: string;
}

const META_COLUMNS = `{${Object.entries({
  entry: 'BIGINT',
  kind: 'VARCHAR',
  stream: 'VARCHAR',
  account: 'VARCHAR',
  runId: 'VARCHAR',
  at: 'TIMESTAMP',
  serverDate: 'VARCHAR',
  request: 'JSON',
  rows: 'INTEGER',
  bytes: 'BIGINT',
})
  .map(([k, v]) => `"${k}": '${v}'`)
  .join(', ')}}`;
/**
 * Bytes of bodies per Parquet row group (at most 64 entries, at least one): DuckDB holds a group in memory while it
 * writes it and a replay while it reads it, so a group of the largest pages must fit the archive's memory limit.
 */
const ROW_GROUP_BYTES = 8 * 1_048_576;
const MAX_ROW_GROUP_ENTRIES = 64;
/**
 * A generation is closed once its bodies pass this many bytes (and when the warehouse closes). DuckDB's read_text
 * hands a whole generation over in one chunk, so its memory is a generation plus a row group being written (and
 * that group compressed): 64 MiB generations needed 128 MB (a large backfill's roll-up failed at 64 MB).
 */
const GEN_BYTES = 32 * 1_048_576;
/**
 * Closed generations are rolled up once this many wait (and when the warehouse closes), one after the other on one
 * DuckDB instance: an instance opened and closed per generation cost 13 ms of CPU each time (0.6 us a row of a
 * `large` backfill), and one kept open between roll-ups would hold its memory in a daemon.
 */
const ROLL_GENERATIONS = 4;
/** The archive's DuckDB (roll-ups, a rebuild's reads): a generation, a row group twice over, and room. */
const ARCHIVE_MEMORY = '96MB';

const pad = (n: number, width: number) => String(n).padStart(width, '0');

interface Pruned {
  /** The date the user pruned before. */
  before: string;
  /** The last entry removed: entries up to it are gone, and their numbers are never given again. */
  through: number;
  gen: number;
}

function readPruned(dir: string): Pruned | null {
  const path = join(dir, 'pruned.json');
  if (!existsSync(path)) return null;
  const p = JSON.parse(readFileSync(path, 'utf8')) as Partial<Pruned>;
  return { before: String(p.before ?? ''), through: Number(p.through ?? 0), gen: Number(p.gen ?? 0) };
}

/** A whole segment: its pages file (null: in the remote), metadata file, last entry, name and remote size. */
interface Segment {
  pages: string | null;
  meta: string;
  last: number;
  name: string;
  remoteBytes: number;
}

function readRemoteRecord(path: string): { bytes: number } | null {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { bytes?: unknown };
    return { bytes: Number(parsed.bytes ?? 0) };
  } catch {
    return null;
  }
}

function writePruned(dir: string, p: Pruned): void {
  const path = join(dir, 'pruned.json');
  writeFileSync(`${path}.tmp`, JSON.stringify(p), { mode: 0o600 });
  fsyncPath(`${path}.tmp`, 'r+');
  renameSync(`${path}.tmp`, path);
  fsyncPath(dir, 'r');
}

export class Archive {
  private nextEntry: number;
  private gen: number;
  private metaFd: number | null = null;
  private genBytes = 0;
  /** Generations closed since the last roll-up began. */
  private closedGens = 0;
  private rolling: Promise<void> = Promise.resolve();
  private db: Db | null = null;
  private closed = false;
  private rollUpError: string | null = null;
  /** Calls on the archive's DuckDB under way (withDuck). */
  private using = 0;
  /** The segments as last listed (segments()); null once this archive changed them. */
  private segmentList: Segment[] | null = null;

  /** The remote segment fetched last (a replay reads one segment's row groups over many windows). */
  private fetched: { pages: string; file: string } | null = null;

  private constructor(
    readonly dir: string,
    private readonly readOnly: boolean,
    state: { nextEntry: number; gen: number },
    private readonly remote: ArchiveRemote | null,
  ) {
    this.nextEntry = state.nextEntry;
    this.gen = state.gen;
  }

  /** The archive of the warehouse at `databasePath` (created on the first append). */
  static open(databasePath: string, opts: { readOnly?: boolean; remote?: ArchiveRemote | null } = {}): Archive {
    const dir = `${databasePath}.archive`;
    return new Archive(dir, opts.readOnly === true, Archive.scan(dir), opts.remote ?? null);
  }

  /** Where the segments go: the remote's location, or the folder beside the warehouse. */
  get where(): string {
    return this.remote ? this.remote.describe('') : this.dir;
  }

  private get spoolDir(): string {
    return join(this.dir, 'spool');
  }
  private get segmentsDir(): string {
    return join(this.dir, 'segments');
  }
  private genDir(gen: number): string {
    return join(this.spoolDir, `g${pad(gen, 9)}`);
  }

  /** The next entry and generation after everything on disk (what a prune removed included). */
  private static scan(dir: string): { nextEntry: number; gen: number } {
    const pruned = readPruned(dir);
    let last = pruned?.through ?? 0;
    let gen = pruned?.gen ?? 0;
    const segments = join(dir, 'segments');
    if (existsSync(segments)) {
      for (const f of readdirSync(segments)) {
        const m = /^(\d+)-(\d+)\.(?:pages|meta)\.parquet$/.exec(f);
        if (!m) continue;
        gen = Math.max(gen, Number(m[1]));
        last = Math.max(last, Number(m[2]));
      }
    }
    const spool = join(dir, 'spool');
    if (existsSync(spool)) {
      for (const g of readdirSync(spool)) {
        const m = /^g(\d+)$/.exec(g);
        if (!m) continue;
        gen = Math.max(gen, Number(m[1]));
        for (const f of readdirSync(join(spool, g))) {
          const e = /^(\d+)\.json$/.exec(f);
          if (e) last = Math.max(last, Number(e[1]));
        }
      }
    }
    return { nextEntry: last + 1, gen: gen + 1 };
  }

  /**
   * Appends one entry and makes it durable (body and directory fsynced) before returning its number:
   * call it before the transaction that commits what the entry holds. `body` is JSON text, already scrubbed, whole
   * or in parts written one after the other (a list page: its head, the answer as it came, its end); a part given
   * as bytes is UTF-8.
   */
  append(meta: EntryMeta, body: string | readonly (string | Uint8Array)[]): number {
    if (this.readOnly || this.closed) throw new Error(`archive ${this.dir} is not open for writing`);
    const entry = this.nextEntry++;
    const dir = this.genDir(this.gen);
    if (this.metaFd === null) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      this.metaFd = openSync(join(dir, 'meta.jsonl'), 'a', 0o600);
    }
    // Each part written as a string (encoded once, on its way to the file; the count of bytes written is its length):
    // a Buffer of the whole body first (1.4 MB a page of `large` registrants) cost the join of the parts into one
    // string, a copy, and garbage collections (V8 counts the Buffers' memory and collects as it grows).
    let bytes = 0;
    const fd = openSync(join(dir, `${pad(entry, 12)}.json`), 'wx', 0o600);
    try {
      for (const part of typeof body === 'string' ? [body] : body) {
        if (typeof part === 'string') {
          bytes += writeSync(fd, part);
          continue;
        }
        for (let at = 0; at < part.length; ) at += writeSync(fd, part, at, part.length - at);
        bytes += part.length;
      }
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    // The body and its name made durable; the metadata line is not fsynced on its own: a rebuild reads bodies by
    // their entry (the file's name), and a line a crash of the machine lost only leaves that entry out of `status`.
    writeSync(this.metaFd, `${JSON.stringify({ entry, ...meta, bytes })}\n`);
    fsyncPath(dir, 'r');
    this.genBytes += bytes;
    if (this.genBytes >= GEN_BYTES) {
      this.closeGeneration();
      if (this.closedGens >= ROLL_GENERATIONS) void this.rollUp().catch(() => undefined);
    }
    return entry;
  }

  /** Closes the spool's open generation (the next append starts another). */
  private closeGeneration(): void {
    if (this.metaFd === null) return;
    closeSync(this.metaFd);
    this.metaFd = null;
    this.gen += 1;
    this.genBytes = 0;
    this.closedGens += 1;
  }

  /** Closes the spool's generation and compresses every closed one into a segment (one roll-up at a time). */
  rollUp(): Promise<void> {
    this.closeGeneration();
    this.closedGens = 0;
    const run = this.rolling.then(() => this.withDuck(() => this.rollClosed(), true));
    this.rolling = run.then(
      () => {
        this.rollUpError = null;
      },
      (err: unknown) => {
        this.rollUpError = err instanceof Error ? err.message : String(err);
      },
    );
    return run;
  }

  private async duck(): Promise<Db> {
    if (!this.db) {
      this.db = await Db.open(':memory:', false, { memoryLimit: ARCHIVE_MEMORY });
      await this.db.run('SET threads = 1');
      // A replay reads each row group once: DuckDB's cache of the Parquet bytes would only hold memory.
      await this.db.run('SET enable_external_file_cache = false');
    }
    return this.db;
  }

  /**
   * Runs `work` on the archive's DuckDB; with `release`, closes it once nothing else uses it: a daemon rolls up or
   * answers `status` now and then, and an instance kept between would hold its memory (up to ARCHIVE_MEMORY) for
   * nothing. A rebuild's reads keep it (they come window after window) until the archive closes.
   */
  private async withDuck<T>(work: () => Promise<T>, release: boolean): Promise<T> {
    this.using += 1;
    try {
      return await work();
    } finally {
      this.using -= 1;
      if (release && this.using === 0 && this.db) {
        const db = this.db;
        this.db = null;
        await db.close();
      }
    }
  }

  /** Rolls every spool generation older than the open one (a killed roll-up's included). */
  private async rollClosed(): Promise<void> {
    // What a roll-up killed before its renames left (one roll-up at a time: none is being written now).
    if (existsSync(this.segmentsDir)) {
      for (const f of readdirSync(this.segmentsDir)) if (f.endsWith('.tmp')) rmSync(join(this.segmentsDir, f));
    }
    if (existsSync(this.spoolDir)) {
      for (const g of readdirSync(this.spoolDir).sort()) {
        const m = /^g(\d+)$/.exec(g);
        if (!m || Number(m[1]) >= this.gen) continue;
        await this.rollGeneration(Number(m[1]));
      }
    }
    await this.push();
  }

  private async rollGeneration(gen: number): Promise<void> {
    const dir = this.genDir(gen);
    const names = readdirSync(dir).filter((f) => /^\d+\.json$/.test(f));
    const entries = names.map((f) => Number.parseInt(f, 10));
    const bytes = names.reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
    const perGroup = Math.max(
      1,
      Math.min(MAX_ROW_GROUP_ENTRIES, Math.floor(ROW_GROUP_BYTES / Math.max(1, bytes / Math.max(1, names.length)))),
    );
    mkdirSync(this.segmentsDir, { recursive: true, mode: 0o700 });
    const done = readdirSync(this.segmentsDir).some(
      (f) => f.startsWith(`${pad(gen, 9)}-`) && (f.endsWith('.pages.parquet') || f.endsWith('.remote.json')),
    );
    if (entries.length > 0 && !done) {
      const last = Math.max(...entries);
      const base = join(this.segmentsDir, `${pad(gen, 9)}-${pad(last, 12)}`);
      const db = await this.duck();
      // Metadata lines of entries whose body file was never written (a kill between the two) are left out. The bodies
      // are read in the files' order (their names are their entries, zero-padded; one thread): sorting them would
      // hold every body of the generation in memory.
      await db.run(
        `COPY (SELECT m.* FROM read_json(${literal(join(dir, 'meta.jsonl'))}, format = 'newline_delimited',
                 columns = ${META_COLUMNS}, ignore_errors = true) m
               WHERE m.entry IN (${entries.join(',')}) ORDER BY m.entry)
           TO ${literal(`${base}.meta.parquet.tmp`)} (FORMAT parquet, COMPRESSION zstd)`,
      );
      await db.run(
        `COPY (SELECT CAST(regexp_extract(filename, '(\\d+)\\.json$', 1) AS BIGINT) AS entry, content AS body
                 FROM read_text(${literal(join(dir, '*.json'))}))
           TO ${literal(`${base}.pages.parquet.tmp`)}
           (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, DICTIONARY_SIZE_LIMIT 0, ROW_GROUP_SIZE ${perGroup})`,
      );
      for (const f of [`${base}.meta.parquet.tmp`, `${base}.pages.parquet.tmp`]) fsyncPath(f, 'r+');
      renameSync(`${base}.meta.parquet.tmp`, `${base}.meta.parquet`);
      renameSync(`${base}.pages.parquet.tmp`, `${base}.pages.parquet`);
      fsyncPath(this.segmentsDir, 'r');
    }
    rmSync(dir, { recursive: true, force: true });
    this.segmentList = null;
  }

  /**
   * Segments, oldest first: their pages file (local path, or null when it is remote), metadata file, last entry and
   * name. A segment is whole once its pages file is in place, here or (remote.json) in the remote.
   */
  private segments(): Segment[] {
    // Listed once and kept until this archive changes them (a roll-up, a push, a prune): a rebuild asks for every
    // window of pages, and the folder's listing and remote records were read again each time.
    this.segmentList ??= this.listSegments();
    return this.segmentList;
  }

  private listSegments(): Segment[] {
    if (!existsSync(this.segmentsDir)) return [];
    const files = new Set(readdirSync(this.segmentsDir));
    const out: Segment[] = [];
    for (const f of files) {
      const m = /^((\d+)-(\d+))\.meta\.parquet$/.exec(f);
      if (!m) continue;
      const name = m[1] as string;
      const local = files.has(`${name}.pages.parquet`);
      const record = join(this.segmentsDir, `${name}.remote.json`);
      const remote = files.has(`${name}.remote.json`) ? readRemoteRecord(record) : null;
      if (!local && remote === null) continue;
      out.push({
        pages: local ? join(this.segmentsDir, `${name}.pages.parquet`) : null,
        meta: join(this.segmentsDir, f),
        last: Number(m[3]),
        name,
        remoteBytes: local ? 0 : (remote?.bytes ?? 0),
      });
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Sends the local pages files of whole segments to the remote (a kill before the record is sent again). */
  private async push(): Promise<void> {
    if (!this.remote || this.readOnly) return;
    for (const s of this.segments()) {
      if (s.pages === null) continue;
      const size = statSync(s.pages).size;
      await this.remote.put(`${s.name}.pages.parquet`, s.pages, size);
      await this.remote.put(`${s.name}.meta.parquet`, s.meta, statSync(s.meta).size);
      const record = join(this.segmentsDir, `${s.name}.remote.json`);
      const text = JSON.stringify({ bytes: size, at: this.remote.describe(`${s.name}.pages.parquet`) });
      writeFileSync(`${record}.tmp`, text, { mode: 0o600 });
      fsyncPath(`${record}.tmp`, 'r+');
      renameSync(`${record}.tmp`, record);
      fsyncPath(this.segmentsDir, 'r');
      rmSync(s.pages);
      this.segmentList = null;
    }
  }

  /** A segment's pages file to read: its local path, or the remote's copy fetched beside the archive. */
  private async readable(s: Segment): Promise<string> {
    if (s.pages !== null) return s.pages;
    if (!this.remote) throw new Error(`archive segment ${s.name} is in a remote this archive was not opened with`);
    if (this.fetched?.pages === s.name) return this.fetched.file;
    this.dropFetched();
    const file = join(this.dir, `fetched-${s.name}.pages.parquet`);
    if (!(await this.remote.get(`${s.name}.pages.parquet`, file))) {
      throw new Error(`archive segment ${this.remote.describe(`${s.name}.pages.parquet`)} is missing`);
    }
    this.fetched = { pages: s.name, file };
    return file;
  }

  private dropFetched(): void {
    if (this.fetched) rmSync(this.fetched.file, { force: true });
    this.fetched = null;
  }

  /** Spooled entries: number to body path, and their metadata lines. */
  private spooled(): Map<number, string> {
    const out = new Map<number, string>();
    if (!existsSync(this.spoolDir)) return out;
    for (const g of readdirSync(this.spoolDir)) {
      if (!/^g\d+$/.test(g)) continue;
      for (const f of readdirSync(join(this.spoolDir, g))) {
        const m = /^(\d+)\.json$/.exec(f);
        if (m) out.set(Number(m[1]), join(this.spoolDir, g, f));
      }
    }
    return out;
  }

  /**
   * Done reading bodies (a rebuild's replay ended): the DuckDB instance its reads kept is closed unless a roll-up
   * uses it (which closes it when done). Kept into a rebuild's comparison, it held its memory beside the largest
   * join of the rebuild.
   */
  async doneReading(): Promise<void> {
    await this.withDuck(async () => undefined, true);
  }

  /**
   * The bodies of `entries` (JSON text), in the order asked; an entry the archive does not hold is absent from the
   * map. Reads the spool's files and the segments' row groups that hold the rest.
   */
  async bodies(entries: readonly number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    if (entries.length === 0) return out;
    const spool = this.spooled();
    const rest: number[] = [];
    for (const e of entries) {
      const path = spool.get(e);
      if (path) out.set(e, readFileSync(path, 'utf8'));
      else rest.push(e);
    }
    if (rest.length === 0) return out;
    const lo = Math.min(...rest);
    const hi = Math.max(...rest);
    const wanted = rest.map((e) => Math.trunc(e)).join(',');
    let first = 0;
    for (const s of this.segments()) {
      const from = first;
      first = s.last + 1;
      if (s.last < lo || from > hi) continue;
      // Counted as a use (a roll-up ending meanwhile does not close the instance under it), kept for the next read.
      const r = await this.withDuck(
        async () =>
          (await this.duck()).query(
            `SELECT entry, body FROM read_parquet(${literal(await this.readable(s))})
              WHERE entry BETWEEN ${lo} AND ${hi} AND entry IN (${wanted})`,
          ),
        false,
      );
      for (const row of r.rows) out.set(Number(row.entry), String(row.body));
    }
    return out;
  }

  /** How much the archive holds, and since when. */
  stats(): Promise<ArchiveStats> {
    return this.withDuck(() => this.statsNow(), true);
  }

  private async statsNow(): Promise<ArchiveStats> {
    let bytes = 0;
    const segments = this.segments();
    for (const s of segments) {
      bytes += s.remoteBytes + statSync(s.meta).size;
      if (s.pages !== null) bytes += statSync(s.pages).size;
    }
    const spool = this.spooled();
    for (const path of spool.values()) bytes += statSync(path).size;
    let entries = spool.size;
    let deliveries = 0;
    let since: string | null = null;
    let latest: string | null = null;
    const metaFiles = segments.map((s) => s.meta);
    const spoolMeta = existsSync(this.spoolDir)
      ? readdirSync(this.spoolDir)
          .filter((g) => /^g\d+$/.test(g))
          .map((g) => join(this.spoolDir, g, 'meta.jsonl'))
          .filter((f) => existsSync(f))
      : [];
    if (metaFiles.length > 0) {
      const db = await this.duck();
      const r = await db.query(
        `SELECT count(*) AS n, count(*) FILTER (WHERE kind = 'delivery') AS d, strftime(min("at"), '%Y-%m-%d %H:%M:%S') AS since, strftime(max("at"), '%Y-%m-%d %H:%M:%S') AS latest
           FROM read_parquet([${metaFiles.map(literal).join(',')}])`,
      );
      const row = r.rows[0];
      entries += Number(row?.n ?? 0);
      deliveries += Number(row?.d ?? 0);
      since = row?.since == null ? null : String(row.since);
      latest = row?.latest == null ? null : String(row.latest);
    }
    for (const f of spoolMeta) {
      for (const line of readFileSync(f, 'utf8').split('\n')) {
        if (!line) continue;
        try {
          const meta = JSON.parse(line) as { at?: unknown; kind?: unknown };
          if (meta.kind === 'delivery') deliveries += 1;
          const at = String(meta.at ?? '').slice(0, 19);
          if (!at) continue;
          if (since === null || at < since) since = at;
          if (latest === null || at > latest) latest = at;
        } catch {
          // A line a kill cut short: its entry has no body either.
        }
      }
    }
    return {
      entries,
      deliveries,
      bytes,
      since,
      latest,
      spooled: spool.size,
      ...(this.rollUpError ? { rollUpError: this.rollUpError } : {}),
    };
  }

  /**
   * Removes the segments whose every entry is older than `before` (UTC `YYYY-MM-DD[ HH:MM:SS]`); returns how many
   * entries and bytes went. The spool is rolled up first, so what is pruned is whole segments.
   */
  async prune(before: string): Promise<{ entries: number; bytes: number; kept: number }> {
    await this.rollUp();
    return this.withDuck(() => this.pruneNow(before), true);
  }

  private async pruneNow(before: string): Promise<{ entries: number; bytes: number; kept: number }> {
    let entries = 0;
    let bytes = 0;
    let kept = 0;
    const db = await this.duck();
    const segments = this.segments();
    let through = readPruned(this.dir)?.through ?? 0;
    let gen = readPruned(this.dir)?.gen ?? 0;
    for (const s of segments) {
      const r = await db.query(
        `SELECT count(*) AS n, max("at") < CAST(? AS TIMESTAMP) AS old FROM read_parquet(${literal(s.meta)})`,
        [before],
      );
      const n = Number(r.rows[0]?.n ?? 0);
      if (r.rows[0]?.old !== true) {
        kept += n;
        continue;
      }
      bytes += s.remoteBytes + statSync(s.meta).size + (s.pages !== null ? statSync(s.pages).size : 0);
      // Recorded first: entry numbers are never given again, and a rebuild knows what is gone (before it is).
      through = Math.max(through, s.last);
      gen = Math.max(gen, Number(s.name.split('-')[0]));
      writePruned(this.dir, { before, through, gen });
      // The pages file first: a segment without it is no segment, so a kill in between leaves no half.
      if (s.pages !== null) rmSync(s.pages);
      else {
        await this.remote?.remove([`${s.name}.pages.parquet`, `${s.name}.meta.parquet`]);
        rmSync(join(this.segmentsDir, `${s.name}.remote.json`));
      }
      rmSync(s.meta);
      this.segmentList = null;
      entries += n;
    }
    fsyncPath(this.segmentsDir, 'r');
    return { entries, bytes, kept };
  }

  /** What a prune removed: entries up to `through` (null: nothing was ever pruned). */
  pruned(): { before: string; through: number } | null {
    const p = readPruned(this.dir);
    return p ? { before: p.before, through: p.through } : null;
  }

  /** Rolls up what the spool holds (unless `keepSpool`) and releases the archive's DuckDB. */
  async close(opts: { keepSpool?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    try {
      // A roll-up that fails keeps its spool (nothing is lost): the next open rolls it. The command that wrote the
      // pages is not failed for it; status says so (rollUpError, and the entries left in the spool).
      if (!this.readOnly && !opts.keepSpool) await this.rollUp().catch(() => undefined);
      else await this.rolling;
    } finally {
      this.closed = true;
      this.dropFetched();
      if (this.metaFd !== null) closeSync(this.metaFd);
      this.metaFd = null;
      await this.db?.close();
      this.db = null;
    }
  }
}
