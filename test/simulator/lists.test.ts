import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, startClient } from './helpers.js';

let c: Client;
let eventId: number;
let ata: number;
beforeAll(async () => {
  c = await startClient();
  const events = (await c.get('/events?fields=id,apply_to_attend,status&per-page=100')).json.items;
  ata = events.find((e: { apply_to_attend: boolean }) => e.apply_to_attend).id;
  eventId = ata;
});
afterAll(() => c.close());

describe('envelope, paging and headers', () => {
  it('answers the spec envelope with _links, _meta and X-Pagination headers', async () => {
    const res = await c.get(`/registrants?event_id=${eventId}&per-page=15&page=2&fields=id`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.json)).toEqual(['items', '_links', '_meta']);
    const total = c.sim.truth('registrants').records.filter((r) => r.event_id === eventId).length;
    expect(res.json._meta).toEqual({
      totalCount: total,
      pageCount: Math.ceil(total / 15),
      currentPage: 2,
      perPage: 15,
    });
    expect(res.headers['x-pagination-current-page']).toBe('2');
    expect(res.headers['x-pagination-page-count']).toBe(String(Math.ceil(total / 15)));
    expect(res.headers['x-pagination-per-page']).toBe('15');
    expect(res.headers['x-pagination-total-count']).toBe(String(total));
    for (const link of ['self', 'first', 'last']) expect(typeof res.json._links[link].href).toBe('string');
    expect(res.json._links.self.href).toContain('page=2');
    expect(res.json._links.first.href).toContain('page=1');
    expect(res.json._links.last.href).toContain(`page=${Math.ceil(total / 15)}`);
    expect(res.json.items).toHaveLength(15);
  });

  it('walks every record exactly once over pages, empty after the last', async () => {
    const seen: number[] = [];
    for (let page = 1; ; page++) {
      const res = await c.get(`/registrants?event_id=${eventId}&per-page=7&page=${page}&fields=id`);
      if (res.json.items.length === 0) break;
      seen.push(...res.json.items.map((r: { id: number }) => r.id));
    }
    const truth = c.sim
      .truth('registrants')
      .records.filter((r) => r.event_id === eventId)
      .map((r) => r.id);
    expect(seen).toEqual(truth);
  });

  it('defaults to 20 per page and caps silently', async () => {
    expect((await c.get(`/registrants?event_id=${eventId}`)).json._meta.perPage).toBe(20);
    expect((await c.get(`/registrants?event_id=${eventId}&per-page=5000`)).json._meta.perPage).toBe(1000);
    expect((await c.get('/contacts?per-page=500')).json._meta.perPage).toBe(200);
    expect((await c.get(`/reg-types?event_id=${eventId}&per-page=500`)).json._meta.perPage).toBe(200);
    expect((await c.get(`/discounts?event_id=${eventId}&per-page=500`)).json._meta.perPage).toBe(200);
    const expanded = await c.get(`/registrants?event_id=${eventId}&per-page=1000&expand=homeAddress`);
    expect(expanded.json._meta.perPage).toBe(200);
    expect(expanded.headers['x-pagination-per-page']).toBe('200');
  });

  it('rejects bad page numbers', async () => {
    for (const q of ['page=0', 'page=abc', 'per-page=0', 'per-page=-5']) {
      const res = await c.get(`/registrants?event_id=${eventId}&${q}`);
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ name: 'Bad Request', code: 0, status: 400 });
    }
  });

  it('accepts the .json suffix', async () => {
    const res = await c.get(`/registrants.json?event_id=${eventId}&fields=id`);
    expect(res.status).toBe(200);
    expect(res.json.items.length).toBeGreaterThan(0);
  });

  it('needs event_id on event-scoped lists', async () => {
    for (const path of ['/registrants', '/sessions', '/transactions', '/discounts']) {
      const res = await c.get(path);
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ name: 'Bad Request', code: 0, status: 400 });
    }
  });

  it('serves every stream of the facts table at its path', async () => {
    // The facts page's table, restated here so the simulator's own route table is checked, not trusted.
    const account = ['/events', '/contacts', '/webhooks', '/webhook-groups', '/event-folders', '/contacts/fields'];
    account.push('/sessions/fields', '/sponsors/fields', '/events/fields', '/data-lists');
    const event = ['/invitation-lists', '/registrants', '/sessions', '/speakers', '/sponsors', '/reg-types'];
    event.push('/packages', '/discounts', '/transactions', '/registrant-line-items', '/registrant-line-item-audits');
    event.push('/registrant-groups', '/session-waitlists', '/session-attendances', '/scans/sessions', '/locations');
    event.push('/tracks', '/event-questions', '/websites', '/pages', '/badges', '/sponsor-attendances');
    event.push('/cfs-contacts', '/cfs-submissions', '/cfs-reviews');
    const lists = (await c.get('/data-lists?fields=id')).json.items;
    const paths = [
      ...account,
      ...event.map((p) => `${p}?event_id=${eventId}`),
      `/data-lists/${lists[0].id}/items`,
      `/registrations/audit/sessions?event_id=${eventId}&start_time=2000-01-01%2000:00:00`,
    ];
    expect(paths).toHaveLength(37);
    expect(c.sim.streams()).toHaveLength(37);
    for (const path of paths) {
      const res = await c.get(path);
      expect(res.status, path).toBe(200);
      // The envelope says what the page holds: a count that agrees with its items (a full answer on this data).
      const meta = res.json._meta;
      expect(Number.isInteger(meta.totalCount), path).toBe(true);
      expect(meta.totalCount, path).toBeGreaterThanOrEqual(res.json.items.length);
    }
  });
});

