/**
 * A service that writes its JSON answers ASCII-only (every non-ASCII character as a `\uXXXX` escape, as Python's
 * `json.dumps` does by default; the simulator's `ascii-json`): against the simulator, a backfill loads the same
 * rows as from the same service writing UTF-8; the archive keeps its list pages as the answers themselves (their
 * escapes are of characters no held credential has, so the text scrub is sound on them); a rebuild from that
 * archive gives the tables back with no request. An answer whose escapes spell a held credential is kept as its
 * records, scrubbed value by value, and neither the archive nor the table holds the credential.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgetSecret, registerSecret } from '../../src/api/redact.js';
import { runSync } from '../../src/sync/index.js';
import { rebuild } from '../../src/sync/rebuild/rebuild.js';
import type { Warehouse } from '../../src/warehouse/index.js';
import { archivedTexts } from '../helpers/archive.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { tablesAsText } from '../helpers/tables-text.js';

const STREAMS = 'events,registrants,contacts';
let ascii: Harness;
let plain: Harness;

/** Every stream table's rows without the columns a sync stamps (time and run): what the service's data made. */
async function dataRows(w: Warehouse): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of await w.listTables()) {
    const r = await w.query(
      `SELECT CAST(to_json(t) AS VARCHAR) AS r FROM (SELECT * EXCLUDE ("_synced_at", "_run_id") FROM main."${table}") t ORDER BY r`,
    );
    out[table] = r.rows.map((row) => String(row.r));
  }
  return out;
}

beforeAll(async () => {
  ascii = await startHarness({ seed: 3, faults: { asciiJson: true } });
  plain = await startHarness({ seed: 3 });
  for (const h of [ascii, plain]) {
    const run = await runSync(h.client(), h.warehouse, { mode: 'backfill', streams: STREAMS });
    expect(run.status).toBe('done');
  }
}, 120_000);

afterAll(async () => {
  await ascii?.close();
  await plain?.close();
});

describe('a service that escapes every non-ASCII character', () => {
  it('loads the rows the same service writing UTF-8 gives', async () => {
    const rows = await dataRows(ascii.warehouse);
    expect(rows.registrants?.length).toBeGreaterThan(50);
    // The data has non-ASCII names (Zoë, José...): they arrived escaped and were stored decoded.
    expect(rows.registrants?.some((r) => /[^\x00-\x7f]/.test(r))).toBe(true);
    expect(rows).toEqual(await dataRows(plain.warehouse));
  });

  it('keeps the list pages as the answers, escapes and all, with no secret in the archive', async () => {
    const texts = await archivedTexts(ascii.dbPath);
    const answers = texts.filter((t) => t.startsWith('{"quarantinedAt":'));
    expect(answers.length).toBeGreaterThan(5);
    expect(answers.some((t) => /\\u00[89a-f][0-9a-f]/.test(t))).toBe(true);
    expect(texts.some((t) => t.startsWith('{"records":'))).toBe(false);
    const account = ascii.sim.accounts[0]!;
    for (const text of texts) {
      for (const secret of [account.clientSecret, account.encoded]) expect(text.includes(secret)).toBe(false);
    }
  });

  it('rebuilds the tables equal from that archive, with no request', async () => {
    const before = await tablesAsText(ascii.warehouse);
    const calls = JSON.stringify(ascii.sim.counters());
    const done = await rebuild({ live: ascii.warehouse, streams: null, dryRun: false });
    expect(done.applied).toBe(true);
    expect(done.replayed.pages).toBeGreaterThan(5);
    expect(await tablesAsText(ascii.warehouse)).toEqual(before);
    expect(JSON.stringify(ascii.sim.counters())).toBe(calls);
  });
});

describe('an answer whose escapes spell a held credential', () => {
  it('is archived as its records, scrubbed: the credential is in no archived text, decoded or not, nor in the table', async () => {
    const h = await startHarness({ seed: 4 });
    try {
      const secret = 'escaped-credential-0123456789';
      registerSecret(secret);
      const spelled = [...secret].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
      let rewritten = 0;
      const { client } = await h.proxied({
        rewrite: (path, body) => {
          if (!path.startsWith('/registrants') || rewritten > 0 || !body.includes('"notes":""')) return null;
          rewritten += 1;
          // The first empty notes of the page get the credential, spelled in escapes only.
          return body.replace('"notes":""', `"notes":"see ${spelled}"`);
        },
      });
      const run = await runSync(client, h.warehouse, { mode: 'backfill', streams: 'events,registrants' });
      expect(run.status).toBe('done');
      expect(rewritten).toBe(1);
      const texts = await archivedTexts(h.dbPath);
      // The page with the spelled credential is kept as its records (in the spool file and read back), scrubbed.
      const records = texts.filter((t) => t.startsWith('{"records":'));
      expect(records.length).toBeGreaterThan(0);
      for (const text of records) expect(text).toContain('"notes":"see [REDACTED]"');
      expect(texts.some((t) => t.startsWith('{"quarantinedAt":') && t.includes('"notes":"see'))).toBe(false);
      let decoded = 0;
      for (const text of texts) {
        expect(text.includes(secret)).toBe(false);
        expect(text.includes(spelled)).toBe(false);
        // An entry's body is one JSON value: decoded, its escapes spell nothing held either (a spool file is not).
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          continue;
        }
        decoded += 1;
        expect(JSON.stringify(value).includes(secret)).toBe(false);
      }
      expect(decoded).toBeGreaterThan(1);
      const notes = await h.warehouse.query(`SELECT notes FROM main.registrants WHERE notes LIKE 'see %'`);
      expect(notes.rows).toEqual([{ notes: 'see [REDACTED]' }]);
    } finally {
      forgetSecret('escaped-credential-0123456789');
      await h.close();
    }
  });
});
