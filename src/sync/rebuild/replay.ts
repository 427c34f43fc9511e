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
import { type ArchivedPage, readArchivedPage } from '../archived-page.js';
import { PageLoader } from '../page-loader.js';

/** Ops read from the log at a time: their bodies are read together (two windows in memory: this one and the next). */
const WINDOW = 8;

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

export class MissingArchiveError extends Error {
  override readonly name = 'MissingArchiveError';
}

interface ReplayInput {
  live: Warehouse;
  scratch: Warehouse;
  clock: ReplayClock;
  archive: Archive;
  streams: ReadonlyMap<string, ResolvedStream>;
  last: number;
  onProgress?: ((p: ReplayProgress) => void) | undefined;
  /** Ops read at a time (default WINDOW). */
  window?: number | undefined;
}

/** A page op's archived body read back; one that is not JSON names its entry and op. */
function readBody(op: Extract<Op, { kind: 'page' }>, text: string): ArchivedPage | null {
  try {
    return readArchivedPage(text);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new Error(`archive entry ${op.entry} of op ${op.seq} (${op.stream}, ${op.at}) cannot be read: ${why}`);
  }
}

/** One replay: its loaders (one per live run, as the live run had one) and its progress. */
class Replay {
  private readonly loaders = new Map<string, PageLoader>();
  /** Bodies parsed ahead (by archive entry) while the op before theirs waited on the scratch's DuckDB. */
  private readonly parsed = new Map<number, ArchivedPage | null>();

  constructor(
    private readonly o: ReplayInput,
    readonly progress: ReplayProgress,
  ) {}

  private loaderOf(runId: string): PageLoader {
    let loader = this.loaders.get(runId);
    if (!loader) {
      loader = new PageLoader(this.o.scratch, runId);
      this.loaders.set(runId, loader);
    }
    return loader;
  }

  private async page(op: Extract<Op, { kind: 'page' }>, stream: ResolvedStream, text: string | undefined) {
    const ahead = op.entry === null ? undefined : this.parsed.get(op.entry);
    if (op.entry !== null) this.parsed.delete(op.entry);
    let body: ArchivedPage | null;
    if (ahead !== undefined) body = ahead;
    else if (text !== undefined) body = readBody(op, text);
    else {
      throw new MissingArchiveError(
        op.entry === null
          ? `op ${op.seq} (${op.stream}, ${op.at}) was loaded with the archive off: its records were not kept`
          : `archive entry ${op.entry} of op ${op.seq} (${op.stream}, ${op.at}) is not in the archive (pruned?)`,
      );
    }
    if (!body) throw new Error(`archive entry ${op.entry} (op ${op.seq}) holds no page of records`);
    await this.loaderOf(op.runId).load({
      stream,
      scope: { ...op.detail.scope },
      records: body.records,
      ...(body.quarantined ? { quarantined: body.quarantined } : {}),
      ...(op.detail.walk !== null ? { seenWalkId: op.detail.walk } : {}),
      idsOnly: op.detail.idsOnly,
      replay: { entry: op.entry, staged: op.detail.staged },
      ...(op.detail.observed ? { observed: true } : {}),
    });
    this.progress.pages += 1;
    this.progress.records += body.records.length;
    this.progress.pagesByStream[op.stream] = (this.progress.pagesByStream[op.stream] ?? 0) + 1;
  }

  /**
   * Parses the body of a page op ahead of its turn (the main thread is idle while the op before it waits on the
   * scratch's DuckDB: parsing a page's JSON was a tenth of a rebuild's wall time). A body that does not parse is left
   * for its turn, which fails in order.
   */
  parseAhead(op: Op | undefined, bodies: Map<number, string>): void {
    if (op?.kind !== 'page' || op.entry === null) return;
    const text = bodies.get(op.entry);
    if (text === undefined) return;
    let page: ArchivedPage | null;
    try {
      page = readArchivedPage(text);
    } catch {
      return;
    }
    this.parsed.set(op.entry, page);
    bodies.delete(op.entry);
  }

  /** Reproduces one op in the scratch, at its live time, logged under its live seq. */
  async op(op: Op, bodies: Map<number, string>): Promise<void> {
    const { scratch } = this.o;
    scratch.reproducing(op.seq);
    this.o.clock.set(op.at);
    const stream = this.o.streams.get(op.stream);
    if (!stream) throw new Error(`op ${op.seq}: stream ${op.stream} was not resolved`);
    switch (op.kind) {
      case 'page': {
        const text = op.entry === null ? undefined : bodies.get(op.entry);
        // The body is let go once parsed: a window's texts do not stay for its whole replay.
        if (op.entry !== null) bodies.delete(op.entry);
        await this.page(op, stream, text);
        break;
      }
      case 'merge':
        await scratch.mergeOps(op.stream, op.detail.pages);
        break;
      case 'missing': {
        const { scope, walk, deletedAt, within } = op.detail;
        const input = { stream, scope: { ...scope }, walkId: walk, runId: op.runId, at: deletedAt };
        await scratch.markMissing(within ? { ...input, within } : input);
        break;
      }
      case 'deleted':
        await scratch.capture.markDeleted(
          op.stream,
          op.detail.rows.map(([id, at]) => ({ id, at })),
          op.runId,
        );
        break;
      case 'stamped':
        await scratch.stampRows(op.stream, op.detail, op.runId);
        break;
    }
    this.progress.seq = op.seq;
  }
}

/**
 * Replays the ops of `streams` after the scratch's last one, up to `last`. Throws MissingArchiveError for a page
 * whose body the archive lacks (pruned, or loaded with the archive off).
 */
export async function replayOps(o: ReplayInput): Promise<ReplayProgress> {
  const names = [...o.streams.keys()];
  const start = await o.scratch.lastOp();
  const replay = new Replay(o, { seq: start, last: o.last, pages: 0, records: 0, pagesByStream: {} });
  const { progress } = replay;
  /** The window of ops after `seq` with their pages' bodies (read by the archive's DuckDB, on a thread of its own). */
  const windowAfter = async (seq: number) => {
    const ops = (await o.live.opsAfter(seq, o.window ?? WINDOW, names)).filter((op) => op.seq <= o.last);
    const entries = ops.flatMap((op) => (op.kind === 'page' && op.entry !== null ? [op.entry] : []));
    return { ops, bodies: await o.archive.bodies(entries) };
  };
  let next: ReturnType<typeof windowAfter> | null = null;
  try {
    next = windowAfter(progress.seq);
    while (progress.seq < o.last) {
      const { ops, bodies } = await next;
      if (ops.length === 0) break;
      // The next window is read while this one loads: the archive's reads overlap the loader's work.
      next = windowAfter((ops[ops.length - 1] as Op).seq);
      next.catch(() => undefined);
      for (let i = 0; i < ops.length; i++) {
        // The op's own JavaScript runs before its first wait; the next page's body is parsed during that wait.
        const running = replay.op(ops[i] as Op, bodies);
        replay.parseAhead(ops[i + 1], bodies);
        await running;
      }
      o.onProgress?.({ ...progress, pagesByStream: { ...progress.pagesByStream } });
    }
  } finally {
    o.scratch.reproducing(null);
    // A window read ahead must end before its archive may be closed.
    await next?.catch(() => undefined);
  }
  return progress;
}
