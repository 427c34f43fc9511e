/**
 * `evsync rebuild`: stream tables made again from the archive, with no API call. The live warehouse's op log is
 * replayed into a scratch warehouse beside it (`<database>.rebuild/`, replay.ts) with today's settings; then the
 * scratch's tables are compared with the live ones (what a dry run reports) and, unless it is a dry run, replace
 * them in one transaction. Until then the live tables, and the snapshot and Parquet published from them, are as
 * they were: nobody sees a half-rebuilt table.
 *
 * A killed rebuild leaves its scratch, with the op it reached: the same command resumes it, provided the streams
 * and their settings are the same (else it starts over). A dry run always starts over and removes its scratch.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getStream, hasStream, type StreamOverride } from '../../../connectors/index.js';
import type { ResolvedStream } from '../../../connectors/types.js';
import { type TableChange, Warehouse } from '../../warehouse/index.js';
import { resolveStored } from '../capture/streams.js';
import { ReplayClock, type ReplayProgress, replayOps } from './replay.js';

export interface RebuildOptions {
  live: Warehouse;
  /** Streams to rebuild (null: every stream the op log has writes of). */
  streams: readonly string[] | null;
  overrides?: Readonly<Record<string, StreamOverride>>;
  customFields?: boolean;
  dryRun: boolean;
  /** Told after each window of ops replayed (a throw stops the rebuild there, its scratch kept for a resume). */
  onProgress?: (p: ReplayProgress) => void;
  /** Ops replayed per window (default 64). */
  window?: number;
}

export interface RebuildResult {
  streams: string[];
  changes: TableChange[];
  replayed: ReplayProgress;
  /** The rebuilt tables replaced the live ones (false for a dry run). */
  applied: boolean;
  /** A killed rebuild's scratch was taken up where it stopped. */
  resumed: boolean;
  /** The run the rebuild is recorded as (null for a dry run): the rows it changed carry it as `_run_id`. */
  runId: string | null;
}

/** A rebuild this warehouse cannot do (rows from before the archive, nothing to rebuild). */
export class RebuildRefused extends Error {
  override readonly name = 'RebuildRefused';
}

interface ScratchState {
  streams: string[];
  settings: string;
}

/** What the rebuilt tables depend on besides the archive: the streams as resolved (settings, custom fields). */
function settingsDigest(streams: ReadonlyMap<string, ResolvedStream>): string {
  const h = createHash('sha256');
  for (const [name, stream] of [...streams].sort(([a], [b]) => (a < b ? -1 : 1))) {
    h.update(name);
    h.update(JSON.stringify(stream));
  }
  return h.digest('hex');
}

/** The streams to rebuild, resolved as a sync would resolve them now; refused when rows would be lost. */
async function streamsToRebuild(o: RebuildOptions): Promise<Map<string, ResolvedStream>> {
  const { live } = o;
  const logged = await live.loggedStreams();
  const names = [...new Set(o.streams ?? logged.filter(hasStream))].sort();
  for (const n of names) getStream(n); // an unknown name fails here, with the valid ones
  if (names.length === 0)
    throw new RebuildRefused('the archive holds no write to any stream table yet: nothing to rebuild');
  const began = await live.archiveBegan();
  const before = names.filter((n) => (began[n] ?? 0) > 0);
  if (before.length > 0) {
    throw new RebuildRefused(
      `${before.map((n) => `${n} (${began[n]} rows)`).join(', ')} held rows loaded before this warehouse kept an archive ` +
        `(a release before layout 3): a rebuild would lose them. Run \`evsync backfill --streams ${before.join(',')}\` ` +
        'once to archive them, or leave those streams out of --streams.',
    );
  }
  const pruned = live.archiveReader().pruned();
  const first = await live.firstPageEntry(names);
  if (pruned && first !== null && first <= pruned.through) {
    throw new RebuildRefused(
      `the archive was pruned before ${pruned.before}: the pages ${names.join(', ')} were first loaded from are gone, ` +
        'so a rebuild would lose their rows',
    );
  }
  const streams = new Map<string, ResolvedStream>();
  for (const n of names) {
    streams.set(n, (await resolveStored(live, n, o.overrides?.[n], o.customFields ?? true)).stream);
  }
  return streams;
}

/** The scratch's folder: a killed rebuild's taken up when its streams and settings are the same, else made anew. */
class ScratchDir {
  readonly scratchPath: string;
  private readonly statePath: string;
  resumed = false;

