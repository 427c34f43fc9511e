/**
 * A record found gone by a re-read is marked deleted on the service's clock, the clock its versions (`updated_at`)
 * are on: with the service's clock an hour ahead of the daemon's, a mark on the daemon's clock was older than the
 * version the delivery carried, and the replay after a reconciliation brought the deleted record back (found by the
 * daemon benchmark's killed burst). The skew is the simulator's own clock, set by the test, not the machine's speed.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProxyRules } from '../helpers/proxy.js';
import { type CaptureHarness, HEADER, SECRET, startCaptureHarness } from './helpers.js';

type Item = Record<string, unknown>;

/** Ids the proxy keeps out of list answers: to the applier's re-read, these records are gone at the service. */
const gone = new Set<number>();
const rules: ProxyRules = {
  rewrite: (path, body) => {
    if (!/^\/(events\/\d+\/)?registrants\b/.test(path) || !body.startsWith('{"items"')) return null;
    const envelope = JSON.parse(body) as { items: Item[] };
    const kept = envelope.items.filter((item) => !gone.has(Number(item.id)));
    return kept.length === envelope.items.length ? null : JSON.stringify({ ...envelope, items: kept });
  },
};

let h: CaptureHarness;
beforeAll(async () => {
  // The applier's own client: its first answers come once the test has moved the service's clock (its clock is the
  // median of its last answers' Date headers, as a daemon's is after a while).
  h = await startCaptureHarness({ streams: ['registrants'], install: false, proxy: rules, client: {} });
});
afterAll(async () => {
  await h?.stop();
});

/** `YYYY-MM-DD HH:MM:SS` of an epoch ms (UTC, as the simulator writes record times). */
const text = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);

async function deliver(record: Item): Promise<void> {
  const res = await request(h.capture.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [HEADER]: SECRET },
    body: JSON.stringify({ action: 'update', object: 'registrant', datetime: record.updated_at, registrant: record }),
  });
  expect(res.statusCode).toBe(200);
  await res.body.text();
}

async function deletedAt(id: unknown): Promise<number | null> {
  const r = await h.warehouse.query(`SELECT CAST(_deleted_at AS VARCHAR) AS at FROM registrants WHERE id = ?`, [id]);
  const at = r.rows[0]?.at;
  return typeof at === 'string' ? Date.parse(`${at.slice(0, 23).replace(' ', 'T')}Z`) : null;
}

describe('a record found gone by a re-read, with the service clock ahead of the daemon', () => {
  it('is marked deleted on the service clock, and stays deleted when its delivery is replayed', async () => {
    h.sim.advanceClock(3600);
    const record = h.sim.truth('registrants').records[0]!;
    // The change the delivery reports, a moment before the record vanished at the service (its clock).
    const version = h.sim.now().getTime() - 10_000;
    gone.add(Number(record.id));
    const since = text(Date.now() - 1000);
    await deliver({ id: record.id, event_id: record.event_id, updated_at: text(version) });
    await h.capture.applier.idle();

    const marked = await deletedAt(record.id);
    expect(marked).not.toBeNull();
    // On the service's clock: after the version, within a minute of the service's now (an hour after the local one).
    expect(marked!).toBeGreaterThan(version);
    expect(Math.abs(marked! - h.sim.now().getTime())).toBeLessThan(60_000);

    // The replay after a reconciliation judges the delivery again: its version is older than the mark.
    h.capture.applier.invalidate();
    await h.capture.applier.replay(since);
    expect(await deletedAt(record.id)).toBe(marked);
  });
});
