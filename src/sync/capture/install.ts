/**
 * Setting the service up to push changes to `evsync serve`: one webhook group holding the secret header, and one
 * webhook per trigger object the selected streams need (JSON, every field, every occasion and initiator, any event).
 * Idempotent: what exists and matches is left alone, what differs is updated, what is missing is created.
 *
 * The management paths are not in the spec (the simulator's are `/webhooks` and `/webhook-groups`): they come from the
 * configuration. Costs: two list calls (20 credits) to find what exists, then 1 credit per create, update or delete.
 * The secret goes to the service (it must: the service sends it back with every delivery) and nowhere else.
 */

import { MAX_PER_PAGE } from '../../../connectors/service.js';
import type { WebhookObject } from '../../../connectors/types.js';
import type { ApiClient } from '../../api/index.js';
import { secretHashHex } from './secret.js';

export interface WebhookSetup {
  /** The public URL deliveries go to (the reverse proxy in front of `evsync serve`). */
  url: string;
  secret: string;
  secretHeader: string;
  /** Name of the webhook group (unique per account). */
  groupName: string;
  objects: readonly WebhookObject[];
  paths: { webhooks: string; groups: string };
  /**
   * Body format. Default `json`, whose records the applier writes as they are; `post` bodies lose types, nulls and
   * empty lists, so their records are re-read by id (10 credits per scope and 100 ids).
   */
  format?: 'json' | 'post';
}

interface GroupRecord {
  id: number;
  name: string;
  headers: unknown;
}

interface HookRecord {
  id: number;
  name?: string;
  url?: string;
  trigger_object?: string;
  group_id?: number | null;
  content_type?: string;
  all_fields?: boolean;
  enabled?: boolean;
  any_event?: boolean;
  trigger_on_insert?: boolean;
  trigger_on_update?: boolean;
  trigger_on_delete?: boolean;
  public_user?: boolean;
  admin_user?: boolean;
  api_call?: boolean;
}

const HOOK_FIELDS = [
  'id',
  'name',
  'url',
  'trigger_object',
  'group_id',
  'content_type',
  'all_fields',
  'enabled',
  'any_event',
  'trigger_on_insert',
  'trigger_on_update',
  'trigger_on_delete',
  'public_user',
  'admin_user',
  'api_call',
];

/** What each webhook must be for capture to see every change of its object. */
function wanted(setup: WebhookSetup, object: WebhookObject, groupId: number): Required<Omit<HookRecord, 'id'>> {
  return {
    name: `evsync ${object}`,
    url: setup.url,
    trigger_object: object,
    group_id: groupId,
    content_type: setup.format ?? 'json',
    all_fields: true,
    enabled: true,
    any_event: true,
    trigger_on_insert: true,
    trigger_on_update: true,
    trigger_on_delete: true,
    public_user: true,
    admin_user: true,
    api_call: true,
  };
}

function headersOf(value: unknown): { key: string; value: string }[] {
  const list = typeof value === 'string' ? safeJson(value) : value;
  if (!Array.isArray(list)) return [];
  return list.flatMap((h) =>
    h && typeof h === 'object' && typeof (h as { key?: unknown }).key === 'string'
      ? [{ key: String((h as { key: string }).key), value: String((h as { value?: unknown }).value ?? '') }]
      : [],
  );
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function boolOf(v: unknown): boolean | undefined {
  if (v === true || v === 1 || v === '1' || v === 'true') return true;
  if (v === false || v === 0 || v === '0' || v === 'false') return false;
  return undefined;
}

/** The settings of a webhook that differ from what capture needs. */
function differences(hook: HookRecord, want: Required<Omit<HookRecord, 'id'>>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(want)) {
    const have = (hook as unknown as Record<string, unknown>)[k];
    const same = typeof v === 'boolean' ? boolOf(have) === v : String(have ?? '') === String(v);
    if (!same && k !== 'name') out.push(k);
  }
  return out;
}

async function findGroup(client: ApiClient, setup: WebhookSetup): Promise<GroupRecord | null> {
  const page = await client.list<GroupRecord>(setup.paths.groups, {
    fields: ['id', 'name', 'headers'],
    search: [`name=${setup.groupName}`],
    perPage: 200,
  });
  return page.items.find((g) => String(g.name).toLowerCase() === setup.groupName.toLowerCase()) ?? null;
}

