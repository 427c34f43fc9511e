/**
 * A rebuild whose archive holds a page it cannot read (a spool file damaged on disk), against the simulator: the
 * rebuild fails at that page's op, naming its entry and op, after committing every op before it (while the next
 * page's body is parsed ahead of its turn); the live tables are as they were; the scratch is kept, and a rebuild
 * run again once the entry is whole again resumes after the last op committed and ends equal, with no request.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSync } from '../../src/sync/index.js';
import { rebuild } from '../../src/sync/rebuild/rebuild.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { tablesAsText } from '../helpers/tables-text.js';

let h: Harness;

/** The spool file of an archive entry (the warehouse still open: its entries are in the spool). */
function spoolFile(entry: number): string {
  const spool = join(`${h.dbPath}.archive`, 'spool');
  for (const gen of readdirSync(spool)) {
    const name = `${String(entry).padStart(12, '0')}.json`;
    if (readdirSync(join(spool, gen)).includes(name)) return join(spool, gen, name);
  }
  throw new Error(`entry ${entry} is not in the spool`);
}

beforeAll(async () => {
  h = await startHarness({ seed: 12 });
  const run = await runSync(h.client(), h.warehouse, { mode: 'backfill', streams: 'events,registrants' });
  expect(run.status).toBe('done');
}, 120_000);

afterAll(async () => {
  await h?.close();
});

describe('a rebuild that meets an archived page it cannot read', () => {
  it('fails at that op, keeps what came before for a resume, and changes nothing live', async () => {
    const pages = await h.warehouse.query(
      `SELECT seq, entry FROM _evsync.archive_ops WHERE kind = 'page' AND stream = 'registrants' AND entry IS NOT NULL
        ORDER BY seq`,
    );
    expect(pages.rows.length).toBeGreaterThan(2);
    const bad = pages.rows[1] as { seq: string; entry: string };
    const file = spoolFile(Number(bad.entry));
    const whole = readFileSync(file);
    writeFileSync(file, whole.subarray(0, Math.floor(whole.length / 2)));

    const before = await tablesAsText(h.warehouse);
    const calls = JSON.stringify(h.sim.counters());
    const failed = rebuild({ live: h.warehouse, streams: ['registrants'], dryRun: false, window: 4 });
    await expect(failed).rejects.toThrow(
      new RegExp(`archive entry ${bad.entry} of op ${bad.seq} \\(registrants, .*\\) cannot be read`),
    );
    expect(await tablesAsText(h.warehouse)).toEqual(before);
    expect(existsSync(`${h.dbPath}.rebuild`)).toBe(true);

    // The entry whole again: the rebuild resumes after the last op the scratch committed, and ends equal.
    writeFileSync(file, whole);
    const done = await rebuild({ live: h.warehouse, streams: ['registrants'], dryRun: false });
    expect(done.resumed).toBe(true);
    // Every page from the damaged one on, and none before it.
    expect(done.replayed.pages).toBe(pages.rows.length - 1);
    expect(await tablesAsText(h.warehouse)).toEqual(before);
    expect(JSON.stringify(h.sim.counters())).toBe(calls);
  });
});
