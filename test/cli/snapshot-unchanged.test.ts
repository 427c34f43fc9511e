/**
 * A run that changed nothing publishes nothing (issue 35): `sync --snapshot` after a sync that found nothing new
 * leaves the snapshot as it was (the catalogue and every part, byte for byte, not even rewritten), and says so; after
 * changes at the service, the next `sync --snapshot` writes the parts that hold them and the reader sees them; with
 * `--snapshot-grace 0` the parts it replaced are gone at once.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DuckDbReader } from '../helpers/duckdb-reader.js';
import { inTempDir, run, simulatedCli } from './helpers.js';

const cli = simulatedCli({ seed: 13, prefix: 'evsync-cli-snapshot-unchanged-' });
const STREAMS = ['--streams', 'registrants'];

/** The file as a reader finds it: its inode, its modification time and its bytes' hash. */
function fileState(path: string): { ino: number; mtimeMs: number; sha256: string } {
  const { ino, mtimeMs } = statSync(path);
  return { ino, mtimeMs, sha256: createHash('sha256').update(readFileSync(path)).digest('hex') };
}

/** Every part file of the snapshot, with its inode and modification time. */
function partsState(snapshot: string): Record<string, string> {
  const folder = join(`${snapshot}.parts`, 'registrants');
  return Object.fromEntries(
    readdirSync(folder).map((f) => {
      const st = statSync(join(folder, f));
      return [f, `${st.ino}:${st.mtimeMs}:${st.size}`];
    }),
  );
}

function liveRegistrants(file: string): Promise<number> {
  return DuckDbReader.countIn(file, 'SELECT count(*) FROM main.registrants WHERE _deleted_at IS NULL');
}

describe('--snapshot after a run that changed nothing', () => {
  it('leaves the snapshot untouched, and publishes again once something changed', async () => {
    await inTempDir(async (dir) => {
      const snapshot = join(dir, 'snap.duckdb');
      const env = { ...cli.env, EVSYNC_DB: join(dir, 'evsync.duckdb') };
      const first = await run(['backfill', ...STREAMS, '--snapshot', snapshot], { cwd: dir, env });
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toContain(`snapshot: published ${snapshot}`);
      const published = fileState(snapshot);
      const parts = partsState(snapshot);
      expect(Object.keys(parts).length).toBeGreaterThan(1);

      // Nothing changed at the service: the incremental run loads nothing, and the snapshot is left as it is.
      const quiet = await run(['sync', ...STREAMS, '--snapshot', snapshot], { cwd: dir, env });
      expect(quiet.code, quiet.stderr).toBe(0);
      expect(quiet.stderr).toContain(`snapshot: ${snapshot} left as it is: nothing it holds changed`);
      expect(fileState(snapshot)).toEqual(published);
      expect(partsState(snapshot)).toEqual(parts);

      // Changes at the service, a minute before the next run (past its signpost lag): it loads them and publishes.
      const changes = cli.sim.mutate(5, { streams: ['registrants'] });
      expect(Object.keys(changes.inserted).length + Object.keys(changes.updated).length).toBeGreaterThan(0);
      cli.sim.advanceClock(60);
      const after = await run(['sync', ...STREAMS, '--snapshot', snapshot, '--snapshot-grace', '0'], {
        cwd: dir,
        env,
      });
      expect(after.code, after.stderr).toBe(0);
      expect(after.stderr).toContain(`snapshot: published ${snapshot}`);
      expect(fileState(snapshot).sha256).not.toBe(published.sha256);
      // Only the parts holding a change were written; with no grace, the ones they replaced are gone.
      const now = partsState(snapshot);
      const kept = Object.keys(now).filter((f) => parts[f] === now[f]);
      const written = Object.keys(now).filter((f) => parts[f] === undefined);
      expect(written.length).toBeGreaterThan(0);
      expect(kept.length).toBeGreaterThan(0);
      expect(kept.length + written.length).toBe(Object.keys(now).length);
      expect(Object.keys(now).length).toBe(Object.keys(parts).length);
      // The reader's copy holds what the warehouse holds after the run.
      expect(await liveRegistrants(snapshot)).toBe(await liveRegistrants(env.EVSYNC_DB));
    });
  });
});