describe('fields', () => {
  it('returns sparse defaults without updated_at', async () => {
    const keys = async (path: string) => Object.keys((await c.get(path)).json.items[0]);
    expect(await keys(`/speakers?event_id=${eventId}`)).toEqual(['id', 'first_name', 'last_name']);
    expect(await keys(`/packages?event_id=${eventId}`)).toEqual(['id', 'name', 'capacity']);
    expect(await keys(`/reg-types?event_id=${eventId}`)).toEqual(['id', 'name']);
    expect(await keys('/contacts')).toEqual(['id', 'first_name', 'last_name']);
    for (const path of [`/registrants?event_id=${eventId}`, `/sessions?event_id=${eventId}`, '/events', '/webhooks']) {
      expect(await keys(path)).not.toContain('updated_at');
    }
  });

  it('returns the named fields in record order, ignoring unknown names', async () => {
    const res = await c.get(`/registrants?event_id=${eventId}&fields=updated_at,bogus,id,email`);
    expect(Object.keys(res.json.items[0])).toEqual(['id', 'email', 'updated_at']);
  });

  it('returns custom fields only when named, with scalar and choice values', async () => {
    const questions = (await c.get(`/event-questions?event_id=${eventId}&fields=id,name,type`)).json.items;
    expect(questions.length).toBeGreaterThan(0);
    expect(Object.keys(questions[0])).toEqual(['id', 'name', 'type']);
    const names = questions.map((q: { id: number }) => `c_${q.id}`);
    const plain = await c.get(`/registrants?event_id=${eventId}&fields=id,email&per-page=50`);
    expect(Object.keys(plain.json.items[0])).toEqual(['id', 'email']);
    const named = await c.get(`/registrants?event_id=${eventId}&fields=id,${names.join(',')}&per-page=50`);
    for (const item of named.json.items) {
      for (const q of questions) {
        const v = item[`c_${q.id}`];
        if (q.type === 'text') expect(typeof v).toBe('string');
        else {
          expect(Array.isArray(v)).toBe(true);
          for (const choice of v) expect(Object.keys(choice)).toEqual(['id', 'value']);
        }
      }
    }
  });

  it('uses the wire conventions: money strings, 0/1 booleans, choice objects', async () => {
    const regs = (
      await c.get(`/registrants?event_id=${eventId}&fields=individual_gross,gender,session_ids&per-page=100`)
    ).json.items;
    for (const r of regs) {
      expect(r.individual_gross).toMatch(/^-?\d+\.\d{2}$/);
      if (r.gender !== null) expect(Object.keys(r.gender)).toEqual(['id', 'value']);
      expect(Array.isArray(r.session_ids)).toBe(true);
    }
    const discount = (await c.get(`/discounts?event_id=${eventId}&fields=apply_to_all`)).json.items[0];
    expect([0, 1]).toContain(discount.apply_to_all);
    const sponsor = (await c.get(`/sponsors?event_id=${eventId}`)).json.items[0];
    expect(Object.keys(sponsor.level)).toEqual(['id', 'value']);
    const tx = c.sim.truth('transactions').records;
    expect(tx.some((t) => String(t.amount).startsWith('-'))).toBe(true);
  });
});

