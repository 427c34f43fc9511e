/**
 * One path from a record to a row (issue 23, item 7): a record that arrives by webhook, written from a complete JSON
 * payload or re-read by id, is stored exactly as the same record polled in a page, because both go through the
 * engine's PageLoader:
 * - credentials it echoes (the access token the client holds, the client secret, the Basic string) are stored as
 *   `[REDACTED]`, and are in no journal body, no rejected record and no log line;
 * - a value nested too deep to store quarantines the record in `_evsync.rejected` (the same reason, a storable raw)
 *   while its neighbours load;
 * - a field the catalogue does not declare becomes a column of the type polling gives it.
 * Polled pages and re-reads come from the simulator through a loopback proxy that rewrites its list answers; payloads
 * are POSTed to the receiver as the service would.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOO_DEEP } from '../../normalizer/storable.js';
import { urlencodeRfc1738 } from '../../src/api/index.js';
import { startCapture } from '../../src/sync/capture/server.js';
import { rebuild, runSync } from '../../src/sync/index.js';
import { archivedTexts } from '../helpers/archive.js';
import type { ProxyRules } from '../helpers/proxy.js';
import { type CaptureHarness, HEADER, SECRET, startCaptureHarness } from './helpers.js';

type Item = Record<string, unknown>;

/** Where a nested value goes in a rewritten answer or a body (JSON.stringify cannot write the deep one). */
const nested = (levels: number) => `${'['.repeat(levels)}"leaf"${']'.repeat(levels)}`;
const DEEP_MARK = '__deep_value__';
/** Past the documented 256 levels, not deep enough to exhaust the stack. */
const PAST_256_MARK = '__past_256_value__';
const MARKS: [string, string][] = [
  [`"${DEEP_MARK}"`, nested(100_000)],
  [`"${PAST_256_MARK}"`, nested(300)],
];
const withNested = (json: string) => MARKS.reduce((text, [mark, value]) => text.replaceAll(mark, value), json);

/** What the proxy plants in list answers, by record id. */
const planted = new Map<number, (item: Item) => void>();
const rules: ProxyRules = {
  rewrite: (path, body) => {
    if (!/^\/(events\/\d+\/)?registrants\b/.test(path) || !body.startsWith('{"items"')) return null;
    const envelope = JSON.parse(body) as { items: Item[] };
    let changed = false;
    for (const item of envelope.items) {
      const plant = planted.get(Number(item.id));
      if (plant) {
        plant(item);
        changed = true;
      }
    }
    return changed ? withNested(JSON.stringify(envelope)) : null;
  },
};

/** Every bearer token this process sent (the CLI and the simulator run in it), as the secrets test collects them. */
const sentTokens = new Set<string>();
let lastToken = '';
function onHeaders(message: unknown): void {
  const headers = (message as { headers?: unknown }).headers;
  const text = Array.isArray(headers) ? headers.join('\r\n') : String(headers ?? '');
  for (const m of text.matchAll(/authorization:\s*Bearer\s+(\S+)/gi)) {
    sentTokens.add(m[1]!);
    lastToken = m[1]!;
  }
}

let h: CaptureHarness;
const logs: string[] = [];
let records: Item[];

beforeAll(async () => {
  subscribe('undici:client:sendHeaders', onHeaders);
  h = await startCaptureHarness({
    streams: ['registrants'],
    install: false,
    proxy: rules,
    log: (level, message) => logs.push(`${level} ${message}`),
  });
  records = h.sim.truth('registrants').records;
});

afterAll(async () => {
  unsubscribe('undici:client:sendHeaders', onHeaders);
  await h?.stop();
});

/** `count` registrants of one event that no other test took. */
function registrantsOfOneEvent(count: number): Item[] {
  const byEvent = new Map<unknown, Item[]>();
  for (const r of records) byEvent.set(r.event_id, [...(byEvent.get(r.event_id) ?? []), r]);
  const list = [...byEvent.values()].find((l) => l.length >= count)!.slice(0, count);
  const ids = new Set(list.map((r) => r.id));
  records = records.filter((r) => !ids.has(r.id));
  return list;
}

