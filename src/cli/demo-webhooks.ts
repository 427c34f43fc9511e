/**
 * `evsync demo --webhooks`: after the demo's backfill, change capture end to end on the same simulator. A receiver
 * and applier start on a free loopback port (the library form of `evsync serve`), the webhooks are installed as
 * `evsync webhooks install` does, a registrant is checked in at the service, and the demo shows its row moving in
 * the warehouse a moment later, with the credits that cost (none: the delivery carries the whole record).
 */
import { randomBytes } from 'node:crypto';
import type { ApiClient } from '../api/index.js';
import type { Simulator } from '../simulator/index.js';
import type { Warehouse } from '../warehouse/index.js';
import type { Ctx } from './context.js';
import { formatDuration } from './output/format.js';

export interface WebhookDemo {
  registrant: number;
  before: string | null;
  after: string | null;
  /** From the check-in call's answer to the row in the warehouse. */
  ms: number;
  credits: number;
  delivery: string;
}

export async function demoWebhooks(
  ctx: Ctx,
  sim: Simulator,
  warehouse: Warehouse,
  client: ApiClient,
  streams: string,
): Promise<WebhookDemo> {
  const { capturedObjects, installWebhooks, startCapture } = await import('../sync/capture/index.js');
  const { selectStreams } = await import('../../connectors/index.js');
  const captured = selectStreams(streams).filter((s) => s.webhook);
  // A secret made for this run only; it goes to the simulator's webhook group and nowhere else.
  const secret = randomBytes(24).toString('hex');
  ctx.out.addSecrets([secret]);
  ctx.err.addSecrets([secret]);
  const capture = await startCapture({
    warehouse,
    client,
    secret,
    streams: captured.map((s) => s.name),
    listen: '127.0.0.1:0',
  });
  try {
    const objects = capturedObjects()
      .filter((c) => captured.includes(c.stream))
      .map((c) => c.object);
    await installWebhooks(client, {
      url: capture.url,
      secret,
      secretHeader: 'X-Evsync-Secret',
      groupName: 'evsync',
      objects,
      paths: { webhooks: '/webhooks', groups: '/webhook-groups' },
    });
    ctx.log.info(`webhooks: receiver on ${capture.url}, ${objects.length} webhooks installed`);
    const registrant = Number(
      sim.truth('registrants').records.find((r) => r.registration_status === 'confirmed')?.id ?? 0,
    );
    const [stored] = await warehouse.capture.storedVersions('registrants', [registrant]);
    const credits = sim.counters().credits;
    // One second on: the check-in gets an updated_at of its own (record times have one-second resolution).
    sim.advanceClock(1);
    await client.send('POST', '/registrants/checkin', { id: String(registrant), status: 'attended' });
    const settleStart = performance.now();
    await sim.webhooks.idle();
    await capture.applier.idle();
    const ms = performance.now() - settleStart;
    const [after] = await warehouse.capture.storedVersions('registrants', [registrant]);
    const applied = ['payload', 'reread']
      .map((outcome) => `${capture.metrics.applied.get({ stream: 'registrants', outcome })} ${outcome}`)
      .join(', ');
    return {
      registrant,
      before: stored?.updatedAt ?? null,
      after: after?.updatedAt ?? null,
      ms,
      // The check-in itself (1 credit) is the demo's change, not the capture's.
      credits: sim.counters().credits - credits - 1,
      delivery: applied,
    };
  } finally {
    await capture.close();
  }
}

export function describeWebhookDemo(d: WebhookDemo): string {
  return (
    `registrant ${d.registrant} checked in at the service: its row's updated_at went from ${d.before} to ${d.after} ` +
    `${formatDuration(d.ms)} later, by webhook (${d.delivery}), for ${d.credits} credits\n`
  );
}
