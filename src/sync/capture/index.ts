/** Change capture from webhooks: the receiver, the applier, and both running together (library surface). */
export { Applier, type ApplierOptions } from './applier.js';
export { describeWait, type WaitState } from './credit-wait.js';
export {
  type InstallReport,
  installWebhooks,
  removeWebhooks,
  type WebhookSetup,
  type WebhookStatusReport,
  webhookStatus,
} from './install.js';
export { CaptureMetrics } from './metrics.js';
export { capturedObjects, streamOfObject } from './objects.js';
export { type ParsedDelivery, type ParseResult, parseDelivery } from './payload.js';
export {
  createReceiver,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_SECRET_HEADER,
  type Receiver,
  type ReceiverOptions,
} from './receiver.js';
export { secretHashHex } from './secret.js';
export {
  type CaptureOptions,
  DEFAULT_LISTEN,
  DEFAULT_PATH,
  parseListen,
  type RunningCapture,
  startCapture,
} from './server.js';
