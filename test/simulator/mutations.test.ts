import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.js';
import { type Client, ERROR_404, search, startClient } from './helpers.js';

type Row = Record<string, unknown>;
let c: Client;
beforeAll(async () => {
  c = await startClient();
});
afterAll(() => c.close());

/** Every record of a stream of account 0 over the API, all fields, walked by keyset. */
async function listAll(path: string, fields: string): Promise<Row[]> {
  const out: Row[] = [];
  let last = 0;
  for (;;) {
    const sep = path.includes('?') ? '&' : '?';
    const res = await c.get(`${path}${sep}fields=${fields}&per-page=1000&sort=id&${search(`id>${last}`)}`);
    expect(res.status, res.text).toBe(200);
    out.push(...res.json.items);
    if (res.json.items.length < res.json._meta.perPage) return out;
    last = res.json.items[res.json.items.length - 1].id;
  }
}

describe('truth()', () => {
  it('equals what the API serializes when asked for every field', async () => {
    const events = (await c.get('/events?fields=id')).json.items;
    const api: Row[] = [];
    for (const e of events) {
      const questions = (await c.get(`/event-questions?event_id=${e.id}&fields=id`)).json.items;
      const fields = ['*', ...questions.map((q: Row) => `c_${q.id}`)].join(',');
      api.push(...(await listAll(`/registrants?event_id=${e.id}`, fields)));
    }
    expect(api).toEqual(c.sim.truth('registrants').records);
    expect(await listAll('/contacts', '*')).toEqual(c.sim.truth('contacts').records);
  });
});

describe('mutate()', () => {
  it('inserts, updates and deletes visibly in lists, single GETs and truth', async () => {
    const before = c.sim.truth('registrants');
    const beforeIds = new Set(before.records.map((r) => r.id));
    const maxId = Math.max(...(before.records.map((r) => r.id) as number[]));
    c.sim.advanceClock(600);
    const now = c.sim.now();
    const summary = c.sim.mutate(40, { streams: ['registrants'] });
    const after = c.sim.truth('registrants');
    const inserted = summary.inserted.registrants ?? 0;
    const deleted = summary.deleted.registrants ?? 0;
    const updated = summary.updated.registrants ?? 0;
    expect(inserted + deleted + updated).toBe(40);
    expect(inserted && deleted && updated).toBeTruthy();
    expect(after.records.length).toBe(before.records.length + inserted - deleted);
    expect(after.deletedIds.length).toBe(deleted);

    const stamp = now.toISOString().slice(0, 16).replace('T', ' ');
    const fresh = after.records.filter((r) => !beforeIds.has(r.id));
    expect(fresh).toHaveLength(inserted);
    for (const r of fresh) {
      expect(r.id as number).toBeGreaterThan(maxId);
      expect(String(r.created_at).slice(0, 16)).toBe(stamp);
    }
    const changed = after.records.filter((r) => beforeIds.has(r.id) && String(r.updated_at).slice(0, 16) === stamp);
    expect(changed.length).toBeGreaterThan(0);

    // Visible over HTTP: deleted ids are 404 and gone from lists; an updated record shows the new updated_at.
    const gone = after.deletedIds[0]!;
    expect((await c.get(`/registrants/${gone}`)).json).toEqual(ERROR_404);
    const event = before.records.find((r) => r.id === gone)!.event_id;
    const listed = (await c.get(`/registrants?event_id=${event}&fields=id&per-page=1000`)).json.items;
    expect(listed.map((r: Row) => r.id)).not.toContain(gone);
    const one = changed[0]!;
    const res = await c.get(`/registrants?event_id=${one.event_id}&fields=id,updated_at&ids=${one.id}`);
    expect(res.json.items).toEqual([{ id: one.id, updated_at: one.updated_at }]);
    // An incremental window from before the change finds it.
    const window = await c.get(
      `/registrants?event_id=${one.event_id}&fields=id&per-page=1000&${search(`updated_at>=${stamp}:00`)}`,
    );
    expect(window.json.items.map((r: Row) => r.id)).toContain(one.id);
  });

  it('changes other streams too, streams without updated_at only by insert and delete', () => {
    const summary = c.sim.mutate(300);
    const touched = new Set([
      ...Object.keys(summary.inserted),
      ...Object.keys(summary.updated),
      ...Object.keys(summary.deleted),
    ]);
    expect(touched.size).toBeGreaterThan(5);
    expect(summary.updated.registrant_line_items).toBeUndefined();
    expect(summary.updated.session_attendance).toBeUndefined();
    for (const stream of c.sim.streams()) {
      const t = c.sim.truth(stream);
      if (stream === 'registration_audit') expect(t.deletedIds).toEqual([]);
      const ids = t.records.map((r) => r.id);
      if (stream !== 'registration_audit') expect(new Set(ids).size).toBe(ids.length);
    }
  });
});

describe('determinism', () => {
  it('gives the same data for the same seed and different data for another', async () => {
    const a = await startSimulator({ size: 'tiny', seed: 7 });
    const b = await startSimulator({ size: 'tiny', seed: 7 });
    const d = await startSimulator({ size: 'tiny', seed: 8 });
    try {
      for (const stream of ['events', 'registrants', 'transactions', 'registration_audit', 'contacts']) {
        expect(a.truth(stream)).toEqual(b.truth(stream));
      }
      expect(a.truth('registrants')).not.toEqual(d.truth('registrants'));
      expect(a.accounts).toEqual(b.accounts);
      a.mutate(25);
      b.mutate(25);
      expect(a.truth('registrants').deletedIds).toEqual(b.truth('registrants').deletedIds);
    } finally {
      await Promise.all([a.close(), b.close(), d.close()]);
    }
  });
});

describe('mutations of rarely changed streams', () => {
  it('a new data list answers an empty item list; definitions change only when named', async () => {
    const summary = c.sim.mutate(6, { streams: ['data_lists'] });
    expect(summary.inserted.data_lists).toBe(6);
    const lists = c.sim.truth('data_lists').records;
    const newest = lists[lists.length - 1]!;
    const items = await c.get(`/data-lists/${newest.id}/items`);
    expect(items.status).toBe(200);
    expect(items.json.items).toEqual([]);
    const defsBefore = c.sim.truth('event_questions').records.length;
    c.sim.mutate(50);
    expect(c.sim.truth('event_questions').records.length).toBe(defsBefore);
  });
});
