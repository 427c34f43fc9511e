/**
 * The bulk lane through the client: a view made by `inBulkLane` puts every call of the code it is handed in the lane
 * (the engine's walks), and a bulk call waiting for its share of the window holds none of the interactive calls'
 * slots: with one call in flight at a time, a re-read still goes while the catch-up waits.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { BulkLane } from '../../src/api/index.js';
import { closeClients, fakeService, makeClient, onePage, withToken } from './helpers.js';

afterEach(closeClients);

describe('the bulk lane through the client', () => {
  it('a waiting bulk call holds no interactive slot; closing the lane refuses it, nothing else', async () => {
    // Answers without rate headers: the client's own count is the window's.
    const svc = fakeService(withToken(() => ({ body: onePage() })));
    const client = makeClient(svc, { rateLimit: { limit: 40, windowMs: 600_000 }, concurrency: 1 });
    await client.ensureToken(); // 1 credit: 39 left
    const closing = new AbortController();
    const lane: BulkLane = { name: 'the catch-up', leaveShare: 0.25, closes: closing.signal };
    const bulk = client.inBulkLane(lane);
    // 39 and 29 credits left each keep the 10 it leaves; at 19 the next bulk call would keep 9.
    await bulk.list('/registrants');
    await bulk.list('/registrants');
    const waiting = bulk.list('/registrants');
    await client.list('/registrants');
    expect(svc.dataCalls()).toHaveLength(3);
    expect(client.ledger.snapshot().remaining).toBe(9);
    // One client underneath: the view's counters are the client's.
    expect(bulk.stats().credits.total).toBe(client.stats().credits.total);

    closing.abort('the tick at 12:15:00 is due');
    await expect(waiting).rejects.toMatchObject({
      reason: 'lane-closed',
      message: 'the catch-up stopped: the tick at 12:15:00 is due',
    });
    expect(svc.dataCalls()).toHaveLength(3);
  });
});
