/**
 * The embedded service simulator: a seeded, local implementation of the event-management API (spec and facts
 * page), used by the demo, the tests and the benchmarks. It stands apart from the client code on purpose.
 */

export { REGISTRATION_STATUSES } from './data/gen-registrants.js';
export { EVENT_STATUSES } from './data/sizes.js';
export { parseFaults, parseRateLimit } from './options.js';
export { encodeCredentials } from './service/auth.js';
export { startSimulator } from './simulator.js';
export type * from './types.js';
export type {
  AttemptOutcome,
  ChangeAction,
  DeliveryStatus,
  Initiator,
  SimulatorWebhooks,
  TriggerObject,
  WebhookAttempt,
  WebhookChange,
  WebhookDelivery,
  WebhookDeliveryOptions,
  WebhookNotification,
  WebhookStats,
} from './webhooks/types.js';
export { INITIATORS, TRIGGER_OBJECTS } from './webhooks/types.js';
