/**
 * Where pages wait between JavaScript and DuckDB: one JSON file per page, read by `read_json` with declared column
 * types when the page is merged into its table (merge.ts). DuckDB's JSON reader parses a batch of such files for
 * less per page than one `read_json` statement per page (its fixed cost per call dominates), and the Appender is
 * slower still for this shape (one native call per string value): bench/results/replay.json holds both paths.
 *
 * The files live beside the database, in `<database>.stage/` (0700, files 0600: pages hold personal data), never in
 * the system temp directory: a staged page that a committed transaction registered (`_evsync.staged`) is part of
 * the database's state until it is merged, so it must survive a crash with the database and move with it. Such a
 * file is written durably (fsync) before the transaction that registers it commits, so a power loss cannot leave a
 * registration without its page. Files that no registration names (a page in flight when the process died) are
 * removed at the next start. An in-memory database has no place beside it: its pages use a private temp directory.
 *
 * A merged page's file is emptied, not deleted, and the next page is written into it: creating and deleting a file
 * per page cost more CPU than writing it wherever the file system checks inodes on creation (on ext4 without a
 * journal, inode allocation grew with the files deleted around it), and most file systems pay for metadata changes
 * more than for data. Emptied files are removed on close, and
 * at the next open if the process died.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { type FileHandle, open, truncate, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stagePathOf } from '../copies/own-files.js';
import { fsyncPath } from '../db/fsync.js';

/** Emptied files kept for reuse: a batch is at most ~100 pages (mergeRows / page size), so this holds one batch. */
const MAX_FREE = 256;

export class Staging {
  private seq = 0;
  /** Emptied files of merged pages, written again before a new name is made (at most MAX_FREE kept). */
  private readonly free: string[] = [];
  // File names carry a random part: two warehouses of one process may share the directory.
  private readonly prefix = randomBytes(4).toString('hex');
  private ready = false;

  private constructor(
    readonly dir: string,
    /** A temp directory of our own (in-memory database): removed whole on dispose. */
    private readonly temporary: boolean,
  ) {}

  static forDatabase(path: string): Staging {
    if (path === ':memory:' || path === '') return new Staging(mkdtempSync(join(tmpdir(), 'evsync-stage-')), true);
    return new Staging(stagePathOf(path), false);
  }

  private ensureDir(): void {
    if (this.ready) return;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    if (!this.temporary) {
      // The directory entry itself must be durable before a registered file in it can be.
      fsyncPath(this.dir, 'r');
    }
    this.ready = true;
  }

  path(name: string): string {
    return join(this.dir, name);
  }

  /**
   * Writes `text` to a new owner-only file and returns its name (relative to the directory). `durable` syncs it to
   * disk before returning: required before a transaction registers the file; a page merged in its own transaction
   * and removed right after needs no sync.
   */
  async write(text: string, durable: boolean): Promise<string> {
    this.ensureDir();
    const reused = this.free.pop();
    const name = reused ?? `page-${this.prefix}-${++this.seq}.json`;
    let handle: FileHandle;
    try {
      // An emptied file of ours is written from its start; a new name must not exist yet.
      handle = await open(this.path(name), reused ? 'r+' : 'wx', 0o600);
    } catch (err) {
      // Another warehouse of this process found the directory empty on close and removed it: make it again.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      this.ready = false;
      this.ensureDir();
      handle = await open(this.path(name), 'wx', 0o600);
    }
    try {
      // The string goes to the file as it is (Node encodes it natively): a Buffer of it first would copy the page.
      const length = Buffer.byteLength(text);
      const { bytesWritten } = await handle.write(text, 0, 'utf8');
      if (bytesWritten < length)
        await handle.write(Buffer.from(text).subarray(bytesWritten), 0, length - bytesWritten, bytesWritten);
      // A reused file was emptied when its page was merged; should that have failed, its old tail goes here.
      if (reused) await handle.truncate(length);
      if (durable) await handle.sync();
    } finally {
      await handle.close();
    }
    return name;
  }

  /** Done with these files (merged, or never registered): emptied and kept for the next pages, or deleted. */
  async remove(names: readonly string[]): Promise<void> {
    await Promise.all(
      names.map(async (name) => {
        if (this.free.length < MAX_FREE && !this.free.includes(name)) {
          try {
            // Emptied at once: a merged page's rows do not wait beside the database for the next write.
            await truncate(this.path(name), 0);
            this.free.push(name);
            return;
          } catch {
            // Gone already (or unwritable): nothing to keep.
          }
        }
        await unlink(this.path(name)).catch(() => undefined);
      }),
    );
  }

  /** Removes every file but `keep` (names registered in the database): leftovers of a process that was killed. */
  clear(keep: ReadonlySet<string>): number {
    this.free.length = 0;
    let removed = 0;
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return 0;
    }
    for (const name of names) {
      if (keep.has(name)) continue;
      rmSync(this.path(name), { force: true, recursive: true });
      removed++;
    }
    return removed;
  }

  /** On close: the temp directory of an in-memory database goes; the one beside a database file stays if in use. */
  dispose(): void {
    for (const name of this.free.splice(0)) rmSync(this.path(name), { force: true });
    if (this.temporary) rmSync(this.dir, { recursive: true, force: true });
    else if (this.ready) {
      try {
        if (readdirSync(this.dir).length === 0) rmSync(this.dir, { recursive: true, force: true });
      } catch {
        // Already gone.
      }
    }
    this.ready = false;
  }
}
