/**
 * A delete check: whether a scope lost records the warehouse still holds live, for one list call instead of a
 * whole id sweep. The daemon owes one per webhook-fed scope after a silence: a delete delivery the service gave up
 * on while nothing listened is seen by no poll, and sweeping every scope of every such stream (ceil(rows / cap)
 * calls each) made a two-minute outage cost more than a first start.
 *
 * The call asks the scope's ids newest first (`sort=-id`, `fields=id`, the largest page) and reads the service's
 * count (`_meta.totalCount`). With S the ids the service holds, W the scope's live rows and P the page (the newest
 * ids of S): every record created since the scope was last read has a higher id than any the warehouse holds, so
 * once the oldest id on the page is a live row (or the page holds all of S), every id of S the warehouse lacks is
 * on the page, and |S| = |W| - missed + |P \ W|. The check passes when `missed` is 0: nothing was deleted at the
 * service that the warehouse still holds (it counts as a sweep, and the scope's sweep schedule starts again from
 * it). Anything else (a count that does not add up, or a page whose oldest id the warehouse does not hold live) is
 * settled by the sweep itself, walked at once by the same item: the check never decides on a guess.
 */

import { randomUUID } from 'node:crypto';
import { openCursor, stamp, type Walk, type WalkContext, type WalkOutcome } from './page-loop.js';
import { scopedRequest } from './scope.js';
import type { DeleteCheckVerdict } from './types.js';
import { watermarkAfter } from './window.js';
import type { WorkItem } from './work-item.js';

/** The verdict on one answer: pure, so the rule is tested on its own. */
export function deleteCheckVerdict(
  page: { ids: readonly number[]; totalCount: number | null; pageCount: number },
  stored: { live: number; liveAmong: ReadonlySet<number> },
): DeleteCheckVerdict {
  const unknownOnPage = page.ids.filter((id) => !stored.liveAmong.has(id)).length;
  const oldest = page.ids.length ? Math.min(...page.ids) : null;
  const pageCoversNew = page.pageCount <= 1 || (oldest !== null && stored.liveAmong.has(oldest));
  return {
    serviceCount: page.totalCount,
    live: stored.live,
    unknownOnPage,
    pageCoversNew,
    missed: pageCoversNew && page.totalCount !== null ? stored.live + unknownOnPage - page.totalCount : null,
  };
}

/**
 * Walks a check item: one call; when it passes, the scope's sweep cursor records a sweep now; otherwise `sweep`
 * walks the scope's ids as a sweep item would (the check's call is its only extra cost).
 */
export async function walkDeleteCheck(
  item: WorkItem,
  ctx: WalkContext,
  sweep: (item: WorkItem, ctx: WalkContext) => Promise<WalkOutcome>,
): Promise<WalkOutcome> {
  const { stream, scope } = item;
  const { path, params } = scopedRequest(stream, stream.path, scope);
  const answer = await ctx.client.list<{ id?: unknown }>(
    path,
    { params, fields: ['id'], sort: '-id', perPage: stream.maxPerPage },
    { signal: ctx.signal },
  );
  const ids = answer.items.map((r) => Number(r.id)).filter((id) => Number.isSafeInteger(id) && id > 0);
  const stored = await ctx.loader.warehouse.current.liveCount(stream.name, { ...scope }, ids);
  const verdict = deleteCheckVerdict(
    { ids, totalCount: answer.meta.totalCount, pageCount: answer.meta.pageCount },
    stored,
  );
  ctx.stats.pages += 1;
  ctx.onProgress?.({ type: 'delete-check', stream: stream.name, scope: item.cursorKey, ...verdict });
  if (verdict.missed !== 0) {
    // The sweep is recorded as begun before its first page: a run stopped now resumes the sweep, and never pays for
    // the check again.
    const walk: Walk = {
      mode: 'sweep',
      walkId: randomUUID(),
      from: null,
      to: item.to,
      lastKey: null,
      pages: 0,
      rows: 0,
    };
    await ctx.loader.warehouse.cursors.save(openCursor(item, walk, ctx));
    const swept = await sweep({ ...item, mode: 'sweep', resume: walk }, ctx);
    return { ...swept, pages: swept.pages + 1 };
  }
  const prev = item.previous;
  await ctx.loader.warehouse.cursors.save({
    stream: stream.name,
    scope: item.cursorKey,
    watermark: watermarkAfter(item.mode, item.to, prev),
    walk: null,
    lastPages: prev?.lastPages ?? answer.meta.pageCount,
    lastSweepAt: stamp(ctx),
    updatedAt: stamp(ctx),
  });
  return { pages: 1, rows: 0, deleted: 0, complete: true };
}
