import { badRequest } from '../http/errors.js';
import type { StreamSpec } from '../schema/streams.js';

/** The list parameters every list endpoint shares (the spec's table), validated. */
export interface ListParams {
  page: number;
  /** Granted page size (after caps). */
  perPage: number;
  fields: string[] | null;
  expand: string[];
  ids: number[] | null;
  search: string | null;
  or: boolean;
  sort: { field: string; desc: boolean }[];
}

const POSITIVE = /^[1-9]\d*$/;
const EXPAND_CAP = 200;
export const DEFAULT_PER_PAGE = 20;

function positiveInt(name: string, text: string | null, fallback: number): number {
  if (text === null || text === '') return fallback;
  if (!POSITIVE.test(text.trim())) throw badRequest(`Parameter "${name}" must be a positive integer.`);
  return Number(text.trim());
}

export function splitList(text: string | null): string[] {
  if (text === null) return [];
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

export function parseListParams(spec: StreamSpec, q: URLSearchParams): ListParams {
  const expand = splitList(q.get('expand'));
  for (const e of expand) {
    if (!spec.expand.includes(e)) throw badRequest(`Invalid expand value "${e}" for ${spec.path}.`);
  }
  const page = positiveInt('page', q.get('page'), 1);
  // A larger request is silently capped; `_meta.perPage` tells the client what it got.
  const cap = expand.length > 0 ? Math.min(spec.cap, EXPAND_CAP) : spec.cap;
  const perPage = Math.min(positiveInt('per-page', q.get('per-page'), DEFAULT_PER_PAGE), cap);

  let ids: number[] | null = null;
  const idsText = q.get('ids');
  if (idsText !== null) {
    if (!spec.hasId) throw badRequest('Parameter "ids" is not supported by this list.');
    const parts = idsText.split(',').map((s) => s.trim());
    if (parts.some((p) => !POSITIVE.test(p))) throw badRequest('Parameter "ids" must hold positive integers only.');
    if (parts.length > 100) throw badRequest('Parameter "ids" accepts at most 100 ids.');
    ids = parts.map(Number);
  }

  const condition = q.get('searchCondition');
  if (condition !== null && condition !== 'and' && condition !== 'or') {
    throw badRequest('Parameter "searchCondition" must be "and" or "or".');
  }

  const sort = splitList(q.get('sort')).map((s) => ({
    field: s.startsWith('-') ? s.slice(1) : s.startsWith('+') ? s.slice(1) : s,
    desc: s.startsWith('-'),
  }));

  const fieldsText = q.get('fields');
  return {
    page,
    perPage,
    fields: fieldsText === null ? null : splitList(fieldsText),
    expand: [...new Set(expand)],
    ids,
    search: q.get('search'),
    or: condition === 'or',
    sort,
  };
}
