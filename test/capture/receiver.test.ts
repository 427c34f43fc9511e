/**
 * What the receiver refuses, and that refusing loses nothing: a wrong or missing secret (401, nothing journaled), a
 * body too large (413, nothing journaled), a body that is no delivery (400, journaled as rejected), and a journal
 * that cannot be written (503). The simulator's real deliveries keep landing throughout.
 */
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CaptureHarness, HEADER, mutateEach, SECRET, startCaptureHarness } from './helpers.js';

let h: CaptureHarness;
beforeAll(async () => {
  h = await startCaptureHarness();
});
afterAll(async () => {
  await h?.stop();
});

async function post(body: string | Buffer, headers: Record<string, string>) {
  const res = await request(h.capture.url, { method: 'POST', headers, body });
  return { status: res.statusCode, text: await res.body.text() };
}

async function journal(): Promise<{ status: string; n: number }[]> {
  const r = await h.warehouse.query(`SELECT status, count(*) AS n FROM _evsync.deliveries GROUP BY 1 ORDER BY 1`);
  return r.rows.map((row) => ({ status: String(row.status), n: Number(row.n) }));
}

const json = { 'content-type': 'application/json' };
const delivery = JSON.stringify({
  action: 'update',
  object: 'registrant',
  datetime: '2024-01-01 00:00:00',
  registrant: { id: 1, event_id: 1 },
});

describe('the receiver refuses', () => {
  it('a missing or wrong secret, with 401, journaling nothing', async () => {
    const before = await journal();
    expect((await post(delivery, json)).status).toBe(401);
    expect((await post(delivery, { ...json, [HEADER]: `${SECRET}x` })).status).toBe(401);
    expect((await post(delivery, { ...json, [HEADER]: SECRET.slice(0, -1) })).status).toBe(401);
    expect(await journal()).toEqual(before);
    expect(h.capture.metrics.deliveries.get({ outcome: 'unauthorized' })).toBe(3);
  });

  it('a body larger than the limit, with 413, journaling nothing', async () => {
    const before = await journal();
    const big = Buffer.alloc(1024 * 1024 + 1, 'a');
    expect((await post(big, { ...json, [HEADER]: SECRET })).status).toBe(413);
    // Without a content length (chunked), the limit holds while the body streams in.
    const res = await request(h.capture.url, {
      method: 'POST',
      headers: { ...json, [HEADER]: SECRET },
      body: Readable.from(
        (function* () {
          for (let i = 0; i < 17; i++) yield Buffer.alloc(64 * 1024, 'b');
        })(),
      ),
    });
    expect(res.statusCode).toBe(413);
    await res.body.text();
    expect(await journal()).toEqual(before);
  });

  it('a body that is no delivery, with 400, journaled as rejected (for diagnosis), never applied', async () => {
    const auth = { [HEADER]: SECRET };
    const bad = [
      ['{"action": "update", "object": ', json],
      ['[1, 2]', json],
      [JSON.stringify({ action: 'rename', object: 'registrant', registrant: { id: 1 } }), json],
      [JSON.stringify({ action: 'update', object: 'registrant', registrant: { id: 'x' } }), json],
      ['action=update&object=registrant&registrant[id=1', { 'content-type': 'application/x-www-form-urlencoded' }],
      [
        'action=update&object=registrant&registrant[id]=7&registrant[__proto__][x]=1',
        { 'content-type': 'application/x-www-form-urlencoded' },
      ],
      [delivery, { 'content-type': 'text/plain' }],
    ] as const;
    for (const [body, headers] of bad) {
      const r = await post(body, { ...headers, ...auth });
      expect(r.status, body).toBe(400);
      // The reason names what is wrong, never a value from the body.
      expect(r.text).not.toContain('rename');
    }
    const rejected = await h.warehouse.query(
      `SELECT body, reason FROM _evsync.deliveries WHERE status = 'rejected' ORDER BY seq`,
    );
    expect(rejected.rows.map((r) => r.body)).toEqual(bad.map(([body]) => body));
    expect(rejected.rows.map((r) => r.reason)).toEqual([
      'body is not valid JSON',
      'body is not an object',
      'action is missing or not one of insert, update, delete',
      'the registrant record has no integer id',
      'a field name has unbalanced brackets',
      'a field name is not allowed',
      'content type is neither application/json nor form-encoded',
    ]);
  });

  it('loses nothing meanwhile: every real delivery still lands', async () => {
    mutateEach(h.sim, 5);
    await h.settle();
    expect(await h.differences()).toEqual({});
    const statuses = await journal();
    expect(statuses.find((s) => s.status === 'pending')).toBeUndefined();
    expect(statuses.find((s) => s.status === 'rejected')?.n).toBe(7);
    expect(h.listCalls()).toBe(0);
  });

  it('anything while the journal cannot be written, with 503 (the service retries)', async () => {
    await h.warehouse.close();
    const r = await post(delivery, { ...json, [HEADER]: SECRET });
    expect(r.status).toBe(503);
    expect(r.text).not.toContain('registrant');
    expect((await request(`${h.capture.origin}/healthz`)).statusCode).toBe(503);
  });
});
