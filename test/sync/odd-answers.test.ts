/**
 * Odd answers that once cost money or memory: an audit log that ignores `page` and claims a billion pages, and an
 * answer far larger than any real page. Served by a real proxy on loopback in front of the simulator; every call
 * the engine makes is counted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runSync } from '../../src/sync/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';

const AUDIT = '/registrations/audit/sessions';

/** Clients here retry once: every call the engine makes is counted. */
const RETRY_ONCE = { retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 5 } };

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('an audit log that ignores page and claims a billion pages', () => {
  it('fails its scope after at most one extra call per scope; the rest of the run goes on', async () => {
    h = await startHarness();
    let auditCalls = 0;
    const { client } = await h.proxied(
      {
        forward: (path) => (path.startsWith(`${AUDIT}?`) ? path.replace(/([?&])page=\d+/, '$1page=1') : path),
        rewrite: (path, body) => {
          if (!path.startsWith(`${AUDIT}?`)) return null;
          auditCalls += 1;
          const parsed = JSON.parse(body) as { items: unknown[]; _meta: Record<string, number> };
          // Whatever page was asked, the same first page, and a page count no scope has.
          return JSON.stringify({ ...parsed, _meta: { ...parsed._meta, pageCount: 1_000_000_000, currentPage: 1 } });
        },
      },
      RETRY_ONCE,
    );
    const events = h.sim.truth('events').records.length;
    const result = await runSync(client, h.warehouse, {
      mode: 'backfill',
      streams: 'registrants,registration_audit',
      lagSeconds: 0,
      customFields: false,
    });
    // Each event's audit scope: its first page, then at most one more before the walk sees the contradiction.
    expect(auditCalls).toBeLessThanOrEqual(events * 2);
    const audit = result.errors.filter((e) => e.startsWith('registration_audit'));
    expect(audit.join('\n')).toMatch(/same records as page 1|past what its first answer's totalCount/);
    expect(result.streams.registrants?.errors).toBeUndefined();
  });
});

describe('an answer far larger than a page', () => {
  it('is refused while it streams, with a clear error, and costs one call (not retried)', async () => {
    h = await startHarness();
    let served = 0;
    const { client } = await h.proxied(
      {
        rewrite: (path, body) => {
          if (!path.startsWith('/contacts?')) return null;
          served += 1;
          const parsed = JSON.parse(body) as { items: Record<string, unknown>[] };
          // One record carrying 3 MB of notes: past the 1 MB limit this client was given.
          parsed.items[0] = { ...parsed.items[0], notes: 'x'.repeat(3 * 1_048_576) };
          return JSON.stringify(parsed);
        },
      },
      { ...RETRY_ONCE, maxResponseBytes: 1_048_576 },
    );
    const result = await runSync(client, h.warehouse, {
      mode: 'backfill',
      streams: 'contacts',
      lagSeconds: 0,
      customFields: false,
    });
    expect(result.status).toBe('failed');
    expect(result.errors.join('\n')).toMatch(
      /contacts\[account\]: GET \/contacts: the answer is larger than 1 MB, refused/,
    );
    expect(served).toBe(1);
    expect(result.errors.join('\n')).not.toContain('xxxx');
  });
});

describe('one huge record', () => {
  it("a 20 MB value (past the loader's 16 MB per record) is quarantined; the rest of its page loads", async () => {
    h = await startHarness();
    let victim: number | null = null;
    const { client } = await h.proxied({
      rewrite: (path, body) => {
        if (!path.startsWith('/contacts?')) return null;
        const parsed = JSON.parse(body) as { items: Record<string, unknown>[] };
        victim = Number(parsed.items[0]!.id);
        parsed.items[0] = { ...parsed.items[0], notes: 'n'.repeat(20 * 1_048_576) };
        return JSON.stringify(parsed);
      },
    });
    const result = await runSync(client, h.warehouse, {
      mode: 'backfill',
      streams: 'contacts',
      lagSeconds: 0,
      customFields: false,
    });
    expect(result.errors).toEqual([]);
    expect(result.status).toBe('done');
    const stored = await h.warehouse.query('SELECT id FROM contacts ORDER BY id');
    const ids = h.sim
      .truth('contacts')
      .records.map((r) => Number(r.id))
      .filter((id) => id !== victim)
      .sort((a, b) => a - b);
    expect(stored.rows.map((r) => Number(r.id))).toEqual(ids);
    const rejected = await h.warehouse.query(
      `SELECT reason, raw->>'notes' AS notes, CAST(raw->>'id' AS BIGINT) AS id FROM _evsync.rejected`,
    );
    expect(rejected.rows).toMatchObject([
      {
        reason: expect.stringMatching(/record of 20\.\d MB: larger than the loader's 16 MB per record/),
        id: String(victim),
      },
    ]);
    expect(String(rejected.rows[0]?.notes)).toMatch(/^\(20971520 bytes, not stored\)$/);
  });
});
