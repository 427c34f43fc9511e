/**
 * The simulator's webhooks folder: webhook records, matching changes to them, and delivering (retries, faults,
 * signatures) as the spec describes; this file reads a webhook record into what matching and delivery need.
 */
import type { Json, Rec } from '../core/record.js';
import type { World } from '../data/world.js';
import type { Partition } from '../store/partition.js';
import type { ChangeAction, Initiator, TriggerObject } from './types.js';

/**
 * A webhook record read once into the facts matching and delivery need. Records are the source of truth (the
 * management API, seeded data and background mutations all write them); this index is rebuilt whenever the webhooks
 * or groups partition of an account changes, so matching a change is a map lookup plus a short scan.
 */

export interface Header {
  key: string;
  value: string;
}

export interface WebhookConfig {
  id: number;
  url: string;
  format: 'json' | 'post';
  object: string;
  on: Record<ChangeAction, boolean>;
  initiators: Record<Initiator, boolean>;
  /** Null: any event. */
  eventIds: Set<number> | null;
  /** Null: the whole record; otherwise the fields to send (id and event_id always go). */
  fields: string[] | null;
  groupId: number | null;
  /** Group headers first, then the webhook's own (a webhook's header replaces a group header of the same name). */
  headers: Header[];
}

export interface GroupInfo {
  id: number;
  name: string;
  emails: string[];
  headers: Header[];
}

export function headerList(value: Json | undefined): Header[] {
  if (!Array.isArray(value)) return [];
  const out: Header[] = [];
  for (const h of value) {
    if (h && typeof h === 'object' && !Array.isArray(h) && typeof h.key === 'string') {
      out.push({ key: h.key, value: typeof h.value === 'string' ? h.value : String(h.value ?? '') });
    }
  }
  return out;
}

function mergeHeaders(group: Header[], own: Header[]): Header[] {
  const ownNames = new Set(own.map((h) => h.key.toLowerCase()));
  return [...group.filter((h) => !ownNames.has(h.key.toLowerCase())), ...own];
}

export function groupInfo(rec: Rec): GroupInfo {
  const emails = Array.isArray(rec.notification_emails) ? rec.notification_emails.map(String) : [];
  return { id: rec.id as number, name: String(rec.name ?? ''), emails, headers: headerList(rec.headers) };
}

function configOf(rec: Rec, groups: Map<number, GroupInfo>): WebhookConfig {
  const groupId = typeof rec.group_id === 'number' ? rec.group_id : null;
  const group = groupId === null ? undefined : groups.get(groupId);
  const eventIds = Array.isArray(rec.event_ids) ? rec.event_ids.filter((e): e is number => typeof e === 'number') : [];
  const fields = Array.isArray(rec.fields) ? rec.fields.map(String) : [];
  return {
    id: rec.id as number,
    url: String(rec.url ?? ''),
    format: rec.content_type === 'post' ? 'post' : 'json',
    object: String(rec.trigger_object ?? ''),
    on: {
      insert: rec.trigger_on_insert === true,
      update: rec.trigger_on_update === true,
      delete: rec.trigger_on_delete === true,
    },
    // Seeded records written before these fields existed count as "every initiator".
    initiators: {
      public_user: rec.public_user !== false,
      admin_user: rec.admin_user !== false,
      api_call: rec.api_call !== false,
    },
    eventIds: rec.any_event === false ? new Set(eventIds) : null,
    fields: rec.all_fields === false ? fields : null,
    groupId: group ? groupId : null,
    headers: mergeHeaders(group?.headers ?? [], headerList(rec.headers)),
  };
}

interface AccountIndex {
  hooksVersion: number;
  groupsVersion: number;
  byObject: Map<string, WebhookConfig[]>;
  groups: Map<number, GroupInfo>;
}

/** Enabled webhooks per account and trigger object. */
export class WebhookIndex {
  private readonly cache = new Map<number, AccountIndex>();

  constructor(private readonly world: World) {}

  private build(hooks: Partition | undefined, groupsPart: Partition | undefined): AccountIndex {
    const groups = new Map<number, GroupInfo>();
    if (groupsPart)
      for (const pos of groupsPart.positions()) {
        const g = groupInfo(groupsPart.record(pos));
        groups.set(g.id, g);
      }
    const byObject = new Map<string, WebhookConfig[]>();
    if (hooks)
      for (const pos of hooks.positions()) {
        const rec = hooks.record(pos);
        if (rec.enabled !== true) continue;
        const config = configOf(rec, groups);
        const list = byObject.get(config.object) ?? [];
        list.push(config);
        byObject.set(config.object, list);
      }
    return {
      hooksVersion: hooks?.version ?? -1,
      groupsVersion: groupsPart?.version ?? -1,
      byObject,
      groups,
    };
  }

  private account(account: number): AccountIndex {
    const hooks = this.world.table('webhooks').scope(account);
    const groups = this.world.table('webhook_groups').scope(account);
    let index = this.cache.get(account);
    if (!index || index.hooksVersion !== (hooks?.version ?? -1) || index.groupsVersion !== (groups?.version ?? -1)) {
      index = this.build(hooks, groups);
      this.cache.set(account, index);
    }
    return index;
  }

  /** Enabled webhooks that a change of this kind fires, in id order. */
  matching(
    account: number,
    object: TriggerObject,
    action: ChangeAction,
    initiator: Initiator,
    eventId: number | null,
  ): WebhookConfig[] {
    const candidates = this.account(account).byObject.get(object);
    if (!candidates) return [];
    return candidates.filter(
      (w) =>
        w.on[action] &&
        w.initiators[initiator] &&
        // Account-level records (contacts) belong to no event: only "any event" webhooks see them.
        (w.eventIds === null || (eventId !== null && w.eventIds.has(eventId))),
    );
  }

  group(account: number, groupId: number): GroupInfo | undefined {
    return this.account(account).groups.get(groupId);
  }
}
