/**
 * The daemon (`evsync serve` / `evsync schedule`) as a library: what runs for weeks beside the engine. The reconcile
 * loop and its policy (when a webhook-fed stream is polled again, the catch-up owed at start), the heartbeat, the
 * socket and its protocol, the bounded queries in worker processes, and the publisher that keeps the readers'
 * Parquet and snapshot fresh. It composes the engine (src/sync) and is composed by the command line (src/cli).
 */
export {
  type Publisher,
  type PublisherLake,
  type PublisherOptions,
  type PublishLog,
  type PublishStats,
  startPublisher,
} from './publisher.js';
export { type ReconcileOptions, ReconcilePolicy } from './reconcile-policy.js';
