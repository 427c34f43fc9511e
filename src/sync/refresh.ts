import { randomUUID } from 'node:crypto';
import { IDS_PER_CALL } from '../../connectors/service.js';
import { requestFields } from '../../schemas/columns.js';
import type { CursorState, Warehouse } from '../warehouse/index.js';
import { pageLoop, type SourcePage, stamp, type WalkContext, type WalkOutcome } from './page-loop.js';
import { scopedRequest } from './scope.js';
import { runWalk } from './stream-kinds.js';
import { keysetSource } from './walk.js';
import { reaches, watermarkAfter } from './window.js';
import type { WorkItem } from './work-item.js';

/**
 * The parent records of this scope that changed since the child stream was last read (`updated_at >= from`), or
 * null when the parent is not current up to this run's signpost (then the child needs a full snapshot instead).
 */
async function changedParentIds(warehouse: Warehouse, item: WorkItem): Promise<number[] | null> {
  const parent = item.stream.refreshByParent;
  if (!parent || item.from === null) return null;
  const cursor = await warehouse.cursors.get(parent.stream, item.scope.key);
  if (!cursor || cursor.walk || !reaches(cursor.watermark, item.to)) return null;
  const { column, value } = item.scope;
  return warehouse.current.changedIds({
    table: parent.stream,
    column: 'updated_at',
    from: item.from,
    scope: column !== null && value !== null ? { column, value } : null,
  });
}

/** Keyset pages of the children of `parentIds`, 100 parents per `*in*` condition, as one source. */
async function* childPages(item: WorkItem, ctx: WalkContext, parentIds: readonly number[]): AsyncGenerator<SourcePage> {
  const { stream, scope } = item;
  const parent = stream.refreshByParent!;
  const { path, params } = scopedRequest(stream, stream.path, scope);
  for (let i = 0; i < parentIds.length; i += IDS_PER_CALL) {
    const chunk = parentIds.slice(i, i + IDS_PER_CALL);
    const last = i + IDS_PER_CALL >= parentIds.length;
    for await (const page of keysetSource(ctx, path, {
      params,
      search: [`${parent.key}=*in*${chunk.join('|')}`],
      fields: requestFields(stream, item.customFieldNames),
      perPage: stream.maxPerPage,
    })) {
      // Done only when the last chunk is: the loop then stops asking.
      yield { ...page, position: null, done: page.done && last };
    }
  }
}

/**
 * Re-reads the rows of the changed parents only, keyset over id within `<key>=*in*<ids>`, and flags rows of those
 * parents that vanished. Pages carry no checkpoint: if the process dies here, the next run repeats this (small) walk.
 */
async function walkRefresh(item: WorkItem, ctx: WalkContext, parentIds: readonly number[]): Promise<WalkOutcome> {
  const { stream, scope } = item;
  const parent = stream.refreshByParent!;
  const walkId = randomUUID();
  const loop = await pageLoop(item, ctx, childPages(item, ctx, parentIds), {
    walk: null,
    closeOnLastPage: false,
    seenWalkId: walkId,
  });
  // Stopped part-way: nothing is closed or flagged; the next run repeats this (small) walk.
  if (!loop.complete) return { pages: loop.pages, rows: loop.rows, deleted: 0, complete: false };
  const prev = item.previous;
  const closed: CursorState = {
    stream: stream.name,
    scope: item.cursorKey,
    watermark: watermarkAfter(item.mode, item.to, prev),
    walk: null,
    lastPages: prev?.lastPages ?? null,
    lastSweepAt: prev?.lastSweepAt ?? null,
    updatedAt: stamp(ctx),
  };
  const warehouse = ctx.loader.warehouse;
  await warehouse.cursors.save(closed);
  const marked = await warehouse.markMissing({
    stream,
    scope: { ...scope },
    walkId,
    runId: ctx.loader.runId,
    at: stamp(ctx),
    within: { column: parent.key, values: parentIds },
  });
  ctx.stats.deleted += marked.deleted;
  return { pages: loop.pages, rows: loop.rows, deleted: marked.deleted, complete: true };
}

/**
 * A refresh item: the changed parents' rows when the parent is current, nothing (and no call) when no parent
 * changed, or a full snapshot when the parent was not read up to this run's signpost.
 */
export async function runRefresh(item: WorkItem, ctx: WalkContext): Promise<WalkOutcome> {
  const warehouse = ctx.loader.warehouse;
  const ids = await changedParentIds(warehouse, item);
  if (ids === null) return runWalk({ ...item, mode: 'snapshot', from: null }, ctx);
  return walkRefresh(item, ctx, ids);
}
