import type { MalformedResponseError } from './errors.js';
import type { ListQuery } from './query.js';
import type { KeysetPage, KeysetQuery, ListPage } from './types.js';

type ListCall<T> = (query: ListQuery) => Promise<ListPage<T>>;

/**
 * Offset pages. Follows the answers, not the request: the next page number comes from `_meta.pageCount`, and the
 * page size asked for next is the one the server granted (`_meta.perPage`), since the real caps are contradictory.
 */
export async function* offsetPages<T>(list: ListCall<T>, query: ListQuery): AsyncGenerator<ListPage<T>> {
  let page = query.page ?? 1;
  let perPage = query.perPage;
  while (true) {
    const answer = await list({ ...query, page, perPage });
    yield answer;
    if (answer.items.length === 0 || page >= answer.meta.pageCount) return;
    if (answer.meta.perPage > 0) perPage = answer.meta.perPage;
    page += 1;
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
 * the answer says nothing remains (`_meta.pageCount <= 1` or no items), never by asking for an empty page. Ids must
 * increase strictly and start above `afterId`: anything else would silently skip or repeat rows, so it throws.
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
    let lastId: number | null = afterId ?? null;
    for (const [i, item] of answer.items.entries()) {
      const id = idOf(item.id);
      if (id === null) throw malformed(`item ${i} has no integer id (${JSON.stringify(item.id)})`, answer.path);
      if (lastId !== null && id <= lastId) {
        throw malformed(
          `keyset order broken: item ${i} has id ${id} after ${lastId} (sort=id and id>${afterId ?? '-'} were asked)`,
          answer.path,
        );
      }
      lastId = id;
    }
    const done = answer.items.length === 0 || answer.meta.pageCount <= 1;
    yield { ...answer, lastId, done };
    if (done) return;
    afterId = lastId ?? undefined;
  }
}