async function post(record: Item): Promise<void> {
  const body = withNested(
    JSON.stringify({ action: 'update', object: 'registrant', datetime: '2099-01-01 00:00:00', registrant: record }),
  );
  const res = await request(h.capture.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [HEADER]: SECRET },
    body,
  });
  expect(res.statusCode).toBe(200);
  await res.body.text();
}

/** A complete payload (every field a list returns) of a newer version: written as it is, no API call. */
function payload(r: Item, change: Item): Item {
  return { ...r, updated_at: '2099-01-01 00:00:00', ...change };
}

/** A payload naming the record only: re-read by id through the proxy. */
function reread(r: Item): Item {
  return { id: r.id, event_id: r.event_id };
}

/** Polls the registrants through the proxy, as a sync does (every page, every record). */
async function poll(): Promise<void> {
  const client = h.client({ baseUrl: h.proxyUrl! });
  const result = await runSync(client, h.warehouse, { mode: 'backfill', streams: 'registrants' });
  expect(result.errors).toEqual([]);
}

async function row(id: unknown, columns: string): Promise<Item> {
  const r = await h.warehouse.query(`SELECT ${columns} FROM registrants WHERE id = ?`, [Number(id)]);
  return r.rows[0] as Item;
}

async function outcomes(): Promise<Record<number, string>> {
  const r = await h.warehouse.query(`SELECT record_id, outcome FROM _evsync.deliveries ORDER BY seq`);
  return Object.fromEntries(r.rows.map((x) => [Number(x.record_id), String(x.outcome)]));
}

describe('a record that echoes a live credential', () => {
  it('is stored scrubbed exactly as polling stores it, whichever path brought it; the secret is nowhere', async () => {
    const a = h.sim.accounts[0]!;
    const [polled, reread1, sent, badPolled, badSent] = registrantsOfOneEvent(5) as [Item, Item, Item, Item, Item];
    const echo = (token: string): Item => ({
      notes: `Authorization: Bearer ${token}`,
      bio: a.clientSecret,
      reference: `creds ${a.encoded}`,
    });
    // A record the normalizer refuses, whose value (quoted in the reason) is the credential.
    const refused = (token: string): Item => ({ updated_at: `at ${token}` });
    for (const r of [polled, reread1]) planted.set(Number(r.id), (item) => Object.assign(item, echo(lastToken)));
    planted.set(Number(badPolled.id), (item) => Object.assign(item, refused(lastToken)));

    await poll();
    await post(reread(reread1));
    await h.capture.applier.idle();
    expect(sentTokens.size).toBeGreaterThan(0);
    const token = lastToken;
    await post(payload(sent, echo(token)));
    await post(payload(badSent, refused(token)));
    await h.capture.applier.idle();

    const outcome = await outcomes();
    expect([outcome[Number(reread1.id)], outcome[Number(sent.id)]]).toEqual(['reread', 'payload']);
    const scrubbed = {
      notes: 'Authorization: Bearer [REDACTED]',
      bio: '[REDACTED]',
      reference: 'creds [REDACTED]',
    };
    for (const r of [polled, reread1, sent]) expect(await row(r.id, 'notes, bio, reference')).toEqual(scrubbed);

    const rejected = await h.warehouse.query(
      `SELECT run_id, reason, CAST(raw AS VARCHAR) AS raw FROM _evsync.rejected WHERE reason LIKE '%updated_at%'`,
    );
    const reasons = rejected.rows.map((r) => String(r.reason));
    expect(reasons).toHaveLength(2);
    // Refused for the same field whichever path the record came by (the run id says which). A payload's body was
    // scrubbed as it was journaled, so its reason may quote the scrubbed text where polling's names a length.
    for (const reason of reasons) expect(reason).toMatch(/^field "updated_at": cannot convert string .* to timestamp/);
    expect(rejected.rows.map((r) => String(r.run_id))).toContain('capture');
    for (const r of rejected.rows) expect(JSON.parse(String(r.raw)).updated_at).toBe('at [REDACTED]');

    const forbidden = [
      ...sentTokens,
      a.clientSecret,
      encodeURIComponent(a.clientSecret),
      urlencodeRfc1738(a.clientSecret),
      a.encoded,
    ];
    const tables = await h.warehouse.query(
      `SELECT table_schema AS s, table_name AS t FROM information_schema.tables WHERE table_type = 'BASE TABLE'`,
    );
    const found: string[] = [];
    for (const { s, t } of tables.rows) {
      const dump = await h.warehouse.query(`SELECT CAST(to_json(x) AS VARCHAR) AS j FROM "${s}"."${t}" x`);
      const text = dump.rows.map((r) => String(r.j)).join('\n');
      for (const f of forbidden) if (text.includes(f)) found.push(`${String(s)}.${String(t)} holds ${f.slice(0, 4)}…`);
    }
    for (const f of forbidden) if (logs.join('\n').includes(f)) found.push(`a log line holds ${f.slice(0, 4)}…`);
    // The archive: every page and delivery it kept, read back as text (its segments are compressed).
    for (const text of await archivedTexts(h.dbPath)) {
      for (const f of forbidden) if (text.includes(f)) found.push(`the archive holds ${f.slice(0, 4)}…`);
    }
    expect(found).toEqual([]);
    // The journal kept the delivery, scrubbed.
    const journal = await h.warehouse.query(`SELECT body FROM _evsync.deliveries WHERE record_id = ?`, [
      Number(sent.id),
    ]);
    expect(String(journal.rows[0]?.body)).toContain('Authorization: Bearer [REDACTED]');
  });
});

