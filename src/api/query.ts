import { IDS_PER_CALL } from '../../connectors/service.js';
import { ApiUsageError } from './errors.js';

/** What the engine passes to a list call; the client turns it into the query string. */
export interface ListQuery {
  /** Conditions like `updated_at>=2024-01-01 00:00:00`, joined with `&` inside the one `search` value. */
  search?: string[] | undefined;
  searchCondition?: 'or' | undefined;
  sort?: string | undefined;
  fields?: string[] | undefined;
  expand?: string[] | undefined;
  /** At most 100 positive integers per request (spec). */
  ids?: number[] | undefined;
  page?: number | undefined;
  perPage?: number | undefined;
  /** Scope and endpoint parameters: `{ event_id: 12 }`, the audit list's `{ event_id, start_time, end_time }`. */
  params?: Record<string, string | number> | undefined;
}

/**
 * encodeURIComponent, with commas kept readable (`fields=id,name`): a comma is a legal query character and every
 * server decodes both forms the same. Everything else, notably `&` `=` `>` inside `search`, is escaped.
 */
function encodeQueryValue(value: string): string {
  return encodeURIComponent(value).replace(/%2C/g, ',');
}

export function toQueryString(pairs: [string, string | number][]): string {
  return pairs.map(([k, v]) => `${encodeQueryValue(k)}=${encodeQueryValue(String(v))}`).join('&');
}

/** The query pairs of one list call, in a stable order (scope params first, then paging last for readable logs). */
export function listQueryPairs(q: ListQuery): [string, string | number][] {
  const pairs: [string, string | number][] = [];
  for (const [k, v] of Object.entries(q.params ?? {})) pairs.push([k, v]);
  if (q.fields && q.fields.length > 0) pairs.push(['fields', q.fields.join(',')]);
  if (q.expand && q.expand.length > 0) pairs.push(['expand', q.expand.join(',')]);
  if (q.ids && q.ids.length > 0) {
    if (q.ids.length > IDS_PER_CALL)
      throw new ApiUsageError(`ids: at most ${IDS_PER_CALL} per request, got ${q.ids.length}`);
    for (const id of q.ids) {
      if (!Number.isSafeInteger(id) || id <= 0) throw new ApiUsageError(`ids: ${id} is not a positive integer`);
    }
    pairs.push(['ids', q.ids.join(',')]);
  }
  if (q.search && q.search.length > 0) {
    for (const c of q.search) {
      if (c.includes('&')) throw new ApiUsageError(`search: one condition per entry, '&' joins them: ${c}`);
    }
    pairs.push(['search', q.search.join('&')]);
  }
  if (q.searchCondition) pairs.push(['searchCondition', q.searchCondition]);
  if (q.sort) pairs.push(['sort', q.sort]);
  if (q.page !== undefined) pairs.push(['page', positiveInt('page', q.page)]);
  if (q.perPage !== undefined) pairs.push(['per-page', positiveInt('perPage', q.perPage)]);
  return pairs;
}

function positiveInt(name: string, n: number): number {
  if (!Number.isSafeInteger(n) || n <= 0) throw new ApiUsageError(`${name}: ${n} is not a positive integer`);
  return n;
}
