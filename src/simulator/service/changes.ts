import type { Rec } from '../core/record.js';
import type { Partition } from '../store/partition.js';
import type { ChangeAction, Initiator } from '../webhooks/types.js';

/**
 * Where every write to the data is reported: background and requested mutations, the spec's operations and the
 * webhook management API. The webhook service journals each one and delivers those that match a webhook.
 */
export interface ChangeInput {
  stream: string;
  action: ChangeAction;
  /** The partition the record lives (or lived) in: its account, and its event for event-scoped streams. */
  part: Partition;
  /** The record after the change; for a delete, its last state. */
  rec: Rec;
  initiatedBy: Initiator;
}

export interface ChangeSink {
  record(change: ChangeInput): void;
}

export const NO_CHANGES: ChangeSink = { record: () => undefined };