describe('a record nested deeper than can be stored', () => {
  it('is quarantined with the same reason by polling and by webhook, its neighbours loaded', async () => {
    const [polled, polledNeighbour, reread1, rereadNeighbour, sent, sentNeighbour] = registrantsOfOneEvent(6) as Item[];
    for (const r of [polled!, reread1!]) planted.set(Number(r.id), (item) => Object.assign(item, { notes: DEEP_MARK }));
    for (const r of [polledNeighbour!, rereadNeighbour!]) {
      planted.set(Number(r.id), (item) => Object.assign(item, { notes: `neighbour ${String(r.id)}` }));
    }
    await poll();

    // The four deliveries in one batch: one re-read call for two records, one load for two payloads.
    await h.capture.close();
    h.capture = await startCapture({
      warehouse: h.warehouse,
      client: h.client({ baseUrl: h.proxyUrl! }),
      secret: SECRET,
      streams: ['registrants'],
      listen: '127.0.0.1:0',
      applyNow: false,
    });
    const calls = h.listCalls();
    for (const r of [reread1!, rereadNeighbour!]) await post(reread(r));
    await post(payload(sent!, { notes: DEEP_MARK }));
    await post(payload(sentNeighbour!, { notes: `neighbour ${String(sentNeighbour!.id)}` }));
    h.capture.applier.start();
    await h.capture.applier.idle();
    expect(h.listCalls() - calls).toBe(1);

    for (const r of [polledNeighbour!, rereadNeighbour!, sentNeighbour!]) {
      expect(await row(r.id, 'notes')).toEqual({ notes: `neighbour ${String(r.id)}` });
    }
    const rejected = await h.warehouse.query(
      `SELECT run_id, reason, CAST(raw AS VARCHAR) AS raw FROM _evsync.rejected WHERE reason LIKE '%nested too deep%'`,
    );
    const byId = new Map(rejected.rows.map((r) => [JSON.parse(String(r.raw)).id as number, r]));
    expect([...byId.keys()].sort()).toEqual([polled!.id, reread1!.id, sent!.id].map(Number).sort());
    const reasons = new Set(rejected.rows.map((r) => String(r.reason)));
    expect([...reasons]).toEqual([
      'field "notes": cannot convert array of 1 to text (nested too deep to store as JSON)',
    ]);
    // The raw kept is the record, storable (its deep value cut at the documented depth), on every path.
    for (const r of rejected.rows) expect(String(r.raw)).toContain(TOO_DEEP);
    // The quarantined records keep the version stored before.
    for (const r of [polled!, reread1!, sent!]) expect(await row(r.id, 'notes')).toEqual({ notes: r.notes ?? null });
  });

  it('past the documented 256 levels, short of what JSON cannot write: the same outcome on every path', async () => {
    const [polled, reread1, sent] = registrantsOfOneEvent(3) as [Item, Item, Item];
    for (const r of [polled, reread1])
      planted.set(Number(r.id), (item) => Object.assign(item, { notes: PAST_256_MARK }));
    await poll();
    await post(reread(reread1));
    await post(payload(sent, { notes: PAST_256_MARK }));
    await h.capture.applier.idle();

    // What each path did with the record: its reason when quarantined, else the text stored.
    const outcome = async (id: unknown) => {
      const r = await h.warehouse.query(`SELECT reason FROM _evsync.rejected WHERE CAST(raw AS VARCHAR) LIKE ?`, [
        `{"id":${Number(id)},%`,
      ]);
      return r.rows.length > 0
        ? `quarantined: ${String(r.rows[0]!.reason)}`
        : `stored: ${String((await row(id, 'notes')).notes)}`;
    };
    const polledOutcome = await outcome(polled.id);
    // Today polling stores the JSON text (the 256-level cap applies to the raw kept of a quarantined record).
    expect(polledOutcome).toMatch(/^(quarantined: .*nested|stored: \[{300}"leaf"\]{300})$/);
    expect(await outcome(reread1.id)).toBe(polledOutcome);
    expect(await outcome(sent.id)).toBe(polledOutcome);
  });
});

