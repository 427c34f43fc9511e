/**
 * The one page loop every walk runs: take a page from a source (keyset walk, audit window, id list), load it with
 * its checkpoint in one transaction, count it, report it, and stop when the source is done, the stop signal
 * fired, or the page limit (plan --count) is reached. The next page is asked for while this one loads.
 */
import type { PageMeta } from '../api/index.js';
import type { CursorState } from '../warehouse/index.js';
import { formatTimestamp } from './clock.js';
import type { PageLoader } from './page-loader.js';
import type { ProgressEvent, StreamStats } from './types.js';
import { walkRange, watermarkAfter } from './window.js';
import type { WorkItem } from './work-item.js';

export interface WalkContext {
  client: import('../api/index.js').ApiClient;
  loader: PageLoader;
  stats: StreamStats;
  signal?: AbortSignal | undefined;
  onProgress?: ((event: ProgressEvent) => void) | undefined;
  now: () => Date;
  /** Stop each walk after this many pages (plan --count reads one page per item, and keeps it). */
  pageLimit?: number | undefined;
}

export interface WalkOutcome {
  pages: number;
  rows: number;
  deleted: number;
  /** False when a stop request (or the page limit) ended the walk between pages (its checkpoint is saved). */
  complete: boolean;
}

/** One page as any source gives it. */
export interface SourcePage {
  records: readonly unknown[];
  /** Records the source could not key: stored as rejected with the page. */
  quarantined?: readonly { raw: unknown; reason: string }[];
  /**
   * The answer the records are, as the service sent it: its items are `records` and `quarantined` (the latter at
   * `quarantinedAt`), nothing else. The archive keeps this text instead of writing the records again (its bytes as
   * they came, when it has them: the text encoded again cost 1 us a row of `large` registrants).
   */
  answer?: { text: string; bytes?: Buffer | undefined; quarantinedAt: readonly number[] };
  meta: PageMeta;
  /** Where the walk stands after this page (keyset: the last id; offset: the page number); null: unchanged. */
  position: number | null;
  /** The answer says nothing remains. */
  done: boolean;
}

export type Walk = NonNullable<CursorState['walk']>;

interface LoopSpec {
  /** The checkpointed walk (advanced in place), or null for a walk without checkpoints (a refresh). */
  walk: Walk | null;
  /** Close the cursor in the last page's own transaction (else the caller closes it, after settling deletes). */
  closeOnLastPage: boolean;
  /** Record the ids loaded under this walk id, for delete detection. */
  seenWalkId?: string | undefined;
  /** Id sweeps store only the ids seen. */
  idsOnly?: boolean | undefined;
}

export function stamp(ctx: WalkContext): string {
  return formatTimestamp(ctx.now());
}

export function openCursor(item: WorkItem, walk: Walk, ctx: WalkContext): CursorState {
  const prev = item.previous;
  return {
    stream: item.stream.name,
    scope: item.cursorKey,
    watermark: prev?.watermark ?? null,
    walk,
    lastPages: prev?.lastPages ?? null,
    lastSweepAt: prev?.lastSweepAt ?? null,
    updatedAt: stamp(ctx),
  };
}

/** Whether a walk of this mode reads its whole scope (so it can settle deletes and counts as a sweep). */
export function readsWholeScope(mode: Walk['mode']): boolean {
  return mode === 'snapshot' || mode === 'sweep' || mode === 'backfill';
}

/** The cursor once a walk is complete: its range's end becomes the watermark (window.ts). */
export function closedCursor(item: WorkItem, walk: Walk, ctx: WalkContext): CursorState {
  const prev = item.previous;
  const fullRead = readsWholeScope(walk.mode);
  return {
    stream: item.stream.name,
    scope: item.cursorKey,
    watermark: watermarkAfter(walk.mode, walkRange(walk, item.to).to, prev),
    walk: null,
    lastPages: walk.pages,
    lastSweepAt: fullRead ? stamp(ctx) : (prev?.lastSweepAt ?? null),
    updatedAt: stamp(ctx),
  };
}

/** The event a scope belongs to, typed (never parsed back from the scope's key). */
export function eventIdOf(item: WorkItem): number | null {
  return item.scope.column === 'event_id' ? item.scope.value : null;
}

const DONE: Promise<IteratorResult<SourcePage>> = Promise.resolve({ done: true, value: undefined });

export async function pageLoop(
  item: WorkItem,
  ctx: WalkContext,
  source: AsyncGenerator<SourcePage>,
  spec: LoopSpec,
): Promise<{ pages: number; rows: number; complete: boolean }> {
  const { walk } = spec;
  let pages = 0;
  let rows = 0;
  let next = source.next();
  try {
    while (true) {
      const step = await next;
      if (step.done) return { pages, rows, complete: true };
      const page = step.value;
      pages += 1;
      rows += page.records.length;
      // Ask for the next page while this one loads; not when the source is done or the walk stops after this page.
      const stopping = ctx.signal?.aborted === true || (ctx.pageLimit !== undefined && pages >= ctx.pageLimit);
      next = page.done || stopping ? DONE : source.next();
      next.catch(() => undefined);
      if (walk) {
        walk.pages += 1;
        walk.rows += page.records.length;
        if (page.position !== null) walk.lastKey = page.position;
      }
      await loadPage(item, ctx, page, spec);
      ctx.onProgress?.({
        type: 'page',
        stream: item.stream.name,
        scope: item.cursorKey,
        eventId: eventIdOf(item),
        pages: walk?.pages ?? pages,
        rows: walk?.rows ?? rows,
        totalCount: page.meta.totalCount,
        pageCount: page.meta.pageCount,
        perPage: page.meta.perPage,
      });
      if (page.done) return { pages, rows, complete: true };
      if (stopping) return { pages, rows, complete: false };
    }
  } finally {
    await source.return(undefined).catch(() => undefined);
  }
}

async function loadPage(item: WorkItem, ctx: WalkContext, page: SourcePage, spec: LoopSpec): Promise<void> {
  const { walk } = spec;
  const cursor = walk
    ? page.done && spec.closeOnLastPage
      ? closedCursor(item, walk, ctx)
      : openCursor(item, { ...walk }, ctx)
    : undefined;
  const result = await ctx.loader.load({
    stream: item.stream,
    scope: item.scope,
    records: page.records,
    quarantined: page.quarantined,
    cursor,
    seenWalkId: spec.seenWalkId,
    idsOnly: spec.idsOnly,
    ...(page.answer ? { answer: page.answer } : {}),
    request: {
      path: item.stream.path,
      scope: item.scope.key,
      mode: walk?.mode ?? null,
      window: walk ? { from: walk.from, to: walk.to } : null,
      page: walk?.pages ?? null,
      perPage: page.meta.perPage,
      position: page.position,
    },
  });
  ctx.stats.inserted += result.inserted;
  ctx.stats.updated += result.updated;
  ctx.stats.rejected += result.rejected;
  ctx.stats.pages += 1;
}
