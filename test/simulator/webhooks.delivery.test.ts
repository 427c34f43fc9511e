/**
 * Deliveries against a real receiving server: one webhook per trigger object and format, every change the simulator
 * makes (mutations and the API's operations), compared with the change journal and the records' truth.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INITIATORS, TRIGGER_OBJECTS, type WebhookChange } from '../../src/simulator/index.js';
import { type Client, search, startClient } from './helpers.js';
import { asForm, decodeForm, payloadOf, Receiver, sendJson } from './webhooks.receiver.js';

type Row = Record<string, unknown>;
let c: Client;
let rx: Receiver;
let events: number[];
beforeAll(async () => {
  c = await startClient({ webhookDelivery: { retryBaseMs: 5 } });
  rx = await new Receiver().start();
  events = (await c.get('/events?fields=id,status')).json.items
    .filter((e: Row) => e.status !== 'draft')
    .map((e: Row) => e.id as number);
});
afterAll(async () => {
  await c.close();
  await rx.close();
});

const STREAM_OF: Record<string, string> = {
  event: 'events',
  contact: 'contacts',
  registrant: 'registrants',
  speaker: 'speakers',
  sponsor: 'sponsors',
  session: 'sessions',
  session_attendance: 'session_attendance',
  registrant_line_item: 'registrant_line_items',
};

/** What the simulator's changes can be per object: events are only updated; streams without updated_at never are. */
const OCCASIONS: Record<string, string[]> = {
  event: ['update'],
  session_attendance: ['delete', 'insert'],
  registrant_line_item: ['delete', 'insert'],
};

async function hook(values: Record<string, unknown>): Promise<number> {
  const res = await sendJson(c, 'POST', '/webhooks', values);
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json.id;
}

/** [action, record id] of each delivery at a path, in arrival order. */
function received(path: string): [string, number][] {
  return rx.at(path).map((r) => {
    const p = payloadOf(r);
    const record = p[p.object as string] as Row;
    return [p.action as string, Number(record.id)];
  });
}

function expected(changes: WebhookChange[], keep: (ch: WebhookChange) => boolean): [string, number][] {
  return changes.filter(keep).map((ch) => [ch.action, ch.id!]);
}

