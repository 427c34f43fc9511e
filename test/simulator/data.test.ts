import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_STATUSES, REGISTRATION_STATUSES, startSimulator } from '../../src/simulator/index.js';
import { type Client, startClient } from './helpers.js';

let c: Client;
beforeAll(async () => {
  c = await startClient();
});
afterAll(() => c.close());

const TS = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

describe('generated data', () => {
  it('covers every event status, several time zones and every registration status', () => {
    const events = [0, 1].flatMap((a) => c.sim.truth('events', a).records);
    expect(new Set(events.map((e) => e.status))).toEqual(new Set(EVENT_STATUSES));
    expect(new Set(events.map((e) => e.timezone)).size).toBeGreaterThanOrEqual(3);
    const statuses = new Set(c.sim.truth('registrants', 0).records.map((r) => r.registration_status));
    expect(statuses).toEqual(new Set(REGISTRATION_STATUSES));
  });

  it('keeps every timestamp in the past of the clock and created_at <= updated_at', async () => {
    const now = Date.parse((await c.get('/events')).headers.date!);
    const nowText = new Date(now).toISOString().slice(0, 19).replace('T', ' ');
    for (const stream of c.sim.streams()) {
      for (const account of [0, 1]) {
        for (const r of c.sim.truth(stream, account).records) {
          for (const [k, v] of Object.entries(r)) {
            if (typeof v === 'string' && TS.test(v)) expect(v <= nowText, `${stream}.${k} ${v}`).toBe(true);
          }
          if (typeof r.created_at === 'string' && typeof r.updated_at === 'string') {
            expect(r.created_at <= r.updated_at, `${stream} ${r.id}`).toBe(true);
          }
        }
      }
    }
  });

  it('has refunds, line items, audit rows and custom fields', () => {
    expect(
      c.sim.truth('transactions').records.some((t) => t.type === 'refund' && String(t.amount).startsWith('-')),
    ).toBe(true);
    expect(c.sim.truth('registrant_line_items').records.length).toBeGreaterThan(0);
    expect(c.sim.truth('registration_audit').records.length).toBeGreaterThan(0);
    const reg = c.sim.truth('registrants').records[0]!;
    expect(Object.keys(reg).some((k) => k.startsWith('c_'))).toBe(true);
  });

  it('writes record timestamps in the record zone; expires_at stays UTC', async () => {
    const tokyo = await startSimulator({ size: 'tiny', recordTimezone: 'Asia/Tokyo' });
    try {
      tokyo.mutate(5, { streams: ['contacts'] });
      const stamps = tokyo.truth('contacts').records.map((r) => r.updated_at as string);
      const newest = stamps.sort().at(-1)!;
      const recordMs = Date.parse(`${newest.replace(' ', 'T')}Z`);
      // Tokyo is UTC+9 all year.
      expect(Math.abs(recordMs - tokyo.now().getTime() - 9 * 3600_000)).toBeLessThan(5000);
    } finally {
      await tokyo.close();
    }
  });
});
