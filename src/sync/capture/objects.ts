/**
 * Which catalogue stream carries each webhook trigger object: read from the definitions (`webhook: { object }`),
 * never coded here, so a stream gains change capture by declaring its object in `connectors/`.
 */
import { catalogue } from '../../../connectors/index.js';
import type { StreamDefinition, WebhookObject } from '../../../connectors/types.js';

const byObject = new Map<string, StreamDefinition>();
for (const def of catalogue) {
  const object = def.webhook?.object;
  if (!object) continue;
  const other = byObject.get(object);
  if (other) throw new Error(`webhook object ${object} is declared by both ${other.name} and ${def.name}`);
  byObject.set(object, def);
}

/** The stream whose changes a trigger object reports, or null for an object no stream declares. */
export function streamOfObject(object: string): StreamDefinition | null {
  return byObject.get(object) ?? null;
}

/** Whether the stream's changes arrive by webhook. */
export function isCaptured(def: StreamDefinition): def is StreamDefinition & { webhook: { object: WebhookObject } } {
  return def.webhook !== undefined;
}

/** Every trigger object with its stream, in catalogue order. */
export function capturedObjects(): { object: WebhookObject; stream: StreamDefinition }[] {
  return catalogue.filter(isCaptured).map((stream) => ({ object: stream.webhook.object, stream }));
}
