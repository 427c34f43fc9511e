import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, search, startClient } from './helpers.js';

type Row = Record<string, unknown>;
let c: Client;
let eventId: number;
let rows: Row[];

beforeAll(async () => {
  c = await startClient();
  const events = (await c.get('/events?fields=id,apply_to_attend')).json.items;
  eventId = events.find((e: Row) => e.apply_to_attend).id;
  rows = c.sim.truth('registrants').records.filter((r) => r.event_id === eventId);
});
afterAll(() => c.close());

async function ids(...conditions: string[]): Promise<number[]> {
  const res = await c.get(`/registrants?event_id=${eventId}&fields=id&per-page=1000&${search(...conditions)}`);
  expect(res.status, res.text).toBe(200);
  return res.json.items.map((r: Row) => r.id);
}

const idsWhere = (test: (r: Row) => boolean) => rows.filter(test).map((r) => r.id);

describe('search operators', () => {
  it('= and != on text', async () => {
    expect(await ids('registration_status=confirmed')).toEqual(idsWhere((r) => r.registration_status === 'confirmed'));
    expect(await ids('registration_status!=confirmed')).toEqual(idsWhere((r) => r.registration_status !== 'confirmed'));
    expect((await ids('registration_status=pending')).length).toBeGreaterThan(0);
  });

  it('>, <, >=, <= on ids compare numerically (ids cross 1000)', async () => {
    expect(rows.some((r) => (r.id as number) < 1000)).toBe(true);
    expect(await ids('id>1000')).toEqual(idsWhere((r) => (r.id as number) > 1000));
    expect(await ids('id<1000')).toEqual(idsWhere((r) => (r.id as number) < 1000));
    expect(await ids('id>=1000')).toEqual(idsWhere((r) => (r.id as number) >= 1000));
    expect(await ids('id<=1000')).toEqual(idsWhere((r) => (r.id as number) <= 1000));
    expect(await ids('id=1000')).toEqual(idsWhere((r) => r.id === 1000));
  });

  it('compares money numerically', async () => {
    expect(await ids('individual_gross>500')).toEqual(idsWhere((r) => Number(r.individual_gross) > 500));
    expect(await ids('individual_gross<=99.5')).toEqual(idsWhere((r) => Number(r.individual_gross) <= 99.5));
  });

  it('compares timestamps YYYY-MM-DD HH:MM:SS', async () => {
    const sorted = rows.map((r) => r.updated_at as string).sort();
    const mid = sorted[Math.floor(sorted.length / 2)]!;
    expect(await ids(`updated_at>=${mid}`)).toEqual(idsWhere((r) => (r.updated_at as string) >= mid));
    expect(await ids(`updated_at<${mid}`)).toEqual(idsWhere((r) => (r.updated_at as string) < mid));
    const window = await ids(`updated_at>=${sorted[2]}`, `updated_at<${sorted[sorted.length - 3]}`);
    expect(window).toEqual(
      idsWhere((r) => (r.updated_at as string) >= sorted[2]! && (r.updated_at as string) < sorted[sorted.length - 3]!),
    );
    expect(await ids(`created_at>${sorted[0]}`)).toEqual(idsWhere((r) => (r.created_at as string) > sorted[0]!));
  });

  it('*contains*, *beginswith*, *endswith* (case-insensitive) and *in*', async () => {
    const name = rows[0]!.last_name as string;
    const lower = (r: Row) => String(r.last_name).toLowerCase();
    const head = name.slice(0, 2);
    const tail = name.slice(-2);
    const mid = name.slice(1, 3);
    expect(await ids(`last_name=*beginswith*${head}`)).toEqual(
      idsWhere((r) => lower(r).startsWith(head.toLowerCase())),
    );
    expect(await ids(`last_name=*endswith*${tail.toUpperCase()}`)).toEqual(
      idsWhere((r) => lower(r).endsWith(tail.toLowerCase())),
    );
    expect(await ids(`last_name=*contains*${mid}`)).toEqual(idsWhere((r) => lower(r).includes(mid.toLowerCase())));
    expect(await ids('registration_status=*in*pending|approved')).toEqual(
      idsWhere((r) => r.registration_status === 'pending' || r.registration_status === 'approved'),
    );
    expect(await ids(`id=*in*${rows[0]!.id}|${rows[5]!.id}`)).toEqual([rows[0]!.id, rows[5]!.id]);
  });

  it('joins conditions with AND, or OR with searchCondition=or', async () => {
    expect(await ids('id>1000', 'registration_status=pending')).toEqual(
      idsWhere((r) => (r.id as number) > 1000 && r.registration_status === 'pending'),
    );
    const res = await c.get(
      `/registrants?event_id=${eventId}&fields=id&per-page=1000&${search('id<995', 'registration_status=denied')}&searchCondition=or`,
    );
    expect(res.json.items.map((r: Row) => r.id)).toEqual(
      idsWhere((r) => (r.id as number) < 995 || r.registration_status === 'denied'),
    );
  });

  it('matches array fields by element and choice fields by value or id', async () => {
    const session = (rows.find((r) => (r.session_ids as number[]).length > 0)!.session_ids as number[])[0]!;
    expect(await ids(`session_ids=${session}`)).toEqual(idsWhere((r) => (r.session_ids as number[]).includes(session)));
    expect(await ids('gender=Female')).toEqual(idsWhere((r) => (r.gender as Row | null)?.value === 'Female'));
    expect(await ids('gender=1')).toEqual(idsWhere((r) => (r.gender as Row | null)?.id === 1));
  });

  it('searches custom fields', async () => {
    const q = (await c.get(`/event-questions?event_id=${eventId}&fields=id,type`)).json.items.find(
      (x: Row) => x.type === 'dropdown',
    );
    const key = `c_${q.id}`;
    const value = (rows.find((r) => (r[key] as unknown[]).length > 0)![key] as Row[])[0]!.value as string;
    expect(await ids(`${key}=${value}`)).toEqual(idsWhere((r) => (r[key] as Row[]).some((v) => v.value === value)));
  });

  it('400 for unknown fields and malformed conditions', async () => {
    for (const cond of ['bogus=1', 'nothing', '=x']) {
      const res = await c.get(`/registrants?event_id=${eventId}&${search(cond)}`);
      expect(res.status, cond).toBe(400);
      expect(res.json).toMatchObject({ name: 'Bad Request', code: 0, status: 400 });
    }
  });
});
