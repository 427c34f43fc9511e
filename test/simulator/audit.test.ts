import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, startClient } from './helpers.js';

type Row = Record<string, unknown>;
let c: Client;
let eventId: number;
const AUDIT = '/registrations/audit/sessions';
const enc = (s: string) => encodeURIComponent(s);

beforeAll(async () => {
  c = await startClient();
  const events = (await c.get('/events?fields=id,status')).json.items;
  eventId = events.find((e: Row) => e.status === 'live').id;
});
afterAll(() => c.close());

describe('registration audit log', () => {
  it('needs event_id and start_time', async () => {
    for (const q of [`event_id=${eventId}`, `start_time=${enc('2020-01-01 00:00:00')}`, '']) {
      const res = await c.get(`${AUDIT}?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.json).toMatchObject({ name: 'Bad Request', code: 0, status: 400 });
    }
    expect((await c.get(`${AUDIT}?event_id=${eventId}&start_time=yesterday`)).status).toBe(400);
  });

  it('returns both record types, no id, and always registrant_id', async () => {
    const res = await c.get(
      `${AUDIT}?event_id=${eventId}&start_time=${enc('2000-01-01 00:00:00')}&per-page=1000&fields=*`,
    );
    expect(res.status).toBe(200);
    const items: Row[] = res.json.items;
    expect(new Set(items.map((r) => r.type))).toEqual(new Set(['session_ids', 'session_attendance']));
    expect(Object.keys(items[0]!)).toEqual([
      'registrant_id',
      'group_id',
      'full_name',
      'email',
      'type',
      'session_ids',
      'updated_at',
    ]);
    expect(items.every((r) => !('id' in r))).toBe(true);
    expect(items.every((r) => typeof r.session_ids === 'string')).toBe(true);
    const slim = await c.get(`${AUDIT}?event_id=${eventId}&start_time=${enc('2000-01-01 00:00:00')}&fields=type`);
    expect(Object.keys(slim.json.items[0])).toEqual(['registrant_id', 'type']);
    expect(
      (await c.get(`${AUDIT}?event_id=${eventId}&start_time=2000-01-01%2000:00:00&per-page=5000`)).json._meta.perPage,
    ).toBe(1000);
  });

  it('start_time is inclusive, end_time exclusive', async () => {
    const regs = new Set(
      c.sim
        .truth('registrants')
        .records.filter((r) => r.event_id === eventId)
        .map((r) => r.id),
    );
    const all: Row[] = c.sim.truth('registration_audit').records.filter((r) => regs.has(r.registrant_id));
    const times = [...new Set(all.map((r) => r.updated_at as string))].sort();
    const from = times[3]!;
    const to = times[times.length - 4]!;
    const res = await c.get(
      `${AUDIT}?event_id=${eventId}&start_time=${enc(from)}&end_time=${enc(to)}&per-page=1000&fields=updated_at`,
    );
    const got: string[] = res.json.items.map((r: Row) => r.updated_at);
    expect(got).toContain(from);
    expect(got).not.toContain(to);
    expect(got.length).toBe(
      all.filter((r) => (r.updated_at as string) >= from && (r.updated_at as string) < to).length,
    );
  });

  it('is the caller’s: 403 for another account’s event', async () => {
    const other = (await c.get('/events?fields=id', { account: 1 })).json.items[0].id;
    expect((await c.get(`${AUDIT}?event_id=${other}&start_time=2000-01-01%2000:00:00`)).status).toBe(403);
  });

  it('grows when a registrant’s sessions change', async () => {
    const before = c.sim.truth('registration_audit').records.length;
    const summary = c.sim.mutate(3, { streams: ['registration_audit'] });
    expect(summary.inserted.registration_audit).toBe(3);
    const after = c.sim.truth('registration_audit').records;
    expect(after.length).toBe(before + 3);
    const last = after[after.length - 1]!;
    expect(last.type).toBe('session_ids');
    const reg = c.sim.truth('registrants').records.find((r) => r.id === last.registrant_id)!;
    expect(last.session_ids).toBe((reg.session_ids as number[]).join(','));
    expect(last.updated_at).toBe(reg.updated_at);
  });
});
