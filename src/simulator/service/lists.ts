import type { CustomDef, Rec } from '../core/record.js';
import { isChoiceType } from '../core/record.js';
import { parseTimestamp } from '../core/time.js';
import { badRequest, forbidden, notFound } from '../http/errors.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import { parseListParams } from '../query/params.js';
import { project, projection } from '../query/project.js';
import { runList } from '../query/run.js';
import { type Condition, parseSearch } from '../query/search.js';
import type { FieldKind } from '../schema/kinds.js';
import type { StreamSpec } from '../schema/streams.js';
import type { Partition } from '../store/partition.js';
import type { ServiceContext } from './context.js';
import { expandValue } from './expand.js';
import { customDefs } from './lookup.js';

const INTEGER = /^\d+$/;

function requireInt(q: URLSearchParams, name: string): number {
  const text = q.get(name);
  if (text === null || text.trim() === '') throw badRequest(`Missing required parameter: ${name}`);
  if (!INTEGER.test(text.trim())) throw badRequest(`Parameter "${name}" must be an integer.`);
  return Number(text.trim());
}

/** The partition a list request reads: 400 without a required scope, 404 for an unknown one, 403 for a foreign one. */
export function resolvePartition(ctx: ServiceContext, spec: StreamSpec, req: ApiRequest): Partition {
  const table = ctx.world.table(spec.name);
  if (spec.scope === 'account') return table.scope(req.account)!;
  if (spec.scope === 'event') {
    const eventId = requireInt(req.query, 'event_id');
    const events = ctx.world.table('events');
    const owner = events.ownerOf(eventId);
    if (!owner || owner.find(eventId) < 0) throw notFound();
    if (owner.account !== req.account) throw forbidden();
    const part = table.scope(eventId);
    if (!part) throw notFound();
    return part;
  }
  const listId = req.params.data_list_id!;
  const owner = ctx.world.table('data_lists').ownerOf(listId);
  if (!owner?.owns(listId)) throw notFound();
  if (owner.account !== req.account) throw forbidden();
  if (owner.find(listId) < 0) throw notFound();
  return table.scope(listId)!;
}

export function kindResolver(spec: StreamSpec, defs: readonly CustomDef[]): (field: string) => FieldKind | undefined {
  const customKinds = new Map(defs.map((d) => [`c_${d.id}`, (isChoiceType(d.type) ? 'choices' : 'str') as FieldKind]));
  return (field) => spec.fields[field] ?? customKinds.get(field);
}

function auditWindow(q: URLSearchParams): Condition[] {
  requireInt(q, 'event_id');
  const window: Condition[] = [];
  for (const [name, op] of [
    ['start_time', '>='],
    ['end_time', '<'],
  ] as const) {
    const text = q.get(name);
    if (text === null || text.trim() === '') {
      if (name === 'start_time') throw badRequest('Missing required parameter: start_time');
      continue;
    }
    const seconds = parseTimestamp(text.trim());
    if (seconds === null) throw badRequest(`Parameter "${name}" must be a datetime YYYY-MM-DD HH:MM:SS.`);
    window.push({ field: 'updated_at', op, value: text, kind: 'ts', num: null, seconds, texts: [text] });
  }
  return window;
}

function pageHref(ctx: ServiceContext, req: ApiRequest, page: number): string {
  const q = new URLSearchParams(req.query);
  q.set('page', String(page));
  return `${ctx.baseUrl}${req.path}?${q.toString()}`;
}

export function listHandler(ctx: ServiceContext, spec: StreamSpec) {
  const audit = spec.name === 'registration_audit';
  return (req: ApiRequest): ApiResponse => {
    // The audit log checks its own required parameters first (400 before any 403/404 on the event).
    const required = audit ? auditWindow(req.query) : [];
    const part = resolvePartition(ctx, spec, req);
    const params = parseListParams(spec, req.query);
    const defs = customDefs(ctx.world, spec, part);
    const kindOf = kindResolver(spec, defs);
    for (const s of params.sort) {
      if (!kindOf(s.field)) throw badRequest(`Invalid sort field "${s.field}".`);
    }
    const search = params.search ? parseSearch(params.search, kindOf) : [];
    const result = runList(part, params, search, required, kindOf);
    const proj = projection(spec, params.fields, defs);
    const items: Rec[] = result.positions.map((pos) => {
      const rec = result.record(pos);
      let out = project(rec, proj);
      if (params.expand.length > 0) {
        if (out === rec) out = { ...rec };
        for (const e of params.expand) out[e] = expandValue(ctx.world, spec.name, e, rec);
      }
      return out;
    });
    const meta = {
      totalCount: result.total,
      pageCount: result.pageCount,
      currentPage: params.page,
      perPage: params.perPage,
    };
    const body = JSON.stringify({
      items,
      _links: {
        self: { href: pageHref(ctx, req, params.page) },
        first: { href: pageHref(ctx, req, 1) },
        last: { href: pageHref(ctx, req, Math.max(1, result.pageCount)) },
      },
      _meta: meta,
    });
    return {
      status: 200,
      body,
      headers: {
        'X-Pagination-Current-Page': meta.currentPage,
        'X-Pagination-Page-Count': meta.pageCount,
        'X-Pagination-Per-Page': meta.perPage,
        'X-Pagination-Total-Count': meta.totalCount,
      },
    };
  };
}
