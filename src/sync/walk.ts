import { randomUUID } from 'node:crypto';
import { requestFields } from '../../schemas/columns.js';
import { walkDeleteCheck } from './delete-check.js';
import {
  closedCursor,
  pageLoop,
  readsWholeScope,
  type SourcePage,
  stamp,
  type Walk,
  type WalkContext,
  type WalkOutcome,
} from './page-loop.js';
import { scopedRequest } from './scope.js';
import { ORIGIN, rangeConditions, type WindowRange, walkRange } from './window.js';
import type { WorkItem } from './work-item.js';

/**
 * A backfill reads everything, with no upper bound either: a row changed during the walk is then either read in its
 * new version or, if the walk had passed it, read again by the next window (which starts at the signpost). So the
 * ids a backfill sees are every id that exists, and it detects deletes for free, like a snapshot.
 */
function windowConditions(item: WorkItem, range: WindowRange): string[] {
  const cursor = item.stream.cursor;
  if (!cursor || item.mode === 'snapshot' || item.mode === 'sweep' || item.mode === 'backfill') return [];
  return rangeConditions(cursor, range);
}

/** Keyset pages over `id` as page-loop pages: the position is the last id. */
export async function* keysetSource(
  ctx: WalkContext,
  path: string,
  query: Parameters<WalkContext['client']['keyset']>[1],
): AsyncGenerator<SourcePage> {
  for await (const page of ctx.client.keyset<{ id: number }>(path, query, { signal: ctx.signal })) {
    yield {
      records: page.items,
      quarantined: page.quarantined,
      ...(page.text !== undefined
        ? { answer: { text: page.text, bytes: page.bytes, quarantinedAt: page.quarantinedAt } }
        : {}),
      meta: page.meta,
      position: page.lastId,
      done: page.done,
    };
  }
}

/**
 * A walk id that says the walk started on a scope holding no live row (a first backfill of an event, say): it has
 * nothing to mark deleted at its end, so it records no seen ids and settles no deletes. The id is persisted with
 * the walk's cursor, so a walk resumed by a later run keeps the rule. On the replay bench a page's seen ids and a
 * walk's deletes cost CPU that grew with the table.
 */
const FRESH = 'fresh-';

async function keysetWalk(item: WorkItem, ctx: WalkContext): Promise<Walk> {
  if (item.mode === 'refresh' || item.mode === 'audit' || item.mode === 'check') {
    throw new Error(`${item.mode} items are not keyset walks`);
  }
  if (item.resume) return { ...item.resume };
  // A sweep reads only ids, of rows that exist by definition: never fresh.
  const fresh =
    (item.mode === 'snapshot' || item.mode === 'backfill') &&
    !(await ctx.loader.warehouse.current.scopeHoldsRows(item.stream.name, { ...item.scope }));
  const walkId = `${fresh ? FRESH : ''}${randomUUID()}`;
  return { mode: item.mode, walkId, from: item.from, to: item.to, lastKey: null, pages: 0, rows: 0 };
}

/** Walks one list item by keyset over `id`, checkpointing after every page in the page's own transaction. */
export async function walkKeyset(item: WorkItem, ctx: WalkContext): Promise<WalkOutcome> {
  if (item.mode === 'check') return walkDeleteCheck(item, ctx, walkKeyset);
  const { stream, scope } = item;
  const idsOnly = item.mode === 'sweep';
  const walk = await keysetWalk(item, ctx);
  const tracksSeen = readsWholeScope(walk.mode) && !walk.walkId.startsWith(FRESH);
  const { path, params } = scopedRequest(stream, stream.path, scope);
  const source = keysetSource(ctx, path, {
    params,
    search: windowConditions(item, walkRange(walk, item.to)),
    fields: idsOnly ? ['id'] : requestFields(stream, item.customFieldNames),
    expand: idsOnly || stream.expandSelected.length === 0 ? undefined : [...stream.expandSelected],
    perPage: stream.maxPerPage,
    afterId: walk.lastKey ?? undefined,
  });
  const loop = await pageLoop(item, ctx, source, {
    walk,
    // Walks that track seen ids close their cursor after settling deletes (below).
    closeOnLastPage: !tracksSeen,
    seenWalkId: tracksSeen ? walk.walkId : undefined,
    idsOnly,
  });
  if (!loop.complete) return { pages: walk.pages, rows: walk.rows, deleted: 0, complete: false };
  let deleted = 0;
  if (tracksSeen) {
    // Close the cursor first: if the process dies before the deletes are marked, the next complete snapshot marks
    // them; the reverse order could, on resume, compare an empty seen set and mark everything deleted.
    await ctx.loader.warehouse.cursors.save(closedCursor(item, walk, ctx));
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

/** Offset pages inside a closed audit window (the client's offset paginator refuses answers that ignore `page`). */
async function* auditSource(item: WorkItem, ctx: WalkContext, walk: Walk): AsyncGenerator<SourcePage> {
  const { stream, scope } = item;
  const { path, params } = scopedRequest(stream, stream.path, scope);
  const range = walkRange(walk, item.to);
  const query = {
    params: { ...params, start_time: range.from ?? ORIGIN, end_time: range.to },
    fields: requestFields(stream, item.customFieldNames),
    sort: stream.cursor ?? undefined,
    page: (walk.lastKey ?? 0) + 1,
    perPage: stream.maxPerPage,
  };
  for await (const answer of ctx.client.pages(path, query, { signal: ctx.signal })) {
    const raw =
      answer.text !== undefined ? { answer: { text: answer.text, bytes: answer.bytes, quarantinedAt: [] } } : {};
    yield { records: answer.items, ...raw, meta: answer.meta, position: answer.page, done: answer.done };
  }
}

/**
 * The audit log has no id to walk by keyset, but a closed past window of an append-only log does not change, so
 * offset pages inside it are stable; the checkpoint is the number of pages loaded.
 */
export async function walkAudit(item: WorkItem, ctx: WalkContext): Promise<WalkOutcome> {
  const walk: Walk = item.resume
    ? { ...item.resume }
    : { mode: 'audit', walkId: randomUUID(), from: item.from, to: item.to, lastKey: 0, pages: 0, rows: 0 };
  const loop = await pageLoop(item, ctx, auditSource(item, ctx, walk), { walk, closeOnLastPage: true });
  return { pages: walk.pages, rows: walk.rows, deleted: 0, complete: loop.complete };
}
