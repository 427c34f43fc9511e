/**
 * Where a page waits between JavaScript and DuckDB: a JSON file that `read_json` reads inside the merge statement.
 *
 * Measured against the Appender with one reused DataChunk (the other fast path stack.md names), on 1000-row pages
 * of 46-column registrants on this 2-core machine: filling the chunk costs ~0.7 us per value (one native call per
 * string, ~32 ms a page) plus the staging table append (~10 ms); `JSON.stringify` + writing the file + DuckDB's
 * parallel JSON reader cost ~23 ms a page together, and the file needs no staging table at all (read_json feeds the
 * MERGE directly, so no per-page DELETE leaves tombstones to scan). See bench/warehouse-load.ts.
 *
 * The directory is private (mkdtemp: 0700) and each file owner-only (0600): pages hold personal data. A file lives
 * only while its page loads; the directory is removed when the warehouse closes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export class Staging {
  private dir: string | null = null;
  private seq = 0;

  /**
   * Writes `text` to a new file and returns its path. Synchronously: ~2 ms for a 1 MB page, where the promise
   * version measured ~6 ms a page in the benchmark (thread pool round trip), and nothing else waits meanwhile
   * because the page's transaction cannot start before the file exists.
   */
  write(text: string): string {
    this.dir ??= mkdtempSync(join(tmpdir(), 'evsync-stage-'));
    this.seq++;
    const path = join(this.dir, `page-${this.seq}.json`);
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  }

  async remove(path: string): Promise<void> {
    await unlink(path).catch(() => undefined);
  }

  dispose(): void {
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = null;
  }
}