describe('expand', () => {
  it('adds allowed objects and rejects unknown ones', async () => {
    const res = await c.get(`/registrants?event_id=${eventId}&fields=id&expand=homeAddress,workAddress`);
    expect(Object.keys(res.json.items[0])).toEqual(['id', 'homeAddress', 'workAddress']);
    expect(Object.keys(res.json.items[0].homeAddress)).toEqual([
      'line_1',
      'line_2',
      'line_3',
      'city',
      'state',
      'zip',
      'country',
    ]);
    const bad = await c.get(`/registrants?event_id=${eventId}&expand=sessions`);
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ name: 'Bad Request', code: 0, status: 400 });
    expect((await c.get(`/tracks?event_id=${eventId}&expand=anything`)).status).toBe(400);
    const speakers = await c.get(`/speakers?event_id=${eventId}&fields=id&expand=sessions`);
    expect(Array.isArray(speakers.json.items[0].sessions)).toBe(true);
    const events = await c.get('/events?fields=id&expand=folder,location,sessions,sponsors,speakers,translations');
    expect(events.status).toBe(200);
    const discounts = await c.get(
      `/discounts?event_id=${eventId}&fields=id&expand=alternates,autopopulate,registrantCount,reservedCount`,
    );
    expect(typeof discounts.json.items[0].registrantCount).toBe('number');
  });
});

describe('ids', () => {
  it('returns only the listed ids', async () => {
    const all = (await c.get(`/registrants?event_id=${eventId}&fields=id&per-page=100`)).json.items.map(
      (r: { id: number }) => r.id,
    );
    const want = [all[3], all[1], 99999999];
    const res = await c.get(`/registrants?event_id=${eventId}&fields=id&ids=${want.join(',')}`);
    expect(res.json.items.map((r: { id: number }) => r.id)).toEqual([all[1], all[3]]);
    expect(res.json._meta.totalCount).toBe(2);
  });

  it('accepts positive integers only, at most 100', async () => {
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1).join(',');
    expect((await c.get(`/registrants?event_id=${eventId}&ids=${hundred}`)).status).toBe(200);
    for (const ids of [`${hundred},101`, '0', '-1', 'abc', '1.5', '1,,2']) {
      const res = await c.get(`/registrants?event_id=${eventId}&ids=${ids}`);
      expect(res.status, ids).toBe(400);
      expect(res.json).toMatchObject({ name: 'Bad Request', code: 0, status: 400 });
    }
  });
});

describe('sort', () => {
  it('sorts ascending and descending, numerically for numbers', async () => {
    const ids = async (sort: string) =>
      (await c.get(`/registrants?event_id=${eventId}&fields=id&per-page=100&sort=${sort}`)).json.items.map(
        (r: { id: number }) => r.id,
      );
    const asc = await ids('id');
    expect(asc).toEqual([...asc].sort((a, b) => a - b));
    expect(await ids('-id')).toEqual([...asc].reverse());
    // Registrant ids of this event cross 1000: a text sort would put 1000 before 990.
    expect(asc.some((id: number) => id < 1000) && asc.some((id: number) => id >= 1000)).toBe(true);
  });

  it('sorts by timestamps and by comma lists', async () => {
    const rows = (
      await c.get(`/registrants?event_id=${eventId}&fields=id,updated_at,last_name&per-page=100&sort=-updated_at,id`)
    ).json.items;
    for (let i = 1; i < rows.length; i++) {
      const a = rows[i - 1];
      const b = rows[i];
      expect(a.updated_at >= b.updated_at).toBe(true);
      if (a.updated_at === b.updated_at) expect(a.id).toBeLessThan(b.id);
    }
    const byName = (await c.get(`/registrants?event_id=${eventId}&fields=last_name&per-page=100&sort=last_name`)).json
      .items;
    const names = byName.map((r: { last_name: string }) => r.last_name.toLowerCase());
    expect(names).toEqual([...names].sort());
    expect((await c.get(`/registrants?event_id=${eventId}&sort=nonsense`)).status).toBe(400);
  });
});
