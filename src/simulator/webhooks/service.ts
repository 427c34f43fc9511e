import type { SimClock } from '../core/time.js';
import type { World } from '../data/world.js';
import { STREAM_BY_NAME } from '../schema/streams.js';
import type { ChangeInput, ChangeSink } from '../service/changes.js';
import type { FaultSpec } from '../types.js';
import { type WebhookConfig, WebhookIndex } from './config.js';
import { Dispatcher, type Job } from './dispatcher.js';
import { DeliveryFaultDecider } from './faults.js';
import { HostPolicy } from './hosts.js';
import { Journal } from './journal.js';
import { CONTENT_TYPES, encodePayload, payloadRecord, selectFields } from './payload.js';
import { Sender } from './sender.js';
import type {
  DeliveryStatus,
  SimulatorWebhooks,
  TriggerObject,
  WebhookChange,
  WebhookDelivery,
  WebhookDeliveryOptions,
  WebhookNotification,
  WebhookStats,
} from './types.js';

/**
 * Webhooks: the service "sends outbound HTTP callbacks when resources are created, updated or deleted" (spec,
 * Events). Every change the simulator makes is journaled here, and delivered to each enabled webhook of the account
 * whose trigger object, occasion (`trigger_on_insert|update|delete`), initiator (`public_user`, `admin_user`,
 * `api_call`) and event filter (`any_event`, else `event_ids`) match.
 *
 * What the public material shows is followed: the body `{"action", "object", "datetime", "<object>": {...},
 * "initiated_by"}`, the record under a key named after the object, flattened addresses and `reg_type_id` as
 * `{id, value}` (payload.ts), formats `json` and `post`, the group's and the webhook's headers, no signature.
 * What it does not show is our choice:
 * - Actions are `insert`, `update` and `delete` (only `insert` is captured).
 * - A delete carries the record's last state (so at least `id` and `event_id`; session attendance and line item
 *   records, which have no `event_id` field, get one in payloads).
 * - `post` bodies are form-encoded like PHP's http_build_query (form.ts).
 * - `initiated_by` is `api_call` for changes made through the API (the operations and the management API);
 *   background and requested mutations are `public_user` for new registrants and `admin_user` otherwise, unless the
 *   caller of `mutate` names an initiator.
 * - Contacts belong to no event: only webhooks with `any_event` see them. The event of a record is its partition's
 *   event (an event's own id for `event`).
 * - Headers: the group's, then the webhook's (same name: the webhook's wins), plus `Content-Type` and
 *   `User-Agent: evsync-simulator`; a custom `Content-Type`, `Content-Length` or `Host` is not sent.
 * - `all_fields` off sends `id`, `event_id` and the names in `fields` (payload names, e.g. `homeAddress_city`).
 *   `post_field_data`, `use_default_fields`, `custom_fields` and `notes` are stored and served, and change nothing.
 * - Retries: 5 tries, waits of 2 s, 4 s, 8 s, 16 s (base and count configurable); a try fails on a non-2xx, a
 *   connection error, or 10 s without connecting, without answer headers, or with a stalled body. After the last
 *   try the group's `notification_emails` are "notified" (a journal entry; nothing is mailed). A webhook without a
 *   group, or a group without addresses, notifies nobody. A delivery already made keeps going if its webhook is
 *   changed or deleted meanwhile.
 * - Ordering: one try in flight per webhook, so deliveries arrive in change order unless a retry or an injected
 *   fault reorders them (dispatcher.ts).
 * - Only loopback receivers are called unless more hosts are allowed (hosts.ts); other deliveries are `blocked`.
 * - Seeded webhooks point at hooks.example.com: by default nothing leaves the machine.
 */

const OBJECT_OF: Record<string, TriggerObject> = {
  events: 'event',
  contacts: 'contact',
  registrants: 'registrant',
  speakers: 'speaker',
  sponsors: 'sponsor',
  sessions: 'session',
  session_attendance: 'session_attendance',
  registrant_line_items: 'registrant_line_item',
};

