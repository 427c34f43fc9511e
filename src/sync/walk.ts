import { createHash, randomUUID } from 'node:crypto';
import { requestFields } from '../../schemas/columns.js';
import type { ApiClient, KeysetPage, ListPage } from '../api/index.js';
import type { CursorState } from '../warehouse/index.js';
import { formatTimestamp } from './clock.js';
import type { PageLoader } from './page-loader.js';
import { scopedRequest } from './scope.js';
import type { ProgressEvent, StreamStats } from './types.js';
import type { WorkItem } from './work-item.js';

export interface WalkContext {
  client: ApiClient;
  loader: PageLoader;
  stats: StreamStats;
  signal?: AbortSignal;
  onProgress?: (event: ProgressEvent) => void;
  now: () => Date;
  /** Stop each walk after this many pages (plan --count reads one page per item, and keeps it). */
  pageLimit?: number;
}

export interface WalkOutcome {
  pages: number;
  rows: number;
  deleted: number;
  /** False when a stop request ended the walk between pages (its checkpoint is saved). */
  complete: boolean;
}

type Walk = NonNullable<CursorState['walk']>;

function stamp(ctx: WalkContext): string {
  return formatTimestamp(ctx.now());
}

function openCursor(item: WorkItem, walk: Walk, ctx: WalkContext): CursorState {
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

/** The cursor once a walk is complete: the window's end becomes the watermark for cursor walks. */
function closedCursor(item: WorkItem, walk: Walk, ctx: WalkContext): CursorState {
  const prev = item.previous;
  const fullRead = walk.mode === 'snapshot' || walk.mode === 'sweep' || walk.mode === 'backfill';
  return {
    stream: item.stream.name,
    scope: item.cursorKey,
    // A snapshot's signpost matters to streams refreshed through their parent: they go on from there.
    watermark: walk.mode === 'sweep' ? (prev?.watermark ?? null) : (walk.to ?? item.to),
    walk: null,
    lastPages: walk.pages,
    lastSweepAt: fullRead ? stamp(ctx) : (prev?.lastSweepAt ?? null),
    updatedAt: stamp(ctx),
  };
}

/**
 * A backfill reads everything, with no upper bound either: a row changed during the walk is then either read in its
 * new version or, if the walk had passed it, read again by the next window (which starts at the signpost). So the
 * ids a backfill sees are every id that exists, and it detects deletes for free, like a snapshot.
 */
function windowConditions(item: WorkItem): string[] {
  const cursor = item.stream.cursor;
  if (!cursor || item.mode === 'snapshot' || item.mode === 'sweep' || item.mode === 'backfill') return [];
  const conditions = [`${cursor}<${item.to}`];
  if (item.from) conditions.unshift(`${cursor}>=${item.from}`);
  return conditions;
}

function addStats(ctx: WalkContext, r: { inserted: number; updated: number; rejected: number }): void {
  ctx.stats.inserted += r.inserted;
  ctx.stats.updated += r.updated;
  ctx.stats.rejected += r.rejected;
  ctx.stats.pages += 1;
}

/** Walks one list item by keyset over `id`, checkpointing after every page in the page's own transaction. */
async function walkKeyset(item: WorkItem, ctx: WalkContext): Promise<WalkOutcome> {
  const { stream, scope } = item;
  if (item.mode === 'refresh' || item.mode === 'audit') throw new Error(`${item.mode} items are not keyset walks`);
  const walk: Walk = item.resume
    ? { ...item.resume }
    : { mode: item.mode, walkId: randomUUID(), from: item.from, to: item.to, lastKey: null, pages: 0, rows: 0 };
  const idsOnly = item.mode === 'sweep';
  const tracksSeen = item.mode === 'snapshot' || item.mode === 'sweep' || item.mode === 'backfill';
  const { path, params } = scopedRequest(stream, stream.path, scope);
  const pages = ctx.client.keyset<{ id: number }>(
    path,
    {
      params,
      search: windowConditions({ ...item, from: walk.from, to: walk.to ?? item.to }),
      fields: idsOnly ? ['id'] : requestFields(stream, item.customFieldNames),
      expand: idsOnly || stream.expandSelected.length === 0 ? undefined : [...stream.expandSelected],
      perPage: stream.maxPerPage,
      afterId: walk.lastKey ?? undefined,
    },
    { signal: ctx.signal },
  );

  let next: Promise<IteratorResult<KeysetPage<{ id: number }>>> = pages.next();
  let pagesHere = 0;
  try {
    while (true) {
      const step = await next;
      if (step.done) break;
      const page = step.value;
      // Ask for the next page while this one loads: the request only needs this page's last id.
      const stopping = ctx.signal?.aborted === true || (ctx.pageLimit !== undefined && pagesHere + 1 >= ctx.pageLimit);
      next = page.done || stopping ? Promise.resolve({ done: true, value: undefined }) : pages.next();
      next.catch(() => undefined);

      walk.pages += 1;
      pagesHere += 1;
      walk.rows += page.items.length;
      if (page.lastId !== null) walk.lastKey = page.lastId;
      const finalForCursor = page.done && !tracksSeen;
      const cursor = finalForCursor ? closedCursor(item, walk, ctx) : openCursor(item, { ...walk }, ctx);
      const result = await ctx.loader.load({
        stream,
        scope,
        records: page.items,
        quarantined: page.quarantined,
        cursor,
        seenWalkId: tracksSeen ? walk.walkId : undefined,
        idsOnly,
      });
      addStats(ctx, result);
      ctx.onProgress?.({
        type: 'page',
        stream: stream.name,
        scope: item.cursorKey,
        pages: walk.pages,
        rows: walk.rows,
        totalCount: page.meta.totalCount,
        perPage: page.meta.perPage,
      });
      if (page.done) break;
      if (stopping) return { pages: walk.pages, rows: walk.rows, deleted: 0, complete: false };
    }
  } finally {
    await pages.return(undefined).catch(() => undefined);
  }

  let deleted = 0;
  if (tracksSeen) {
    // Close the cursor first: if the process dies before the deletes are marked, the next complete snapshot marks
    // them; the reverse order could, on resume, compare an empty seen set and mark everything deleted.
    await ctx.loader.warehouse.saveCursor(closedCursor(item, walk, ctx));
    const marked = await ctx.loader.warehouse.markMissing({
      stream,
      scope: { ...scope },
      walkId: walk.walkId,
      runId: ctx.loader.runId,
      at: stamp(ctx),
    });
    deleted = marked.deleted;
    ctx.stats.deleted += marked.deleted;
  }
  return { pages: walk.pages, rows: walk.rows, deleted, complete: true };
}

/**
 * The audit log has no id to walk by keyset, but a closed past window of an append-only log does not change, so
 * offset pages inside it are stable; the checkpoint is the number of pages loaded.
 */
async function walkAudit(item: WorkItem, ctx: WalkContext): Promise<WalkOutcome> {
  const { stream, scope } = item;
  const walk: Walk = item.resume
    ? { ...item.resume }
    : { mode: 'audit', walkId: randomUUID(), from: item.from, to: item.to, lastKey: 0, pages: 0, rows: 0 };
  const { path, params } = scopedRequest(stream, stream.path, scope);
  let page = (walk.lastKey ?? 0) + 1;
  const startPages = walk.pages;
  const guard = new OffsetGuard(`${stream.name}[${item.cursorKey}]`);
  while (true) {
    const answer: ListPage = await ctx.client.list(
      path,
      {
        params: { ...params, start_time: walk.from ?? '2000-01-01 00:00:00', end_time: walk.to ?? item.to },
        fields: requestFields(stream, item.customFieldNames),
        sort: stream.cursor ?? undefined,
        page,
        perPage: stream.maxPerPage,
      },
      { signal: ctx.signal },
    );
    // Credits are money: an answer that ignores `page` or inflates its page count must not be paid for again.
    guard.check(page, answer);
    walk.pages += 1;
    walk.rows += answer.items.length;
    walk.lastKey = page;
    const done = answer.items.length === 0 || page >= answer.meta.pageCount;
    const cursor = done ? closedCursor(item, walk, ctx) : openCursor(item, { ...walk }, ctx);
    const result = await ctx.loader.load({ stream, scope, records: answer.items, cursor });
    addStats(ctx, result);
    ctx.onProgress?.({
      type: 'page',
      stream: stream.name,
      scope: item.cursorKey,
      pages: walk.pages,
      rows: walk.rows,
      totalCount: answer.meta.totalCount,
      perPage: answer.meta.perPage,
    });
    if (done) return { pages: walk.pages, rows: walk.rows, deleted: 0, complete: true };
    const limited = ctx.pageLimit !== undefined && walk.pages - startPages >= ctx.pageLimit;
    if (ctx.signal?.aborted || limited) return { pages: walk.pages, rows: walk.rows, deleted: 0, complete: false };
    page += 1;
  }
}

/**
 * Offset pages are the one walk whose progress the answers alone vouch for: a page must not repeat the one before
 * (a service that ignores `page` would be paid forever), and no more pages are asked than the first answer's
 * `totalCount` justifies (`ceil(totalCount / perPage) + 1`, the one extra allowing for rows added meanwhile). When
 * the answers contradict each other the scope fails, after at most one extra call.
 */
export class OffsetGuard {
  private previous: string | null = null;
  private maxPage: number | null = null;

  constructor(private readonly label: string) {}

  check(page: number, answer: ListPage): void {
    const { totalCount, perPage } = answer.meta;
    if (this.maxPage === null && perPage > 0) {
      this.maxPage = page + Math.ceil(Math.max(0, totalCount - (page - 1) * perPage) / perPage);
    }
    if (this.maxPage !== null && page > this.maxPage) {
      throw new Error(
        `${this.label}: the service keeps answering (page ${page}) past what its first answer's totalCount ${totalCount} at ${perPage} per page allows: stopped`,
      );
    }
    const fingerprint = answer.items.length
      ? createHash('sha1').update(JSON.stringify(answer.items)).digest('hex')
      : null;
    if (fingerprint !== null && fingerprint === this.previous) {
      throw new Error(
        `${this.label}: page ${page} holds the same records as page ${page - 1} (is \`page\` ignored?): stopped`,
      );
    }
    this.previous = fingerprint;
  }
}

export { addStats, stamp };

export function runWalk(item: WorkItem, ctx: WalkContext): Promise<WalkOutcome> {
  return item.stream.kind === 'audit' ? walkAudit(item, ctx) : walkKeyset(item, ctx);
}
