/**
 * The replay at the heart of a rebuild: the live warehouse's op log (`_evsync.archive_ops`), op by op, into a scratch
 * warehouse, with each page's records read back from the archive and loaded through the PageLoader a live page
 * takes (header secrets out, the normalizer with today's settings, the quarantine, schema evolution, staging). The
 * scratch's clock gives each op the time the live write had, pages load under the run that loaded them, staged
 * pages merge exactly where and as the live merges took them, and delete marks land with their own times: so with
 * unchanged settings the rebuilt tables equal the live ones, `_synced_at`, `_run_id` and `_deleted_at` included.
 *
 * The scratch logs each op under its live seq (Warehouse.reproducing), in the op's own transaction: a replay killed
 * at any point resumes after the last op the scratch committed.
 */
import type { ResolvedStream } from '../../../connectors/types.js';
import type { Archive, Op, Warehouse } from '../../warehouse/index.js';
import { PageLoader } from '../page-loader.js';

/** Ops read from the log at a time (their bodies are read together: at most this many pages in memory). */
const WINDOW = 64;

export interface ReplayProgress {
  /** The last op replayed, and the last one there is. */
  seq: number;
  last: number;
  pages: number;
  records: number;
  /** Pages replayed per stream. */
  pagesByStream: Record<string, number>;
}

/** The scratch's clock: the time of the op being reproduced. */
export class ReplayClock {
  private ms = 0;
  readonly now = (): number => this.ms;

  /** `at`: UTC `YYYY-MM-DD HH:MM:SS.mmm`, as the op log gives it. */
  set(at: string): void {
    const ms = Date.parse(`${at.replace(' ', 'T')}Z`);
    if (Number.isNaN(ms)) throw new Error(`op log time ${JSON.stringify(at)} is not a time`);
    this.ms = ms;
  }
}

interface PageBody {
  records: unknown[];
  quarantined?: { raw: unknown; reason: string }[];
}

function parseBody(op: Op, text: string): PageBody {
  const parsed: unknown = JSON.parse(text);
  if (!parsed || typeof parsed !== 'object' || !Array.isArray((parsed as PageBody).records)) {
    throw new Error(`archive entry ${op.entry} (op ${op.seq}) holds no page of records`);
  }
  return parsed as PageBody;
}

export class MissingArchiveError extends Error {
  override readonly name = 'MissingArchiveError';
}

/**
 * Replays the ops of `streams` after the scratch's last one, up to `last`. Throws MissingArchiveError for a page
 * whose body the archive lacks (pruned, or loaded with the archive off).
 */
export async function replayOps(o: {
  live: Warehouse;
  scratch: Warehouse;
  clock: ReplayClock;
  archive: Archive;
  streams: ReadonlyMap<string, ResolvedStream>;
  last: number;
  onProgress?: (p: ReplayProgress) => void;
  /** Ops read at a time (default WINDOW). */
  window?: number;
}): Promise<ReplayProgress> {
  const names = [...o.streams.keys()];
  const loaders = new Map<string, PageLoader>();
  const loaderOf = (runId: string) => {
    let loader = loaders.get(runId);
    if (!loader) {
      loader = new PageLoader(o.scratch, runId);
      loaders.set(runId, loader);
    }
    return loader;
  };
  const progress: ReplayProgress = {
    seq: await o.scratch.lastOp(),
    last: o.last,
    pages: 0,
    records: 0,
    pagesByStream: {},
  };
  try {
    while (progress.seq < o.last) {
      const ops = (await o.live.opsAfter(progress.seq, o.window ?? WINDOW, names)).filter((op) => op.seq <= o.last);
      if (ops.length === 0) break;
      const entries = ops.flatMap((op) => (op.kind === 'page' && op.entry !== null ? [op.entry] : []));
      const bodies = await o.archive.bodies(entries);
      for (const op of ops) {
        o.scratch.reproducing(op.seq);
        o.clock.set(op.at);
        const stream = o.streams.get(op.stream);
        if (!stream) throw new Error(`op ${op.seq}: stream ${op.stream} was not resolved`);
        switch (op.kind) {
          case 'page': {
            const text = op.entry === null ? undefined : bodies.get(op.entry);
            if (text === undefined) {
              throw new MissingArchiveError(
                op.entry === null
                  ? `op ${op.seq} (${op.stream}, ${op.at}) was loaded with the archive off: its records were not kept`
                  : `archive entry ${op.entry} of op ${op.seq} (${op.stream}, ${op.at}) is not in the archive (pruned?)`,
              );
            }
            const body = parseBody(op, text);
            await loaderOf(op.runId).load({
              stream,
              scope: { ...op.detail.scope },
              records: body.records,
              quarantined: body.quarantined,
              ...(op.detail.walk !== null ? { seenWalkId: op.detail.walk } : {}),
              idsOnly: op.detail.idsOnly,
              replay: { entry: op.entry, staged: op.detail.staged },
            });
            progress.pages += 1;
            progress.pagesByStream[op.stream] = (progress.pagesByStream[op.stream] ?? 0) + 1;
            progress.records += body.records.length;
            break;
          }
          case 'merge':
            await o.scratch.mergeOps(op.stream, op.detail.pages);
            break;
          case 'missing':
            await o.scratch.markMissing({
              stream,
              scope: { ...op.detail.scope },
              walkId: op.detail.walk,
              runId: op.runId,
              at: op.detail.deletedAt,
              ...(op.detail.within ? { within: op.detail.within } : {}),
            });
            break;
          case 'deleted':
            await o.scratch.capture.markDeleted(
              op.stream,
              op.detail.rows.map(([id, at]) => ({ id, at })),
              op.runId,
            );
            break;
          case 'stamped':
            await o.scratch.stampRows(op.stream, op.detail, op.runId);
            break;
        }
        progress.seq = op.seq;
      }
      o.onProgress?.({ ...progress, pagesByStream: { ...progress.pagesByStream } });
    }
  } finally {
    o.scratch.reproducing(null);
  }
  return progress;
}