export const DEFAULTS: Required<WebhookDeliveryOptions> = {
  retryBaseMs: 2000,
  attempts: 5,
  timeoutMs: 10_000,
  concurrency: 32,
  queueLimit: 10_000,
  journalLimit: 100_000,
};

const RESERVED_HEADERS = new Set(['content-type', 'content-length', 'host', 'transfer-encoding', 'connection']);

export class WebhookService implements ChangeSink, SimulatorWebhooks {
  private readonly index: WebhookIndex;
  private readonly changeLog: Journal<WebhookChange>;
  private readonly deliveryLog: Journal<WebhookDelivery>;
  private readonly notificationLog: Journal<WebhookNotification>;
  private readonly faults: DeliveryFaultDecider;
  private changeSeq = 0;
  private deliveryId = 0;
  private notificationSeq = 0;
  /** Changes journaled but not yet matched to webhooks. */
  private backlog: { change: WebhookChange; input: ChangeInput }[] = [];
  private readonly hosts: HostPolicy;
  private readonly dispatcher: Dispatcher;

  constructor(
    private readonly world: World,
    private readonly clock: SimClock,
    faults: () => FaultSpec,
    allowedHosts: readonly string[] = [],
    options: WebhookDeliveryOptions = {},
  ) {
    const o = { ...DEFAULTS, ...options };
    const journalLimit = o.journalLimit;
    this.hosts = new HostPolicy(allowedHosts);
    this.dispatcher = new Dispatcher(o, new Sender(o.timeoutMs, o.concurrency), clock, (e) => this.notifyFailure(e));
    this.index = new WebhookIndex(world);
    this.changeLog = new Journal(journalLimit, (c) => c.seq);
    this.deliveryLog = new Journal(journalLimit, (d) => d.id);
    this.notificationLog = new Journal(journalLimit, (n) => n.seq);
    this.faults = new DeliveryFaultDecider(world.seed, faults);
  }

  /**
   * Journals a change at once (its time and place in the sequence are the change's), and leaves the matching,
   * payload building and queueing to a later turn of the event loop: an API answer never waits for them, however
   * many webhooks there are. Records are immutable snapshots (an update writes a new object), so the later turn
   * sees the record as the change left it.
   */
  record(c: ChangeInput): void {
    const nowMs = this.clock.nowMs();
    const spec = c.part.spec;
    const id = spec.hasId ? (c.rec.id as number) : null;
    const object = OBJECT_OF[c.stream] ?? null;
    const change: WebhookChange = {
      seq: ++this.changeSeq,
      at: new Date(nowMs).toISOString(),
      datetime: this.world.ts(nowMs / 1000),
      account: c.part.account,
      stream: c.stream,
      object,
      action: c.action,
      id,
      eventId: c.stream === 'events' ? id : spec.scope === 'event' ? c.part.scopeId : null,
      initiatedBy: c.initiatedBy,
      deliveries: [],
    };
    this.changeLog.push(change);
    if (object === null || id === null) return;
    this.backlog.push({ change, input: c });
    this.dispatcher.reserve();
    if (this.backlog.length === 1) setImmediate(() => this.drain());
  }

  private drain(): void {
    const backlog = this.backlog;
    this.backlog = [];
    for (const { change, input } of backlog) {
      this.deliver(change, input);
      this.dispatcher.unreserve();
    }
  }

