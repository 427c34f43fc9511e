import type { Json, Rec } from '../core/record.js';
import { HttpError } from '../http/errors.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import { STREAM_BY_NAME } from '../schema/streams.js';
import { type InputReader, readGroup, readWebhook } from '../webhooks/validate.js';
import { apiChange, nowText, type ServiceContext } from './context.js';
import { type Found, findAny, findOwned, liveRecords, updateRecord } from './lookup.js';
import { webhookGroupExtras } from './singles.js';

/**
 * Webhook management. The public material shows only `GET /webhooks`; the rest is ours, in the list's own style:
 * `POST /webhooks` (201 with the record), `PUT /webhooks/{id}` (200, members not sent keep their value),
 * `DELETE /webhooks/{id}` (204), and the same under `/webhook-groups` (a group answers as `GET /webhook-groups/{id}`
 * does, with its event ids and webhooks). Bodies are form or JSON. Validation errors answer 422 with the
 * `[{field, message}]` array; a record of another account is a 403. Deleting a group detaches its webhooks
 * (`group_id` becomes null; they keep firing, without the group's headers). Records made here are never touched by
 * background mutations. Created and updated by the API user, id 9001.
 */

const API_USER = 9001;

const WEBHOOK_DEFAULTS: Record<string, Json> = {
  content_type: 'json',
  post_field_data: '',
  use_default_fields: true,
  custom_fields: [],
  notes: '',
  trigger_on_insert: true,
  trigger_on_update: true,
  trigger_on_delete: true,
  all_fields: true,
  fields: [],
  public_user: true,
  admin_user: true,
  api_call: true,
  any_event: true,
  event_ids: [],
  group_id: null,
  headers: [],
  enabled: true,
};

const GROUP_DEFAULTS: Record<string, Json> = { headers: [], notification_emails: [] };

function reject(r: InputReader): void {
  if (r.errors.length > 0) throw new HttpError(422, 'Data Validation Failed.', r.errors);
}

/** A record with every field of its stream, in the stream's field order (lists serialize records as they are). */
function ordered(stream: string, values: Record<string, Json>): Rec {
  const out: Rec = {};
  for (const f of Object.keys(STREAM_BY_NAME.get(stream)!.fields)) out[f] = values[f] ?? null;
  return out;
}

function checkWebhook(ctx: ServiceContext, account: number, r: InputReader, merged: Record<string, Json>): void {
  r.required('name', 'Name', merged.name);
  r.required('url', 'Url', merged.url);
  r.required('trigger_object', 'Trigger Object', merged.trigger_object);
  r.check(
    merged.trigger_on_insert === true || merged.trigger_on_update === true || merged.trigger_on_delete === true,
    'trigger_on_insert',
    'Choose at least one of insert, update and delete.',
  );
  r.check(
    merged.public_user === true || merged.admin_user === true || merged.api_call === true,
    'public_user',
    'Choose at least one of public user, admin user and API call.',
  );
  const eventIds = Array.isArray(merged.event_ids) ? (merged.event_ids as number[]) : [];
  if (merged.any_event === false) {
    r.check(eventIds.length > 0, 'event_ids', 'Event Ids cannot be blank unless Any Event is set.');
  }
  const foreign = eventIds.find((e) => ctx.world.eventAccount(e) !== account);
  if (foreign !== undefined) r.check(false, 'event_ids', `Event ${foreign} does not exist.`);
  if (typeof merged.group_id === 'number') {
    const group = findAny(ctx.world, 'webhook_groups', merged.group_id);
    r.check(group?.part.account === account, 'group_id', 'Group is invalid.');
  }
}

function checkGroup(ctx: ServiceContext, account: number, r: InputReader, merged: Record<string, Json>): void {
  r.required('name', 'Name', merged.name);
  if (typeof merged.name !== 'string' || merged.name === '') return;
  const name = merged.name.toLowerCase();
  const taken = liveRecords(ctx.world.table('webhook_groups').scope(account)).some(
    (g) => g.id !== merged.id && String(g.name).toLowerCase() === name,
  );
  r.check(!taken, 'name', `Name "${merged.name}" has already been taken.`);
}

function groupBody(ctx: ServiceContext, rec: Rec, account: number): Json {
  return { ...rec, ...webhookGroupExtras(ctx.world, account, rec) };
}

