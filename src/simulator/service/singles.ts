import type { Json, Rec } from '../core/record.js';
import type { World } from '../data/world.js';
import { badRequest, notFound } from '../http/errors.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import { splitList } from '../query/params.js';
import { project, projection } from '../query/project.js';
import type { StreamSpec } from '../schema/streams.js';
import type { ServiceContext } from './context.js';
import { expandValue } from './expand.js';
import { customDefs, findAny, findOwned, liveRecords } from './lookup.js';

/**
 * `GET <path>/{id}`. Without `fields` a single record carries every base field (custom fields only when named).
 * Quirks from the facts page: a single registrant's `reg_type_id` is an `{id, value}` object (a plain id in lists);
 * a single webhook group adds its event ids and webhooks (`event_ids`, `webhooks`).
 */
export function singleHandler(ctx: ServiceContext, spec: StreamSpec) {
  return (req: ApiRequest): ApiResponse => {
    const world = ctx.world;
    const found = findOwned(world, spec.name, req.params.id!, req.account);
    const expand = splitList(req.query.get('expand'));
    for (const e of expand) if (!spec.expand.includes(e)) throw badRequest(`Invalid expand value "${e}".`);
    const fields = req.query.get('fields');
    const defs = customDefs(world, spec, found.part);
    const proj =
      fields === null
        ? { keys: Object.keys(spec.fields), customs: [], identity: false }
        : projection(spec, splitList(fields), defs);
    const out: Rec = project(found.rec, proj);
    for (const e of expand) out[e] = expandValue(world, spec.name, e, found.rec);
    if (spec.name === 'registrants' && typeof out.reg_type_id === 'number') {
      const type = findAny(world, 'registrant_types', out.reg_type_id);
      out.reg_type_id = { id: out.reg_type_id, value: (type?.rec.name as Json) ?? '' };
    }
    if (spec.name === 'webhook_groups') Object.assign(out, webhookGroupExtras(world, found.part.account, found.rec));
    return { status: 200, body: out };
  };
}

/** What a retrieved webhook group adds: the event ids its webhooks filter on, and its webhooks. */
export function webhookGroupExtras(world: World, account: number, group: Rec): { event_ids: Json; webhooks: Json } {
  const hooks = liveRecords(world.table('webhooks').scope(account)).filter((w) => w.group_id === group.id);
  const eventIds = new Set<number>();
  for (const w of hooks) for (const e of (w.event_ids as number[]) ?? []) eventIds.add(e);
  return {
    event_ids: [...eventIds].sort((a, b) => a - b),
    webhooks: hooks.map((w) => ({ id: w.id!, name: w.name!, url: w.url!, trigger_object: w.trigger_object! })),
  };
}

/** `GET /packages/{id}/fee` and `GET /sessions/{id}/fee`: one fee object (1 credit). */
export function feeHandler(ctx: ServiceContext, stream: 'packages' | 'sessions') {
  return (req: ApiRequest): ApiResponse => {
    const world = ctx.world;
    const found = findOwned(world, stream, req.params.id!, req.account);
    const event = world.events.get(found.part.scopeId);
    if (!event) throw notFound();
    const cents =
      stream === 'packages'
        ? Math.round(Number(found.rec.price ?? 0) * 100)
        : (event.sessionCents.get(found.rec.id as number) ?? 0);
    const amount = (cents / 100).toFixed(2);
    return {
      status: 200,
      body: {
        [stream === 'packages' ? 'package_id' : 'session_id']: found.rec.id!,
        event_id: event.id,
        currency: event.currency,
        amount,
        tax_rate: (event.taxRate * 100).toFixed(2),
        early_bird_amount: cents > 0 ? ((cents * 0.8) / 100).toFixed(2) : '0.00',
        early_bird_until: new Date((event.t.regFrom + 30 * 86_400) * 1000).toISOString().slice(0, 10),
      },
    };
  };
}
