/**
 * Shapes of the webhook ground truth (what `Simulator.webhooks` and `/_control/webhooks/*` answer) and of the
 * delivery options. Plain JSON values only, so the in-process handle and the control endpoints give the same thing.
 */

/** The service's trigger objects (spec, Events). */
export const TRIGGER_OBJECTS = [
  'event',
  'contact',
  'registrant',
  'speaker',
  'sponsor',
  'session',
  'session_attendance',
  'registrant_line_item',
] as const;
export type TriggerObject = (typeof TRIGGER_OBJECTS)[number];

/** Who made a change; a webhook's `public_user`, `admin_user` and `api_call` choose which of them fire it. */
export const INITIATORS = ['public_user', 'admin_user', 'api_call'] as const;
export type Initiator = (typeof INITIATORS)[number];

/** The payload's `action`: `insert` is captured from the real service; `update` and `delete` are our choice. */
export type ChangeAction = 'insert' | 'update' | 'delete';

/** One change the simulator made to its data, webhook or not. */
export interface WebhookChange {
  /** 1, 2, 3, ... in the order changes happened. */
  seq: number;
  /** Simulated clock, ISO 8601 UTC. */
  at: string;
  /** The payload's `datetime` (record text in the record zone). */
  datetime: string;
  account: number;
  stream: string;
  /** The trigger object of the stream, or null for streams that fire no webhook (transactions, definitions, ...). */
  object: TriggerObject | null;
  action: ChangeAction;
  /** Null for the audit log, whose rows have no id. */
  id: number | null;
  /** The event the record belongs to (an event's own id for `event`); null for account-level records. */
  eventId: number | null;
  initiatedBy: Initiator;
  /** Ids of the deliveries this change produced (one per matching webhook, plus injected duplicates). */
  deliveries: number[];
}

export type AttemptOutcome = 'ok' | 'http' | 'timeout' | 'error';

export interface WebhookAttempt {
  /** 1-based try number. */
  n: number;
  /** Simulated clock when the attempt started, ISO 8601 UTC. */
  at: string;
  /** Wall milliseconds from sending to the receiver's complete answer (or the timeout, or the error). */
  ms: number;
  outcome: AttemptOutcome;
  /** The receiver's HTTP status, when it answered. */
  status: number | null;
  /** Why a timeout or connection error happened. */
  error: string | null;
}

/**
 * Where a delivery stands. Final: `delivered` (a 2xx), `failed` (every try used), `dropped` (an injected silent
 * drop), `blocked` (the URL's host is not allowed), `overflow` (the queue was full), `cancelled` (the simulator
 * closed first).
 */
export type DeliveryStatus =
  | 'queued'
  | 'held'
  | 'sending'
  | 'retrying'
  | 'delivered'
  | 'failed'
  | 'dropped'
  | 'blocked'
  | 'overflow'
  | 'cancelled';

export interface WebhookDelivery {
  id: number;
  changeSeq: number;
  account: number;
  webhookId: number;
  groupId: number | null;
  url: string;
  format: 'json' | 'post';
  object: TriggerObject;
  action: ChangeAction;
  recordId: number;
  status: DeliveryStatus;
  /** Set on an injected duplicate: the delivery it copies. */
  duplicateOf: number | null;
  /** Injected delay before the first try (0: none). */
  delayMs: number;
  /** Held back and sent after the next delivery to the same webhook (an injected reordering). */
  reordered: boolean;
  attempts: WebhookAttempt[];
}

export interface WebhookNotification {
  seq: number;
  at: string;
  account: number;
  groupId: number;
  groupName: string;
  emails: string[];
  webhookId: number;
  deliveryId: number;
  /** The last attempt's outcome, e.g. `http 500` or `timeout`. */
  reason: string;
}

export interface WebhookStats {
  changes: number;
  deliveries: number;
  /** Deliveries kept in the journal, by status (only statuses that occur). */
  byStatus: Partial<Record<DeliveryStatus, number>>;
  /** Tries made in all. */
  attempts: number;
  notifications: number;
  /** Deliveries not yet final. */
  pending: number;
  inFlight: number;
  /** Journal entries evicted to keep memory bounded (oldest first). */
  evicted: { changes: number; deliveries: number; notifications: number };
}

/** The in-process view of webhook activity. */
export interface SimulatorWebhooks {
  /** Changes with seq > since (default all kept), oldest first. */
  changes(since?: number): WebhookChange[];
  /** Deliveries with id > since, oldest first. */
  deliveries(since?: number): WebhookDelivery[];
  notifications(since?: number): WebhookNotification[];
  stats(): WebhookStats;
  /**
   * Resolves true once no delivery is pending (queued, held, sending, waiting to retry or delayed), false when
   * `timeoutMs` passes first (default: wait as long as it takes).
   */
  idle(timeoutMs?: number): Promise<boolean>;
}

export interface WebhookDeliveryOptions {
  /** Delay before the 2nd try; each later wait doubles. Default 2000. */
  retryBaseMs?: number;
  /** Tries in all, the first included. Default 5. */
  attempts?: number;
  /** A try that has no complete answer after this long is a timeout. Default 10000. */
  timeoutMs?: number;
  /** Deliveries in flight at once across all webhooks (one per webhook at a time). Default 32. */
  concurrency?: number;
  /** Deliveries waiting at most; more are recorded as `overflow` and not sent. Default 10000. */
  queueLimit?: number;
  /** Entries each journal keeps (changes, deliveries, notifications); older ones are evicted. Default 100000. */
  journalLimit?: number;
}