function insert(ctx: ServiceContext, stream: string, account: number, values: Record<string, Json>): Found {
  const table = ctx.world.table(stream);
  const part = table.scope(account)!;
  const now = nowText(ctx);
  const id = table.allocateId(part);
  const rec = ordered(stream, {
    ...values,
    id,
    created_at: now,
    created_by: API_USER,
    updated_at: now,
    updated_by: API_USER,
  });
  const pos = part.insert(rec);
  ctx.mutator.manage(stream, id);
  const found = { part, pos, rec };
  apiChange(ctx, stream, 'insert', found);
  return found;
}

/** What the handlers of one managed stream need: how a body is read, what a new record starts from, how it is checked. */
interface Managed {
  readonly stream: string;
  readonly read: (body: ApiRequest['body']) => InputReader;
  readonly defaults: Record<string, Json>;
  readonly check: (ctx: ServiceContext, account: number, r: InputReader, merged: Record<string, Json>) => void;
}

const WEBHOOKS: Managed = { stream: 'webhooks', read: readWebhook, defaults: WEBHOOK_DEFAULTS, check: checkWebhook };
const GROUPS: Managed = { stream: 'webhook_groups', read: readGroup, defaults: GROUP_DEFAULTS, check: checkGroup };

/** A POST: the body over the defaults, checked, then inserted. */
function create(ctx: ServiceContext, req: ApiRequest, m: Managed): Found {
  const r = m.read(req.body);
  const merged = { ...m.defaults, ...r.values };
  m.check(ctx, req.account, r, merged);
  reject(r);
  return insert(ctx, m.stream, req.account, merged);
}

/**
 * A PUT on an owned record: read and checked against the record as it would become (members not sent keep their
 * value), then applied, updated by the API user.
 */
function update(ctx: ServiceContext, req: ApiRequest, m: Managed): Found {
  const found = findOwned(ctx.world, m.stream, req.params.id!, req.account);
  const r = m.read(req.body);
  m.check(ctx, req.account, r, { ...found.rec, ...r.values });
  reject(r);
  updateRecord(found, { ...r.values, updated_by: API_USER }, nowText(ctx));
  apiChange(ctx, m.stream, 'update', found);
  return found;
}

export function createWebhook(ctx: ServiceContext) {
  return (req: ApiRequest): ApiResponse => ({ status: 201, body: create(ctx, req, WEBHOOKS).rec });
}

export function updateWebhook(ctx: ServiceContext) {
  return (req: ApiRequest): ApiResponse => ({ status: 200, body: update(ctx, req, WEBHOOKS).rec });
}

export function deleteWebhook(ctx: ServiceContext) {
  return (req: ApiRequest): ApiResponse => {
    const found = findOwned(ctx.world, 'webhooks', req.params.id!, req.account);
    found.part.remove(found.pos);
    apiChange(ctx, 'webhooks', 'delete', found);
    return { status: 204 };
  };
}

export function createGroup(ctx: ServiceContext) {
  return (req: ApiRequest): ApiResponse => {
    const found = create(ctx, req, GROUPS);
    return { status: 201, body: groupBody(ctx, found.rec, req.account) };
  };
}

export function updateGroup(ctx: ServiceContext) {
  return (req: ApiRequest): ApiResponse => {
    const found = update(ctx, req, GROUPS);
    return { status: 200, body: groupBody(ctx, found.rec, req.account) };
  };
}

export function deleteGroup(ctx: ServiceContext) {
  return (req: ApiRequest): ApiResponse => {
    const found = findOwned(ctx.world, 'webhook_groups', req.params.id!, req.account);
    const hooks = ctx.world.table('webhooks').scope(req.account);
    const now = nowText(ctx);
    if (hooks) {
      for (const pos of [...hooks.positions()]) {
        const hook: Found = { part: hooks, pos, rec: hooks.record(pos) };
        if (hook.rec.group_id !== found.rec.id) continue;
        updateRecord(hook, { group_id: null, updated_by: API_USER }, now);
        apiChange(ctx, 'webhooks', 'update', hook);
      }
    }
    found.part.remove(found.pos);
    apiChange(ctx, 'webhook_groups', 'delete', found);
    return { status: 204 };
  };
}