  private deliver(change: WebhookChange, c: ChangeInput): void {
    const object = change.object!;
    const id = change.id!;
    const hooks = this.index.matching(change.account, object, c.action, c.initiatedBy, change.eventId);
    if (hooks.length === 0) return;

    // The record and each distinct body are built once per change, whatever the number of webhooks.
    const full = payloadRecord(this.world, STREAM_BY_NAME.get(c.stream)!, c.part, c.rec);
    const bodies = new Map<string, string>();
    const bodyFor = (hook: WebhookConfig): string => {
      const key = `${hook.format}|${hook.fields?.join(',') ?? '*'}`;
      let body = bodies.get(key);
      if (body === undefined) {
        const parts = { action: c.action, object, datetime: change.datetime, initiatedBy: c.initiatedBy };
        body = encodePayload({ ...parts, record: selectFields(full, hook.fields) }, hook.format);
        bodies.set(key, body);
      }
      return body;
    };

    for (const hook of hooks) {
      const entry = this.newDelivery(change, hook, id, null);
      if (!this.hosts.allows(hook.url)) {
        entry.status = 'blocked';
        continue;
      }
      const f = this.faults.decide();
      if (f.drop) {
        entry.status = 'dropped';
        continue;
      }
      const request = { url: hook.url, headers: this.headersFor(hook), body: bodyFor(hook) };
      entry.delayMs = f.delayMs;
      const jobs: Job[] = [{ entry, request, delayMs: f.delayMs }];
      if (f.duplicate) jobs.push({ entry: this.newDelivery(change, hook, id, entry.id), request, delayMs: 0 });
      this.dispatcher.submit(hook.id, jobs, f.reorder);
    }
  }

  private headersFor(hook: WebhookConfig): Record<string, string> {
    const headers: Record<string, string> = {
      'content-type': CONTENT_TYPES[hook.format],
      'user-agent': 'evsync-simulator',
    };
    for (const h of hook.headers) if (!RESERVED_HEADERS.has(h.key.toLowerCase())) headers[h.key] = h.value;
    return headers;
  }

  private newDelivery(
    change: WebhookChange,
    hook: WebhookConfig,
    recordId: number,
    duplicateOf: number | null,
  ): WebhookDelivery {
    const entry: WebhookDelivery = {
      id: ++this.deliveryId,
      changeSeq: change.seq,
      account: change.account,
      webhookId: hook.id,
      groupId: hook.groupId,
      url: hook.url,
      format: hook.format,
      object: change.object!,
      action: change.action,
      recordId,
      status: 'queued',
      duplicateOf,
      delayMs: 0,
      reordered: false,
      attempts: [],
    };
    change.deliveries.push(entry.id);
    this.deliveryLog.push(entry);
    return entry;
  }

  /** The dispatcher's failure callback: the group's addresses are notified. */
  private notifyFailure(entry: WebhookDelivery): void {
    if (entry.groupId === null) return;
    const group = this.index.group(entry.account, entry.groupId);
    if (!group || group.emails.length === 0) return;
    const last = entry.attempts[entry.attempts.length - 1];
    this.notificationLog.push({
      seq: ++this.notificationSeq,
      at: new Date(this.clock.nowMs()).toISOString(),
      account: entry.account,
      groupId: group.id,
      groupName: group.name,
      emails: [...group.emails],
      webhookId: entry.webhookId,
      deliveryId: entry.id,
      reason: last ? (last.outcome === 'http' ? `http ${String(last.status)}` : (last.error ?? last.outcome)) : '',
    });
  }

  changes(since = 0): WebhookChange[] {
    return this.changeLog.since(since).map((c) => ({ ...c, deliveries: [...c.deliveries] }));
  }

  deliveries(since = 0): WebhookDelivery[] {
    return this.deliveryLog.since(since).map((d) => ({ ...d, attempts: d.attempts.map((a) => ({ ...a })) }));
  }

  notifications(since = 0): WebhookNotification[] {
    return this.notificationLog.since(since).map((n) => ({ ...n, emails: [...n.emails] }));
  }

  stats(): WebhookStats {
    const byStatus: Partial<Record<DeliveryStatus, number>> = {};
    for (const d of this.deliveryLog.since(0)) byStatus[d.status] = (byStatus[d.status] ?? 0) + 1;
    return {
      changes: this.changeSeq,
      deliveries: this.deliveryId,
      byStatus,
      attempts: this.dispatcher.attemptsMade,
      notifications: this.notificationSeq,
      pending: this.dispatcher.pending,
      inFlight: this.dispatcher.inFlight,
      evicted: {
        changes: this.changeLog.evicted,
        deliveries: this.deliveryLog.evicted,
        notifications: this.notificationLog.evicted,
      },
    };
  }

  idle(timeoutMs?: number): Promise<boolean> {
    return this.dispatcher.idle(timeoutMs);
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }
}
