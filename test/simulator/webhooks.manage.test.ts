import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, ERROR_403, ERROR_404, startClient } from './helpers.js';
import { sendJson } from './webhooks.receiver.js';

type Row = Record<string, unknown>;
let c: Client;
let events: [number, number, ...number[]];
let otherEvent: number;
beforeAll(async () => {
  c = await startClient();
  events = (await c.get('/events?fields=id')).json.items.map((e: Row) => e.id);
  otherEvent = (await c.get('/events?fields=id', { account: 1 })).json.items[0].id;
});
afterAll(() => c.close());

const WEBHOOK_FIELDS = [
  'id',
  'name',
  'url',
  'content_type',
  'post_field_data',
  'use_default_fields',
  'custom_fields',
  'notes',
  'trigger_object',
  'trigger_on_insert',
  'trigger_on_update',
  'trigger_on_delete',
  'all_fields',
  'fields',
  'public_user',
  'admin_user',
  'api_call',
  'any_event',
  'event_ids',
  'group_id',
  'headers',
  'enabled',
  'created_at',
  'created_by',
  'updated_at',
  'updated_by',
];

const form = (values: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(values).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));

describe('webhook groups', () => {
  it('are created, read, renamed and validated, names unique per account', async () => {
    const made = await sendJson(c, 'POST', '/webhook-groups', {
      name: 'Warehouse feed',
      headers: [{ key: 'X-Evsync-Secret', value: 's3' }],
      notification_emails: ['ops@example.com', 'dev@example.com'],
    });
    expect(made.status).toBe(201);
    expect(made.json).toMatchObject({
      name: 'Warehouse feed',
      headers: [{ key: 'X-Evsync-Secret', value: 's3' }],
      notification_emails: ['ops@example.com', 'dev@example.com'],
      created_by: 9001,
      event_ids: [],
      webhooks: [],
    });
    expect((await c.get(`/webhook-groups/${made.json.id}`)).json).toEqual(made.json);

    const dup = await sendJson(c, 'POST', '/webhook-groups', { name: 'WAREHOUSE FEED' });
    expect(dup.status).toBe(422);
    expect(dup.json).toEqual([{ field: 'name', message: 'Name "WAREHOUSE FEED" has already been taken.' }]);
    // Another account may use the same name.
    expect((await sendJson(c, 'POST', '/webhook-groups', { name: 'Warehouse feed' }, 1)).status).toBe(201);

    const bad = await sendJson(c, 'POST', '/webhook-groups', {
      notification_emails: ['not-an-address'],
      headers: [{ key: 'Bad Header', value: 'x' }],
    });
    expect(bad.status).toBe(422);
    expect(bad.json.map((e: Row) => e.field).sort()).toEqual(['headers', 'name', 'notification_emails']);

    const renamed = await sendJson(c, 'PUT', `/webhook-groups/${made.json.id}`, { name: 'Warehouse feed 2' });
    expect(renamed.status).toBe(200);
    expect(renamed.json).toMatchObject({
      name: 'Warehouse feed 2',
      notification_emails: ['ops@example.com', 'dev@example.com'],
    });
  });
});

