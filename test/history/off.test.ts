/**
 * `streams.<name>.history: false` (issue 37): read from evsync.config.json (or refused, naming the key); a sync with
 * it keeps no version of that stream's records and makes no `history` view of it, other streams keep theirs, and
 * a later sync without it keeps versions again (what was kept stays).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/cli/config.js';
import { runSync } from '../../src/sync/index.js';
import type { SyncOptions } from '../../src/sync/types.js';
import { tempDir, writeConfig } from '../cli/helpers.js';
import { type Harness, startHarness } from '../helpers/harness.js';

describe('history: false in evsync.config.json', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir());
  });
  afterEach(() => cleanup());
  const read = () => resolveConfig({}, {}, dir).values;

  it('is read as written, and refused when not a boolean', () => {
    writeConfig(dir, { streams: { registrants: { history: false } } });
    expect(read().streams?.registrants?.history).toBe(false);
    writeConfig(dir, { streams: { registrants: { history: 'no' } } });
    expect(read).toThrow('streams.registrants.history: expected true or false');
  });
});

describe('a stream whose history is off', () => {
  let h: Harness;
  /** Versions kept of registrants (none while `_history.registrants` was never made). */
  const kept = async () => {
    const made = await h.warehouse.query(
      `SELECT count(*) AS n FROM duckdb_tables() WHERE schema_name = '_history' AND table_name = 'registrants'`,
    );
    if (Number(made.rows[0]?.n) === 0) return 0;
    return Number((await h.warehouse.query(`SELECT count(*) AS n FROM _history.registrants`)).rows[0]?.n ?? 0);
  };
  const views = async () =>
    (
      await h.warehouse.query(
        `SELECT view_name AS v FROM duckdb_views() WHERE schema_name = 'history' AND NOT internal ORDER BY 1`,
      )
    ).rows.map((r) => String(r.v));
  const sync = async (o: Partial<SyncOptions>) => {
    const r = await runSync(h.client(), h.warehouse, {
      mode: 'incremental',
      streams: 'events,registrants',
      lagSeconds: 0,
      pastEventPollHours: 0,
      ...o,
    });
    expect(r.status).toBe('done');
    await h.warehouse.buildAnalyticsViews();
  };
  const off = { overrides: { registrants: { history: false } } };

  beforeAll(async () => {
    h = await startHarness({ size: 'tiny', seed: 29, rateLimit: { credits: 1_000_000, windowSeconds: 600 } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('keeps no version and has no view while off; keeps versions again once on', async () => {
    await sync({ mode: 'backfill', ...off });
    expect(await h.warehouse.historyOff()).toEqual(['registrants']);
    h.sim.advanceClock(30);
    const changed = h.sim.mutate(20, { streams: ['registrants', 'events'] });
    expect(changed.updated.registrants ?? 0).toBeGreaterThan(0);
    h.sim.advanceClock(30);
    await sync(off);
    expect(await kept()).toBe(0);
    expect((await h.warehouse.historyStatus()).off).toEqual(['registrants']);
    expect(await views()).not.toContain('registrants');
    expect(await views()).toContain('events');

    await sync({});
    expect(await h.warehouse.historyOff()).toEqual([]);
    h.sim.advanceClock(30);
    h.sim.mutate(20, { streams: ['registrants'] });
    h.sim.advanceClock(30);
    await sync({});
    expect(await kept()).toBeGreaterThan(0);
    expect(await h.warehouse.historyStatus()).toEqual({
      kept: expect.objectContaining({ registrants: await kept() }),
      off: [],
    });
    expect(await views()).toContain('registrants');
  });
});