describe('a webhook per trigger object and format', () => {
  let changes: WebhookChange[];

  beforeAll(async () => {
    const group = await sendJson(c, 'POST', '/webhook-groups', {
      name: 'All objects',
      headers: [
        { key: 'X-Evsync-Secret', value: 'group-secret' },
        { key: 'X-Shared', value: 'from-group' },
      ],
    });
    for (const object of TRIGGER_OBJECTS) {
      for (const format of ['json', 'post']) {
        await hook({
          name: `${object} ${format}`,
          url: rx.url(`/${format}/${object}`),
          content_type: format,
          trigger_object: object,
          group_id: group.json.id,
          headers: [
            { key: 'X-Hook', value: `${object}-${format}` },
            { key: 'X-Shared', value: 'from-hook' },
          ],
        });
      }
    }
    await hook({
      name: 'few fields',
      url: rx.url('/fields'),
      trigger_object: 'registrant',
      all_fields: false,
      fields: ['email', 'homeAddress_city'],
    });
    await hook({ name: 'elsewhere', url: 'http://10.255.0.1/in', trigger_object: 'contact' });

    const since = c.sim.webhooks.changes().at(-1)?.seq ?? 0;
    // The spec's operations: check-in, approve, deny, speaker assignment and the three DELETEs.
    const event = (await c.get('/events?fields=id,apply_to_attend')).json.items.find((e: Row) => e.apply_to_attend).id;
    const regs = `/registrants?event_id=${event}&fields=id,profile_picture&per-page=100`;
    const registrant = (await c.get(regs)).json.items[0].id;
    const ok = async (method: string, path: string, form?: Record<string, string>) => {
      const res = await c.call(method, path, form ? { form } : {});
      expect(res.status, `${method} ${path} ${res.text}`).toBeLessThan(300);
    };
    await ok('POST', '/registrants/checkin', { id: String(registrant), status: 'attended' });
    const pending = (await c.get(`${regs}&${search('registration_status=pending')}`)).json.items;
    await ok('POST', `/registrants/${pending[0].id}/approve`);
    await ok('POST', `/registrants/${pending[1].id}/deny`);
    const pictured = (await c.get(regs)).json.items.find((r: Row) => r.profile_picture !== '');
    await ok('DELETE', `/image/1/${pictured.id}/1`);
    await ok('DELETE', `/sponsors/field/${(await c.get('/sponsors/fields?fields=id')).json.items[0].id}`);
    await ok('DELETE', `/sessions/field/${(await c.get('/sessions/fields?fields=id')).json.items[0].id}`);
    const speaker = (await c.get(`/speakers?event_id=${event}&fields=id&expand=sessions`)).json.items[0];
    const sessions = (await c.get(`/sessions?event_id=${event}&fields=id&per-page=100`)).json.items;
    const free = sessions.find((s: Row) => !speaker.sessions.some((l: Row) => l.id === s.id));
    await ok('POST', `/speakers/${speaker.id}/session/${free.id}`);
    for (const stream of Object.values(STREAM_OF)) c.sim.mutate(60, { streams: [stream] });

    expect(await c.sim.webhooks.idle()).toBe(true);
    changes = c.sim.webhooks.changes(since);
  });

  it('receives each change of its object once, in order, with created, updated and deleted occasions', () => {
    for (const object of TRIGGER_OBJECTS) {
      const want = expected(changes, (ch) => ch.object === object);
      expect(new Set(want.map(([a]) => a)), object).toEqual(
        new Set(OCCASIONS[object] ?? ['delete', 'insert', 'update']),
      );
      expect(received(`/json/${object}`), object).toEqual(want);
      expect(received(`/post/${object}`), object).toEqual(want);
    }
    // The operations arrived as API calls; the field definitions are no trigger object and went nowhere.
    const api = changes.filter((ch) => ch.initiatedBy === 'api_call');
    expect(api.map((ch) => `${ch.stream} ${ch.action}`)).toEqual([
      'registrants update',
      'registrants update',
      'registrants update',
      'registrants update',
      'sponsor_fields delete',
      'session_fields delete',
      'speakers update',
    ]);
    for (const ch of api) expect(ch.deliveries.length > 0).toBe(ch.object !== null);
  });

  it('sends the group headers and its own, with the format as content type', () => {
    for (const object of TRIGGER_OBJECTS) {
      for (const format of ['json', 'post']) {
        for (const r of rx.at(`/${format}/${object}`)) {
          expect(r.headers).toMatchObject({
            'x-evsync-secret': 'group-secret',
            'x-shared': 'from-hook',
            'x-hook': `${object}-${format}`,
            'content-type': format === 'json' ? 'application/json' : 'application/x-www-form-urlencoded',
          });
        }
      }
    }
  });

  it('has the captured shape: action, object, datetime, the record under the object name, initiated_by', () => {
    const bySeq = new Map(changes.filter((ch) => ch.object).map((ch) => [ch.seq, ch]));
    for (const object of TRIGGER_OBJECTS) {
      const mine = changes.filter((ch) => ch.object === object);
      rx.at(`/json/${object}`).forEach((r, i) => {
        const p = payloadOf(r);
        const ch = bySeq.get(mine[i]!.seq)!;
        expect(Object.keys(p)).toEqual(['action', 'object', 'datetime', object, 'initiated_by']);
        expect(p).toMatchObject({ action: ch.action, object, datetime: ch.datetime, initiated_by: ch.initiatedBy });
        expect(INITIATORS).toContain(p.initiated_by);
        const record = p[object] as Row;
        expect(record.id).toBe(ch.id);
        // Every delivery names its event, deletes included (an event names itself by id).
        if (object !== 'event' && object !== 'contact') expect(record.event_id).toBe(ch.eventId);
      });
    }
  });

  it('flattens addresses and gives reg_type_id as {id, value}; the last delivery equals the record', () => {
    for (const [object, stream] of [
      ['registrant', 'registrants'],
      ['contact', 'contacts'],
    ] as const) {
      const last = new Map<number, Row>();
      for (const r of rx.at(`/json/${object}`)) {
        const p = payloadOf(r);
        const record = p[object] as Row;
        for (const key of ['homeAddress_line_1', 'workAddress_city', 'billingAddress_country_name']) {
          expect(record).toHaveProperty(key);
        }
        expect(record).not.toHaveProperty('homeAddress');
        if (object === 'registrant') expect(Object.keys(record.reg_type_id as Row)).toEqual(['id', 'value']);
        if (p.action === 'delete') last.delete(record.id as number);
        else last.set(record.id as number, record);
      }
      const truth = new Map(c.sim.truth(stream).records.map((t) => [t.id as number, t]));
      expect(last.size).toBeGreaterThan(0);
      for (const [id, record] of last) {
        const plain: Row = {};
        for (const [k, v] of Object.entries(record)) if (!/^(home|work|billing)Address_/.test(k)) plain[k] = v;
        if (object === 'registrant') plain.reg_type_id = (record.reg_type_id as Row).id;
        expect(plain, `${object} ${id}`).toEqual(truth.get(id));
      }
    }
  });

  it('form-encodes the same payload PHP-style in the post format', () => {
    for (const object of TRIGGER_OBJECTS) {
      const json = rx.at(`/json/${object}`);
      const post = rx.at(`/post/${object}`);
      expect(post.length).toBe(json.length);
      post.forEach((r, i) => {
        expect(decodeForm(r.body)).toEqual(asForm(JSON.parse(json[i]!.body)));
      });
    }
    expect(rx.at('/post/registrant')[0]!.body).toMatch(/registrant%5Bid%5D=\d+/);
  });

  it('sends only id, event_id and the named fields when all_fields is off', () => {
    const got = rx.at('/fields').map((r) => payloadOf(r).registrant as Row);
    expect(got.length).toBe(changes.filter((ch) => ch.object === 'registrant').length);
    for (const record of got) expect(Object.keys(record)).toEqual(['id', 'event_id', 'email', 'homeAddress_city']);
  });

  it('never calls a host that is not loopback or allowed', () => {
    const deliveries = c.sim.webhooks.deliveries();
    const elsewhere = deliveries.filter((d) => !d.url.startsWith('http://127.0.0.1:'));
    // The seeded webhooks (hooks.example.com) and the 10.255.0.1 one.
    expect(elsewhere.some((d) => d.url.startsWith('http://10.255.0.1/'))).toBe(true);
    expect(elsewhere.some((d) => d.url.startsWith('https://hooks.example.com/'))).toBe(true);
    for (const d of elsewhere) expect([d.status, d.attempts]).toEqual(['blocked', []]);
    for (const d of deliveries.filter((x) => x.url.startsWith('http://127.0.0.1:'))) expect(d.status).toBe('delivered');
  });
});