  constructor(
    readonly dir: string,
    private readonly state: ScratchState,
    mayResume: boolean,
  ) {
    this.scratchPath = join(dir, 'scratch.duckdb');
    this.statePath = join(dir, 'rebuild.json');
    if (existsSync(dir)) {
      const found = readState(this.statePath);
      this.resumed =
        mayResume &&
        found !== null &&
        found.settings === state.settings &&
        found.streams.join(',') === state.streams.join(',');
      if (!this.resumed) rmSync(dir, { recursive: true, force: true });
    }
    this.make();
  }

  /** Starts over: the folder emptied and its state written again. */
  restart(): void {
    rmSync(this.dir, { recursive: true, force: true });
    this.resumed = false;
    this.make();
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  private make(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeFileSync(this.statePath, JSON.stringify(this.state), { mode: 0o600 });
  }
}

export async function rebuild(o: RebuildOptions): Promise<RebuildResult> {
  const { live } = o;
  const streams = await streamsToRebuild(o);
  const names = [...streams.keys()];
  const scratchDir = new ScratchDir(
    `${live.path}.rebuild${o.dryRun ? '-dry-run' : ''}`,
    { streams: names, settings: settingsDigest(streams) },
    !o.dryRun,
  );
  const { scratchPath } = scratchDir;
  const last = await live.lastOp();
  // The live warehouse's own archive when it keeps one (its spool included), with the remote it was opened with.
  const archive = live.archiveReader();
  const ownArchive = archive !== live.archive;
  const replayInto = async (): Promise<ReplayProgress> => {
    const clock = new ReplayClock();
    const scratch = await Warehouse.open(scratchPath, { now: clock.now, archive: false, replay: true });
    try {
      // The history is kept (or not) as the live warehouse keeps it.
      await scratch.setHistoryOff(await live.historyOff());
      for (const stream of streams.values()) await scratch.ensureTable(stream);
      const window = o.window;
      return await replayOps({ live, scratch, clock, archive, streams, last, onProgress: o.onProgress, window });
    } finally {
      await scratch.close();
    }
  };
  let replayed: ReplayProgress;
  try {
    try {
      replayed = await replayInto();
    } catch (err) {
      // The scratch does not fsync its staged files (a rebuild need not survive the machine's crash): a resumed one
      // that finds one lost starts over.
      if (!scratchDir.resumed || !lostStagedFile(err)) throw err;
      scratchDir.restart();
      replayed = await replayInto();
    }
  } finally {
    // The live warehouse's own archive stays open for its writes; its reads are over.
    if (ownArchive) await archive.close();
    else await archive.doneReading();
  }
  const keyOf = (table: string) => streams.get(table)?.key ?? ['id'];
  const changes = await live.compareRebuilt(scratchPath, names, keyOf);
  let runId: string | null = null;
  if (!o.dryRun) runId = await applyRebuilt(live, scratchPath, names, keyOf, changes, replayed);
  const resumed = scratchDir.resumed;
  scratchDir.remove();
  return { streams: names, changes, replayed, applied: !o.dryRun, resumed, runId };
}

/** The rebuilt tables in place, recorded as a run of kind `rebuild` (its id stamps the rows it changed). */
async function applyRebuilt(
  live: Warehouse,
  scratch: string,
  names: readonly string[],
  keyOf: (table: string) => readonly string[],
  changes: readonly TableChange[],
  replayed: ReplayProgress,
): Promise<string> {
  const runId = await live.runs.start('rebuild', { streams: names });
  const summary = { credits: {}, requests: 0, waitsMs: 0, rejected429: 0 };
  try {
    await live.replaceWithRebuilt(scratch, names, keyOf, runId);
  } catch (err) {
    await live.runs
      .finish(runId, { ...summary, status: 'failed', streams: {}, error: String(err) })
      .catch(() => undefined);
    throw err;
  }
  const streams = Object.fromEntries(
    changes.map((c) => [
      c.table,
      {
        inserted: c.added,
        updated: c.changed,
        deleted: c.removed,
        rejected: 0,
        pages: replayed.pagesByStream[c.table] ?? 0,
      },
    ]),
  );
  await live.runs.finish(runId, { ...summary, status: 'done', streams });
  return runId;
}

/** A staged file the scratch registered and the file system no longer has (or has cut short). */
function lostStagedFile(err: unknown): boolean {
  const text = err instanceof Error ? err.message : String(err);
  return /No files found|ENOENT|staged page could not be merged|Malformed JSON|unexpected end/i.test(text);
}

function readState(path: string): ScratchState | null {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<ScratchState>;
    if (!Array.isArray(parsed.streams) || typeof parsed.settings !== 'string') return null;
    return { streams: parsed.streams.map(String), settings: parsed.settings };
  } catch {
    return null;
  }
}
