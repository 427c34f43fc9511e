import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, ERROR_403, ERROR_404, search, startClient } from './helpers.js';

type Row = Record<string, unknown>;
let c: Client;
let events: Row[];
let ata: number;
let plain: number;
beforeAll(async () => {
  c = await startClient();
  events = (await c.get('/events?fields=id,status,apply_to_attend')).json.items;
  ata = events.find((e) => e.apply_to_attend)!.id as number;
  plain = events.find((e) => !e.apply_to_attend && e.status !== 'draft')!.id as number;
});
afterAll(() => c.close());

describe('single records', () => {
  it('GET one of each main resource with every base field', async () => {
    for (const [list, single] of [
      [`/registrants?event_id=${ata}`, '/registrants'],
      [`/sessions?event_id=${ata}`, '/sessions'],
      [`/speakers?event_id=${ata}`, '/speakers'],
      [`/sponsors?event_id=${ata}`, '/sponsors'],
      ['/contacts', '/contacts'],
      ['/events', '/events'],
      ['/webhook-groups', '/webhook-groups'],
    ] as const) {
      const id = (await c.get(`${list}${list.includes('?') ? '&' : '?'}fields=id`)).json.items[0].id;
      const res = await c.get(`${single}/${id}`);
      expect(res.status, single).toBe(200);
      expect(res.json.id).toBe(id);
      expect(res.json.updated_at, single).toBeDefined();
    }
  });

  it('has the single-record quirks: reg_type_id as a choice, webhook groups with event ids and webhooks', async () => {
    const id = (await c.get(`/registrants?event_id=${ata}&fields=id`)).json.items[0].id;
    const one = (await c.get(`/registrants/${id}`)).json;
    expect(Object.keys(one.reg_type_id)).toEqual(['id', 'value']);
    const listed = (await c.get(`/registrants?event_id=${ata}&fields=reg_type_id&ids=${id}`)).json.items[0];
    expect(typeof listed.reg_type_id).toBe('number');
    const group = (await c.get('/webhook-groups?fields=id')).json.items[0].id;
    const g = (await c.get(`/webhook-groups/${group}`)).json;
    expect(Array.isArray(g.event_ids)).toBe(true);
    expect(Array.isArray(g.webhooks)).toBe(true);
    const sparse = (await c.get(`/webhook-groups/${group}?fields=id,name`)).json;
    expect(Object.keys(sparse)).toEqual(['id', 'name', 'event_ids', 'webhooks']);
  });

  it('answers package and session fees', async () => {
    const pkg = (await c.get(`/packages?event_id=${ata}&fields=id,price`)).json.items[1];
    const fee = await c.get(`/packages/${pkg.id}/fee`);
    expect(fee.status).toBe(200);
    expect(fee.json).toMatchObject({ package_id: pkg.id, amount: pkg.price });
    const session = (await c.get(`/sessions?event_id=${ata}&fields=id`)).json.items[0].id;
    expect((await c.get(`/sessions/${session}/fee`)).json.session_id).toBe(session);
    expect((await c.get('/packages/999999/fee')).json).toEqual(ERROR_404);
  });
});

