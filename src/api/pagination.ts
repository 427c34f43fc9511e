import { createHash } from 'node:crypto';
import type { MalformedResponseError } from './errors.js';
import type { ListQuery } from './query.js';
import type { KeysetPage, KeysetQuery, ListPage, OffsetPage } from './types.js';

type ListCall<T> = (query: ListQuery) => Promise<ListPage<T>>;

/**
 * Offset pages. Follows the answers, not the request: the next page number comes from `_meta.pageCount`, and the
 * page size asked for next is the one the server granted (`_meta.perPage`), since the real caps are contradictory.
 * Guarded (see OffsetGuard): an answer that ignores `page` or inflates its page count throws, after at most one
 * extra call, instead of being paid for again and again.
 */
export async function* offsetPages<T>(
  list: ListCall<T>,
  query: ListQuery,
  malformed: (detail: string, path: string) => MalformedResponseError,
): AsyncGenerator<OffsetPage<T>> {
  let page = query.page ?? 1;
  let perPage = query.perPage;
  const guard = new OffsetGuard();
  while (true) {
    const answer = await list({ ...query, page, perPage });
    const refused = guard.refuse(page, answer);
    if (refused) throw malformed(refused, answer.path);
    const done = answer.items.length === 0 || page >= answer.meta.pageCount;
    yield { ...answer, page, done };
    if (done) return;
    if (answer.meta.perPage > 0) perPage = answer.meta.perPage;
    page += 1;
  }
}

/**
 * Offset pages are the one walk whose progress the answers alone vouch for: a page must not repeat the one before
 * (a service that ignores `page` would be paid forever; the Singer SDK's paginator refuses a repeated page the same
 * way), and no more pages are asked than the first answer's `totalCount` justifies (`ceil(totalCount / perPage)`
 * from the first page asked, plus one allowing for rows added meanwhile; its `pageCount` when it gives no total).
 */
class OffsetGuard {
  private previous: string | null = null;
  private maxPage: number | null = null;
  private bound = '';

  /** Why this answer for `page` must not be followed, or null when it may. */
  refuse(page: number, answer: ListPage<unknown>): string | null {
    const { totalCount, perPage, pageCount } = answer.meta;
    if (this.maxPage === null && perPage > 0) {
      // Without a totalCount, the page count the first answer gave (plus one, as above) bounds the walk.
      this.maxPage =
        totalCount === null
          ? Math.max(page, pageCount) + 1
          : page + Math.ceil(Math.max(0, totalCount - (page - 1) * perPage) / perPage);
      this.bound = totalCount === null ? `pageCount ${pageCount}` : `totalCount ${totalCount} at ${perPage} per page`;
    }
    if (this.maxPage !== null && page > this.maxPage) {
      return `the service keeps answering (page ${page}) past what its first answer's ${this.bound} allows: stopped`;
    }
    const fingerprint = answer.items.length
      ? createHash('sha1').update(JSON.stringify(answer.items)).digest('hex')
      : null;
    if (fingerprint !== null && fingerprint === this.previous) {
      return `page ${page} holds the same records as page ${page - 1} (is \`page\` ignored?): stopped`;
    }
    this.previous = fingerprint;
    return null;
  }
}

/** An id as a number: ids arrive as numbers or numeric strings. Null when it is neither. */
export function idOf(value: unknown): number | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : null;
  if (typeof value === 'string' && /^-?\d+$/.test(value)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : null;
  }
  return null;
}

/**
 * Keyset pages over `id`: `sort=id`, `search=<conditions>&id>{last}`, `page=1`, at the caller's page size. Stops when
 * the answer says nothing remains (`_meta.pageCount <= 1` or no items), never by asking for an empty page.
 *
 * A record the walk cannot key (no integer id, an id repeated within the page, or one not above the bound asked for)
 * is set aside in `quarantined` with the reason, and the walk goes on after the largest valid id: one bad record
 * must not sink its neighbours. Ids going down inside a page would mean the service ignored `sort=id`, so rows
 * could be skipped silently: that throws. A page of items none of which can be keyed is yielded (its records are
 * kept as rejected) and then throws, fully read or not: going on would ask for the same page again, and an answer
 * of nothing but unusable records says something is wrong with the whole scope. That is the keyset walk's loop
 * guard: every page asked for starts above the last id kept, so an answer repeating a page keys nothing and stops.
 */
export async function* keysetPages<T extends { id: number | string }>(
  list: ListCall<T>,
  q: KeysetQuery,
  malformed: (detail: string, path: string) => MalformedResponseError,
): AsyncGenerator<KeysetPage<T>> {
  const { afterId: start, perPage, search = [], ...rest } = q;
  let afterId = start;
  while (true) {
    const conditions = afterId === undefined ? [...search] : [...search, `id>${afterId}`];
    const answer = await list({ ...rest, search: conditions, sort: 'id', page: 1, perPage });
    const { items, quarantined, quarantinedAt, lastId } = keyPage(answer.items, afterId, answer.path, malformed);
    const unusable = lastId === null && answer.items.length > 0;
    // Not done when nothing could be keyed: the consumer asks for more and meets the error below.
    const done = !unusable && (answer.items.length === 0 || answer.meta.pageCount <= 1);
    yield { ...answer, items, quarantined, quarantinedAt, lastId: lastId ?? afterId ?? null, done };
    if (unusable) {
      throw malformed(
        `none of the ${answer.items.length} items has a usable id above ${afterId ?? '-'}: the walk cannot go on (they are kept as rejected)`,
        answer.path,
      );
    }
    if (done) return;
    afterId = lastId ?? afterId;
  }
}

function keyPage<T extends { id: number | string }>(
  raw: readonly T[],
  afterId: number | undefined,
  path: string,
  malformed: (detail: string, path: string) => MalformedResponseError,
): { items: T[]; quarantined: { raw: unknown; reason: string }[]; quarantinedAt: number[]; lastId: number | null } {
  const items: T[] = [];
  const quarantined: { raw: unknown; reason: string }[] = [];
  const quarantinedAt: number[] = [];
  const seen = new Set<number>();
  let lastId: number | null = null;
  for (const [i, item] of raw.entries()) {
    const id = idOf((item as { id?: unknown } | null)?.id);
    if (id === null) {
      quarantined.push({
        raw: item,
        reason: `no integer id (${JSON.stringify((item as { id?: unknown } | null)?.id) ?? 'missing'})`,
      });
      quarantinedAt.push(i);
      continue;
    }
    if (seen.has(id)) {
      quarantined.push({ raw: item, reason: `id ${id} repeated within the page` });
      quarantinedAt.push(i);
      continue;
    }
    if (afterId !== undefined && id <= afterId) {
      quarantined.push({ raw: item, reason: `id ${id} is not above id>${afterId}, which was asked for` });
      quarantinedAt.push(i);
      continue;
    }
    if (lastId !== null && id < lastId) {
      throw malformed(`keyset order broken: item ${i} has id ${id} after ${lastId} (sort=id was asked)`, path);
    }
    seen.add(id);
    lastId = id;
    items.push(item);
  }
  return { items, quarantined, quarantinedAt, lastId };
}
