/**
 * Failing receivers: retries, the last try, group notifications, and the control endpoints that show them. Retry
 * waits are 1 ms so nothing waits on the clock; every assertion is on counts and outcomes.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookDelivery } from '../../src/simulator/index.js';
import { type Client, startClient } from './helpers.js';
import { Receiver, sendJson } from './webhooks.receiver.js';

let rx: Receiver;
beforeAll(async () => {
  rx = await new Receiver().start();
});
afterAll(() => rx.close());

async function hook(c: Client, values: Record<string, unknown>): Promise<number> {
  const res = await sendJson(c, 'POST', '/webhooks', { trigger_object: 'contact', ...values });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json.id;
}

const of = (c: Client, webhookId: number): WebhookDelivery[] =>
  c.sim.webhooks.deliveries().filter((d) => d.webhookId === webhookId);

describe('retries and notifications', () => {
  let c: Client;
  let root: string;
  let group: number;
  const ids: Record<string, number> = {};
  let changed: number;

  beforeAll(async () => {
    c = await startClient({ control: true, webhookDelivery: { retryBaseMs: 1, attempts: 4 } });
    root = c.sim.baseUrl.replace(/\/v1$/, '');
    group = (
      await sendJson(c, 'POST', '/webhook-groups', {
        name: 'Alerts',
        notification_emails: ['ops@example.com', 'oncall@example.com'],
      })
    ).json.id;
    rx.behave('/r/fail', () => 500);
    rx.behave('/r/flaky', (nth) => (nth <= 2 ? 503 : 204));
    rx.behave('/r/nogroup', () => 404);
    ids.fail = await hook(c, { name: 'fail', url: rx.url('/r/fail'), group_id: group });
    ids.flaky = await hook(c, { name: 'flaky', url: rx.url('/r/flaky'), group_id: group });
    ids.nogroup = await hook(c, { name: 'nogroup', url: rx.url('/r/nogroup') });
    // Nothing listens on port 1: the connection is refused.
    ids.refused = await hook(c, { name: 'refused', url: 'http://127.0.0.1:1/in', group_id: group });
    const since = c.sim.webhooks.changes().at(-1)?.seq ?? 0;
    c.sim.mutate(3, { streams: ['contacts'] });
    changed = c.sim.webhooks.changes(since).length;
    expect(await c.sim.webhooks.idle()).toBe(true);
  });
  afterAll(() => c.close());

  it('tries a failing receiver every time, then gives up', () => {
    expect(changed).toBe(3);
    expect(rx.at('/r/fail')).toHaveLength(3 * 4);
    for (const d of of(c, ids.fail!)) {
      expect(d.status).toBe('failed');
      expect(d.attempts.map((a) => [a.n, a.outcome, a.status])).toEqual([
        [1, 'http', 500],
        [2, 'http', 500],
        [3, 'http', 500],
        [4, 'http', 500],
      ]);
    }
    for (const d of of(c, ids.refused!)) {
      expect(d.status).toBe('failed');
      expect(d.attempts.map((a) => [a.outcome, a.error])).toEqual(Array(4).fill(['error', 'ECONNREFUSED']));
    }
  });

  it('stops retrying once an answer is 2xx', () => {
    // The first two requests fail, whichever deliveries they were; each of those is tried again and succeeds.
    expect(rx.at('/r/flaky')).toHaveLength(3 + 2);
    const flaky = of(c, ids.flaky!);
    expect(flaky.map((d) => d.status)).toEqual(['delivered', 'delivered', 'delivered']);
    expect(flaky.reduce((n, d) => n + d.attempts.length, 0)).toBe(5);
  });

  it("notifies the group's addresses after the last try, and nobody for a webhook without a group", () => {
    const notes = c.sim.webhooks.notifications();
    const failedInGroup = [...of(c, ids.fail!), ...of(c, ids.refused!)];
    expect(notes.map((n) => n.deliveryId).sort((a, b) => a - b)).toEqual(
      failedInGroup.map((d) => d.id).sort((a, b) => a - b),
    );
    for (const n of notes) {
      expect(n).toMatchObject({
        groupId: group,
        groupName: 'Alerts',
        emails: ['ops@example.com', 'oncall@example.com'],
      });
      expect(n.reason).toBe(n.webhookId === ids.fail ? 'http 500' : 'ECONNREFUSED');
    }
    expect(of(c, ids.nogroup!).every((d) => d.status === 'failed')).toBe(true);
    expect(rx.at('/r/nogroup')).toHaveLength(12);
  });

  it('shows changes, deliveries, notifications, stats and idleness over /_control', async () => {
    const get = async (path: string) => {
      const res = await request(`${root}/_control/webhooks/${path}`);
      return { status: res.statusCode, json: (await res.body.json()) as unknown };
    };
    expect((await get('notifications')).json).toEqual(c.sim.webhooks.notifications());
    expect((await get('deliveries')).json).toEqual(c.sim.webhooks.deliveries());
    const last = c.sim.webhooks.changes().at(-3)!.seq;
    expect((await get(`changes?since=${last}`)).json).toEqual(c.sim.webhooks.changes(last));
    const idle = await get('idle?timeout=5000');
    expect(idle.json).toMatchObject({ idle: true, stats: { pending: 0, inFlight: 0 } });
    const stats = (await get('stats')).json as { attempts: number; byStatus: Record<string, number> };
    expect(stats.attempts).toBe(4 * 3 + 5 + 4 * 3 + 4 * 3);
    expect(stats.byStatus).toMatchObject({ failed: 9, delivered: 3 });
    // mutate over control can name the initiator.
    const res = await request(`${root}/_control/mutate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ n: 2, streams: ['contacts'], initiatedBy: 'api_call' }),
    });
    expect(res.statusCode).toBe(200);
    await res.body.text();
    expect(
      c.sim.webhooks
        .changes()
        .slice(-2)
        .map((ch) => ch.initiatedBy),
    ).toEqual(['api_call', 'api_call']);
  });
});

describe('timeouts', () => {
  it('count a receiver that never answers as failed tries', async () => {
    const c = await startClient({ webhookDelivery: { retryBaseMs: 1, attempts: 2, timeoutMs: 100 } });
    try {
      rx.behave('/t/hang', () => 'hang');
      const id = await hook(c, { name: 'hang', url: rx.url('/t/hang') });
      c.sim.mutate(2, { streams: ['contacts'] });
      expect(await c.sim.webhooks.idle()).toBe(true);
      const deliveries = of(c, id);
      expect(deliveries).toHaveLength(2);
      for (const d of deliveries) {
        expect(d.status).toBe('failed');
        expect(d.attempts.map((a) => a.outcome)).toEqual(['timeout', 'timeout']);
        // Each try is timed from sending to its end: here the 100 ms the receiver was given (loop time may round
        // a timer down by a millisecond or so, never by ten).
        for (const a of d.attempts) expect(a.ms).toBeGreaterThanOrEqual(90);
      }
      expect(rx.at('/t/hang')).toHaveLength(4);
    } finally {
      await c.close();
    }
  });
});

describe('in the background', () => {
  it('answers the API while fifty receivers hold their deliveries unanswered', async () => {
    const c = await startClient({ webhookDelivery: { concurrency: 64 } });
    try {
      const hooks: number[] = [];
      for (let i = 0; i < 50; i++) {
        rx.behave(`/bg/${i}`, () => 'hang');
        hooks.push(await hook(c, { name: `bg${i}`, url: rx.url(`/bg/${i}`), trigger_object: 'registrant' }));
      }
      const event = (await c.get('/events?fields=id')).json.items[0].id;
      const registrant = (await c.get(`/registrants?event_id=${event}&fields=id`)).json.items[0].id;
      const checkin = await c.call('POST', '/registrants/checkin', {
        form: { id: String(registrant), status: 'attended' },
      });
      expect(checkin.status).toBe(200);
      await Promise.all(hooks.map((_, i) => rx.waitFor(`/bg/${i}`, 1)));
      // Every delivery of the check-in has reached its receiver and none has an answer, yet the API answers.
      const change = c.sim.webhooks.changes().at(-1)!;
      expect(change).toMatchObject({ object: 'registrant', action: 'update', initiatedBy: 'api_call' });
      const pending = c.sim.webhooks.deliveries().filter((d) => change.deliveries.includes(d.id));
      expect(pending.filter((d) => hooks.includes(d.webhookId))).toHaveLength(50);
      for (const d of pending.filter((x) => hooks.includes(x.webhookId))) {
        expect([d.status, d.attempts]).toEqual(['sending', []]);
      }
      expect((await c.get(`/registrants/${registrant}`)).json.registration_status).toBe('attended');
      expect(await c.sim.webhooks.idle(1)).toBe(false);
      expect(c.sim.webhooks.stats().inFlight).toBe(50);
    } finally {
      await c.close();
    }
  });
});