describe('speaker assignment', () => {
  it('links a speaker and a session of the same event', async () => {
    const speaker = (await c.get(`/speakers?event_id=${ata}&fields=id`)).json.items[0].id;
    const sessions = (await c.get(`/sessions?event_id=${ata}&fields=id&per-page=100`)).json.items;
    const linked = (await c.get(`/speakers?event_id=${ata}&fields=id&expand=sessions&ids=${speaker}`)).json.items[0]
      .sessions as Row[];
    const free = sessions.find((s: Row) => !linked.some((l) => l.id === s.id)).id;
    const res = await c.call('POST', `/speakers/${speaker}/session/${free}`);
    expect(res.status).toBe(201);
    expect(res.json.created_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(res.json.updated_at).toBe(res.json.created_at);
    const after = (await c.get(`/speakers?event_id=${ata}&fields=id&expand=sessions&ids=${speaker}`)).json.items[0];
    expect(after.sessions.map((s: Row) => s.id)).toContain(free);
    const session = (await c.get(`/sessions?event_id=${ata}&fields=id&expand=speakers&ids=${free}`)).json.items[0];
    expect(session.speakers.map((s: Row) => s.id)).toContain(speaker);
    expect((await c.call('POST', `/speakers/${speaker}/session/${free}`)).status).toBe(200);
  });

  it('422 across events, 403 across accounts, 404 for unknown ids', async () => {
    const speaker = (await c.get(`/speakers?event_id=${ata}&fields=id`)).json.items[0].id;
    const elsewhere = (await c.get(`/sessions?event_id=${plain}&fields=id`)).json.items[0].id;
    const res = await c.call('POST', `/speakers/${speaker}/session/${elsewhere}`);
    expect(res.status).toBe(422);
    expect(Array.isArray(res.json)).toBe(true);
    expect(Object.keys(res.json[0])).toEqual(['field', 'message']);
    const foreignEvent = (await c.get('/events?fields=id', { account: 1 })).json.items[0].id;
    const foreign = (await c.get(`/sessions?event_id=${foreignEvent}&fields=id`, { account: 1 })).json.items[0].id;
    expect((await c.call('POST', `/speakers/${speaker}/session/${foreign}`)).json).toEqual(ERROR_403);
    expect((await c.call('POST', `/speakers/${speaker}/session/999999`)).json).toEqual(ERROR_404);
  });
});

describe('deletes', () => {
  it('DELETE /sponsors/field/{id} removes the definition and its values from every sponsor', async () => {
    const fields = (await c.get('/sponsors/fields?fields=id')).json.items;
    const key = `c_${fields[0].id}`;
    const before = (await c.get(`/sponsors?event_id=${ata}&fields=id,${key}`)).json.items[0];
    expect(key in before).toBe(true);
    const res = await c.call('DELETE', `/sponsors/field/${fields[0].id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await c.get('/sponsors/fields?fields=id')).json.items).toHaveLength(fields.length - 1);
    const after = (await c.get(`/sponsors?event_id=${ata}&fields=id,${key}`)).json.items[0];
    expect(Object.keys(after)).toEqual(['id']);
    expect(c.sim.truth('sponsors').records.every((s) => !(key in s))).toBe(true);
    expect((await c.call('DELETE', `/sponsors/field/${fields[0].id}`)).status).toBe(404);
  });

  it('DELETE /sessions/field/{id} does the same for sessions', async () => {
    const fields = (await c.get('/sessions/fields?fields=id')).json.items;
    expect((await c.call('DELETE', `/sessions/field/${fields[0].id}`)).status).toBe(204);
    expect(c.sim.truth('sessions').records.every((s) => !(`c_${fields[0].id}` in s))).toBe(true);
    const foreign = (await c.get('/sessions/fields?fields=id', { account: 1 })).json.items[0].id;
    expect((await c.call('DELETE', `/sessions/field/${foreign}`)).json).toEqual(ERROR_403);
  });

  it('DELETE /image/{type}/{id}/{field} clears the image field', async () => {
    const rows = (await c.get(`/registrants?event_id=${ata}&fields=id,profile_picture&per-page=100`)).json.items;
    const withPicture = rows.find((r: Row) => r.profile_picture !== '');
    expect((await c.call('DELETE', `/image/1/${withPicture.id}/1`)).status).toBe(204);
    const after = (await c.get(`/registrants?event_id=${ata}&fields=profile_picture&ids=${withPicture.id}`)).json;
    expect(after.items[0].profile_picture).toBe('');
    expect((await c.call('DELETE', `/image/1/${withPicture.id}/1`)).status).toBe(404);
    expect((await c.call('DELETE', `/image/9/${withPicture.id}/1`)).status).toBe(404);
  });
});

describe('check-in and apply to attend', () => {
  it('checks a registrant in, 422 for bad input', async () => {
    const id = (await c.get(`/registrants?event_id=${plain}&fields=id`)).json.items[1].id;
    const res = await c.call('POST', '/registrants/checkin', { form: { id: String(id), status: 'attended' } });
    expect(res.status).toBe(200);
    expect(res.json.registration_status).toBe('attended');
    expect(res.json.checked_in_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    const bad = await c.call('POST', '/registrants/checkin', { form: { id: String(id), status: 'partying' } });
    expect(bad.status).toBe(422);
    expect(bad.json).toEqual([{ field: 'status', message: expect.any(String) }]);
    const blank = await c.call('POST', '/registrants/checkin', { form: { status: 'attended' } });
    expect(blank.json[0].field).toBe('id');
  });

  it('approves and denies pending registrants of an Apply-to-Attend event only', async () => {
    const pending = (
      await c.get(`/registrants?event_id=${ata}&fields=id&per-page=100&${search('registration_status=pending')}`)
    ).json.items;
    expect(pending.length).toBeGreaterThanOrEqual(2);
    const approved = await c.call('POST', `/registrants/${pending[0].id}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.json.registration_status).toBe('approved');
    const denied = await c.call('POST', `/registrants/${pending[1].id}/deny`);
    expect(denied.json.registration_status).toBe('denied');
    // Not pending any more: 400.
    const again = await c.call('POST', `/registrants/${pending[0].id}/deny`);
    expect(again.status).toBe(400);
    expect(again.json).toMatchObject({ name: 'Bad Request', code: 0, status: 400 });
    // An event without Apply to Attend: 400 whatever the state.
    const other = (await c.get(`/registrants?event_id=${plain}&fields=id`)).json.items[0].id;
    expect((await c.call('POST', `/registrants/${other}/approve`)).status).toBe(400);
  });
});