describe('webhooks', () => {
  it('are created from a form with every field of the real object, and read back alike', async () => {
    const group = (await sendJson(c, 'POST', '/webhook-groups', { name: 'Form group' })).json.id;
    const res = await c.call('POST', '/webhooks', {
      form: form({
        name: 'Registrants to CRM',
        url: 'http://127.0.0.1:9/in',
        content_type: 'post',
        trigger_object: 'registrant',
        trigger_on_delete: 'false',
        any_event: '0',
        event_ids: `${events[0]},${events[1]}`,
        all_fields: 'false',
        fields: ['email', 'homeAddress_city'],
        api_call: 'false',
        group_id: String(group),
        headers: [{ key: 'Authorization', value: 'Bearer t' }],
        notes: 'for the CRM',
      }),
    });
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.json)).toEqual(WEBHOOK_FIELDS);
    expect(res.json).toMatchObject({
      content_type: 'post',
      trigger_on_insert: true,
      trigger_on_update: true,
      trigger_on_delete: false,
      any_event: false,
      event_ids: [events[0], events[1]],
      all_fields: false,
      fields: ['email', 'homeAddress_city'],
      public_user: true,
      admin_user: true,
      api_call: false,
      group_id: group,
      headers: [{ key: 'Authorization', value: 'Bearer t' }],
      enabled: true,
      notes: 'for the CRM',
    });
    expect((await c.get(`/webhooks/${res.json.id}`)).json).toEqual(res.json);
    const listed = await c.get(`/webhooks?fields=*&ids=${res.json.id}`);
    expect(listed.json.items).toEqual([res.json]);
    const g = (await c.get(`/webhook-groups/${group}`)).json;
    expect(g.webhooks).toEqual([
      { id: res.json.id, name: 'Registrants to CRM', url: 'http://127.0.0.1:9/in', trigger_object: 'registrant' },
    ]);
    expect(g.event_ids).toEqual([events[0], events[1]].sort((a, b) => a - b));
  });

  it('answer 422 with every field error', async () => {
    const empty = await sendJson(c, 'POST', '/webhooks', {});
    expect(empty.status).toBe(422);
    expect(empty.json.map((e: Row) => e.field).sort()).toEqual(['name', 'trigger_object', 'url']);
    const foreignGroup = (await c.get('/webhook-groups?fields=id', { account: 1 })).json.items[0].id;
    const bad = await sendJson(c, 'POST', '/webhooks', {
      name: 'x',
      url: 'ftp://example.com/',
      trigger_object: 'invoice',
      content_type: 'xml',
      trigger_on_insert: false,
      trigger_on_update: false,
      trigger_on_delete: false,
      enabled: 'maybe',
      any_event: false,
      event_ids: [otherEvent],
      group_id: foreignGroup,
      public_user: false,
      admin_user: false,
      api_call: false,
    });
    expect(bad.status).toBe(422);
    expect(bad.json.map((e: Row) => e.field).sort()).toEqual([
      'content_type',
      'enabled',
      'event_ids',
      'group_id',
      'public_user',
      'trigger_object',
      'trigger_on_insert',
      'url',
    ]);
    expect(bad.json.find((e: Row) => e.field === 'enabled').message).toBe('Enabled must be either "true" or "false".');
    const noEvents = await sendJson(c, 'POST', '/webhooks', {
      name: 'x',
      url: 'http://127.0.0.1:9/',
      trigger_object: 'session',
      any_event: false,
    });
    expect(noEvents.json).toEqual([
      { field: 'event_ids', message: 'Event Ids cannot be blank unless Any Event is set.' },
    ]);
  });

  it('update partially, move updated_at, and are deleted; 403 across accounts, 404 once gone', async () => {
    const made = await sendJson(c, 'POST', '/webhooks', {
      name: 'Sessions',
      url: 'http://127.0.0.1:9/s',
      trigger_object: 'session',
    });
    const id = made.json.id;
    c.sim.advanceClock(120);
    const updated = await sendJson(c, 'PUT', `/webhooks/${id}`, { url: 'http://localhost:9/s2', enabled: false });
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({ name: 'Sessions', url: 'http://localhost:9/s2', enabled: false });
    expect(updated.json.updated_at > made.json.updated_at).toBe(true);
    expect((await sendJson(c, 'PUT', `/webhooks/${id}`, { trigger_object: 'nope' })).status).toBe(422);

    expect((await c.get(`/webhooks/${id}`, { account: 1 })).json).toEqual(ERROR_403);
    expect((await sendJson(c, 'PUT', `/webhooks/${id}`, { name: 'mine' }, 1)).json).toEqual(ERROR_403);
    expect((await c.call('DELETE', `/webhooks/${id}`, { account: 1 })).json).toEqual(ERROR_403);
    const del = await c.call('DELETE', `/webhooks/${id}`);
    expect(del.status).toBe(204);
    expect((await c.get(`/webhooks/${id}`)).json).toEqual(ERROR_404);
    expect((await c.call('DELETE', `/webhooks/${id}`)).json).toEqual(ERROR_404);
    expect(c.sim.truth('webhooks').deletedIds).toContain(id);
  });

  it('deleting a group detaches its webhooks', async () => {
    const group = (await sendJson(c, 'POST', '/webhook-groups', { name: 'Short-lived' })).json.id;
    const hook = (
      await sendJson(c, 'POST', '/webhooks', {
        name: 'h',
        url: 'http://127.0.0.1:9/',
        trigger_object: 'event',
        group_id: group,
      })
    ).json.id;
    expect((await c.call('DELETE', `/webhook-groups/${group}`)).status).toBe(204);
    expect((await c.get(`/webhook-groups/${group}`)).json).toEqual(ERROR_404);
    expect((await c.get(`/webhooks/${hook}`)).json.group_id).toBeNull();
  });

  it('page, count and charge like every other list', async () => {
    for (let i = 0; i < 3; i++) {
      await sendJson(c, 'POST', '/webhooks', { name: `p${i}`, url: 'http://127.0.0.1:9/', trigger_object: 'contact' });
    }
    const total = c.sim.truth('webhooks').records.length;
    c.sim.resetCounters();
    const page = await c.get('/webhooks?per-page=2&page=2&fields=id,name');
    expect(page.status).toBe(200);
    expect(page.json.items).toHaveLength(2);
    expect(page.json._meta).toEqual({ totalCount: total, pageCount: Math.ceil(total / 2), currentPage: 2, perPage: 2 });
    expect(page.headers['x-pagination-total-count']).toBe(String(total));
    expect((await c.get('/webhooks?per-page=5000')).json._meta.perPage).toBe(1000);
    await c.get('/webhook-groups');
    await sendJson(c, 'POST', '/webhooks', { name: 'charged', url: 'http://127.0.0.1:9/', trigger_object: 'contact' });
    const counters = c.sim.counters(0);
    expect(counters.byPath).toMatchObject({ 'GET /webhooks': 2, 'GET /webhook-groups': 1, 'POST /webhooks': 1 });
    // Three list calls at 10 credits, the create and its token at 1 each.
    expect(counters.credits).toBe(3 * 10 + 1 + 1);
  });

  it('are never rewired by background mutations', async () => {
    const mine = (
      await sendJson(c, 'POST', '/webhooks', { name: 'kept', url: 'http://127.0.0.1:9/', trigger_object: 'sponsor' })
    ).json;
    const summary = c.sim.mutate(200, { streams: ['webhooks', 'webhook_groups'] });
    let changed = 0;
    for (const byStream of [summary.inserted, summary.updated, summary.deleted]) {
      for (const n of Object.values(byStream)) changed += n;
    }
    expect(changed).toBe(200);
    expect(c.sim.truth('webhooks').records.find((w) => w.id === mine.id)).toEqual(mine);
  });
});