describe('a field the catalogue does not declare', () => {
  it('becomes a column by webhook as by polling, of the same type; payloads then write it', async () => {
    const [polled, reread1, sent] = registrantsOfOneEvent(3) as [Item, Item, Item];
    planted.set(Number(polled.id), (item) => Object.assign(item, { seat_color: 'teal', seat_level: 3 }));
    planted.set(Number(reread1.id), (item) => Object.assign(item, { badge_color: 'teal', badge_level: 3 }));
    await poll();
    await post(reread(reread1));
    await h.capture.applier.idle();

    const columns = await h.warehouse.query(
      `SELECT column_name AS c, data_type AS t FROM information_schema.columns
        WHERE table_schema = 'main' AND table_name = 'registrants' AND (column_name LIKE 'seat_%' OR column_name LIKE 'badge_%')`,
    );
    const type = Object.fromEntries(columns.rows.map((r) => [String(r.c), String(r.t)]));
    expect(Object.keys(type).sort()).toEqual(['badge_color', 'badge_level', 'seat_color', 'seat_level']);
    expect([type.badge_color, type.badge_level]).toEqual([type.seat_color, type.seat_level]);
    expect(await row(reread1.id, 'badge_color, CAST(badge_level AS VARCHAR) AS badge_level')).toEqual({
      badge_color: 'teal',
      badge_level: '3',
    });
    expect(await row(polled.id, 'seat_color, CAST(seat_level AS VARCHAR) AS seat_level')).toEqual({
      seat_color: 'teal',
      seat_level: '3',
    });

    // From now on a payload carrying the new fields writes them, as a polled page of that record would.
    await post(payload(sent, { badge_color: 'plum', badge_level: 4 }));
    await h.capture.applier.idle();
    expect((await outcomes())[Number(sent.id)]).toBe('payload');
    expect(await row(sent.id, 'badge_color, CAST(badge_level AS VARCHAR) AS badge_level')).toEqual({
      badge_color: 'plum',
      badge_level: '4',
    });
  });
});

describe('the archive of every path', () => {
  it('rebuilds the same rows from what polling and webhooks brought: the deep records quarantined again, no request', async () => {
    await h.capture.applier.idle();
    const calls = JSON.stringify(h.sim.counters());
    const rejectedBefore = await h.warehouse.query(`SELECT count(*) AS n FROM _evsync.rejected`);
    const dry = await rebuild({ live: h.warehouse, streams: ['registrants'], dryRun: true });
    expect(dry.changes).toEqual([
      expect.objectContaining({ table: 'registrants', added: 0, changed: 0, removed: 0, columnsAdded: [] }),
    ]);
    expect(JSON.stringify(h.sim.counters())).toBe(calls);
    expect((await h.warehouse.query(`SELECT count(*) AS n FROM _evsync.rejected`)).rows).toEqual(rejectedBefore.rows);
  });
});