async function hooksOf(client: ApiClient, setup: WebhookSetup, groupId: number): Promise<HookRecord[]> {
  const page = await client.list<HookRecord>(setup.paths.webhooks, {
    fields: HOOK_FIELDS,
    search: [`group_id=${groupId}`],
    perPage: MAX_PER_PAGE,
  });
  return page.items.filter((h) => Number(h.group_id) === groupId);
}

function secretHeaderMatches(group: GroupRecord, setup: WebhookSetup): boolean {
  const h = headersOf(group.headers).find((x) => x.key.toLowerCase() === setup.secretHeader.toLowerCase());
  return h !== undefined && secretHashHex(h.value) === secretHashHex(setup.secret);
}

export interface InstallReport {
  group: { id: number; action: 'created' | 'updated' | 'unchanged' };
  hooks: { object: string; id: number; action: 'created' | 'updated' | 'unchanged' }[];
  /** Webhooks of the group for objects no selected stream needs (left as they are). */
  others: { object: string; id: number }[];
}

export async function installWebhooks(client: ApiClient, setup: WebhookSetup): Promise<InstallReport> {
  const header = { key: setup.secretHeader, value: setup.secret };
  let group = await findGroup(client, setup);
  let groupAction: InstallReport['group']['action'] = 'unchanged';
  if (!group) {
    const res = await client.send<GroupRecord>(
      'POST',
      setup.paths.groups,
      { name: setup.groupName, headers: [header], notification_emails: [] },
      { encoding: 'json' },
    );
    if (!res.body || typeof res.body.id !== 'number')
      throw new Error(`${setup.paths.groups}: no group id in the answer`);
    group = res.body;
    groupAction = 'created';
  } else if (!secretHeaderMatches(group, setup)) {
    const others = headersOf(group.headers).filter((h) => h.key.toLowerCase() !== setup.secretHeader.toLowerCase());
    await client.send(
      'PUT',
      `${setup.paths.groups}/${group.id}`,
      { headers: [...others, header] },
      { encoding: 'json' },
    );
    groupAction = 'updated';
  }
  const existing = await hooksOf(client, setup, group.id);
  const hooks: InstallReport['hooks'] = [];
  for (const object of setup.objects) {
    const want = wanted(setup, object, group.id);
    const hook = existing.find((h) => h.trigger_object === object);
    if (!hook) {
      const res = await client.send<HookRecord>('POST', setup.paths.webhooks, want, { encoding: 'json' });
      hooks.push({ object, id: Number(res.body?.id ?? 0), action: 'created' });
    } else if (differences(hook, want).length > 0) {
      await client.send('PUT', `${setup.paths.webhooks}/${hook.id}`, want, { encoding: 'json' });
      hooks.push({ object, id: hook.id, action: 'updated' });
    } else hooks.push({ object, id: hook.id, action: 'unchanged' });
  }
  const others = existing
    .filter((h) => !setup.objects.includes(h.trigger_object as WebhookObject))
    .map((h) => ({ object: String(h.trigger_object), id: h.id }));
  return { group: { id: group.id, action: groupAction }, hooks, others };
}

export interface WebhookStatusReport {
  group: { id: number; name: string; secretMatches: boolean } | null;
  hooks: { object: string; id: number | null; ok: boolean; problems: string[] }[];
}

export async function webhookStatus(client: ApiClient, setup: WebhookSetup): Promise<WebhookStatusReport> {
  const group = await findGroup(client, setup);
  if (!group) {
    return {
      group: null,
      hooks: setup.objects.map((object) => ({ object, id: null, ok: false, problems: ['no webhook group'] })),
    };
  }
  const existing = await hooksOf(client, setup, group.id);
  return {
    group: { id: group.id, name: group.name, secretMatches: secretHeaderMatches(group, setup) },
    hooks: setup.objects.map((object) => {
      const hook = existing.find((h) => h.trigger_object === object);
      if (!hook) return { object, id: null, ok: false, problems: ['missing'] };
      const problems = differences(hook, wanted(setup, object, group.id)).map((k) => `${k} differs`);
      return { object, id: hook.id, ok: problems.length === 0, problems };
    }),
  };
}

export async function removeWebhooks(
  client: ApiClient,
  setup: WebhookSetup,
): Promise<{ group: number | null; hooks: number[] }> {
  const group = await findGroup(client, setup);
  if (!group) return { group: null, hooks: [] };
  const hooks = await hooksOf(client, setup, group.id);
  for (const h of hooks) await client.send('DELETE', `${setup.paths.webhooks}/${h.id}`);
  await client.send('DELETE', `${setup.paths.groups}/${group.id}`);
  return { group: group.id, hooks: hooks.map((h) => h.id) };
}