describe('filters', () => {
  it('by event, initiator, occasion and enabled, with contacts outside every event', async () => {
    const [e1, e2] = events as [number, number];
    const hooks = {
      event: await hook({
        name: 'e1',
        url: rx.url('/f/event'),
        trigger_object: 'registrant',
        any_event: false,
        event_ids: [e1],
      }),
      api: await hook({
        name: 'api',
        url: rx.url('/f/api'),
        trigger_object: 'registrant',
        public_user: false,
        admin_user: false,
      }),
      public: await hook({
        name: 'pub',
        url: rx.url('/f/public'),
        trigger_object: 'registrant',
        admin_user: false,
        api_call: false,
      }),
      deletes: await hook({
        name: 'del',
        url: rx.url('/f/delete'),
        trigger_object: 'contact',
        trigger_on_insert: false,
        trigger_on_update: false,
      }),
      off: await hook({ name: 'off', url: rx.url('/f/off'), trigger_object: 'registrant', enabled: false }),
      contactsOfE1: await hook({
        name: 'ce1',
        url: rx.url('/f/contact-e1'),
        trigger_object: 'contact',
        any_event: false,
        event_ids: [e1],
      }),
    };
    expect(Object.keys(hooks)).toHaveLength(6);
    const since = c.sim.webhooks.changes().at(-1)!.seq;
    c.sim.mutate(120, { streams: ['registrants'] });
    c.sim.mutate(60, { streams: ['contacts'] });
    c.sim.mutate(10, { streams: ['registrants'], initiatedBy: 'api_call' });
    for (const event of [e1, e2]) {
      const id = (await c.get(`/registrants?event_id=${event}&fields=id`)).json.items[1].id;
      await c.call('POST', '/registrants/checkin', { form: { id: String(id), status: 'no_show' } });
    }
    expect(await c.sim.webhooks.idle()).toBe(true);
    const changes = c.sim.webhooks.changes(since);
    const registrants = changes.filter((ch) => ch.object === 'registrant');

    const cases: [string, (ch: WebhookChange) => boolean][] = [
      ['/f/event', (ch) => ch.object === 'registrant' && ch.eventId === e1],
      ['/f/api', (ch) => ch.object === 'registrant' && ch.initiatedBy === 'api_call'],
      ['/f/public', (ch) => ch.object === 'registrant' && ch.initiatedBy === 'public_user'],
      ['/f/delete', (ch) => ch.object === 'contact' && ch.action === 'delete'],
    ];
    for (const [path, keep] of cases) {
      const want = expected(changes, keep);
      // Each filter keeps some changes and leaves others out.
      expect(want.length, path).toBeGreaterThan(0);
      expect(want.length, path).toBeLessThan(path === '/f/delete' ? 60 : registrants.length);
      expect(received(path), path).toEqual(want);
    }
    for (const r of rx.at('/f/event')) expect((payloadOf(r).registrant as Row).event_id).toBe(e1);
    for (const r of rx.at('/f/api')) expect(payloadOf(r).initiated_by).toBe('api_call');
    expect(rx.at('/f/off')).toEqual([]);
    expect(rx.at('/f/contact-e1')).toEqual([]);
  });
});
