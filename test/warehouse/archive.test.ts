/**
 * The archive's files (issue 36): entries read back from the spool and from the Parquet segments a roll-up makes;
 * a roll-up killed after its segment was in place (the spool not yet removed) or before (temporary files left) is
 * finished by the next one with no entry lost or doubled; a prune removes whole segments older than a date, and
 * entry numbers are never given again after it.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Archive, type EntryMeta } from '../../src/warehouse/index.js';

let dir: string;
let db: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'evsync-archive-'));
  db = join(dir, 'w.duckdb');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function meta(at: string, rows = 1): EntryMeta {
  return {
    kind: 'page',
    stream: 'registrants',
    account: 'c@http://x',
    runId: 'r1',
    at,
    serverDate: null,
    request: { page: 1 },
    rows,
  };
}

const body = (i: number) => JSON.stringify({ records: [{ id: i, note: 'x'.repeat(i % 50) }] });

describe('the archive', () => {
  it('gives back every body from the spool and from its segments, and counts them', async () => {
    const a = Archive.open(db);
    const entries = [1, 2, 3].map((i) => a.append(meta(`2026-01-0${i} 00:00:00.000`), body(i)));
    expect(entries).toEqual([1, 2, 3]);
    expect(await a.bodies(entries)).toEqual(new Map(entries.map((e) => [e, body(e)])));
    await a.rollUp();
    expect(existsSync(join(a.dir, 'spool', 'g000000001'))).toBe(false);
    const more = a.append(meta('2026-01-04 00:00:00.000'), body(4));
    expect(await a.bodies([1, 3, more])).toEqual(new Map([1, 3, more].map((e) => [e, body(e)])));
    expect(await a.stats()).toMatchObject({
      entries: 4,
      since: '2026-01-01 00:00:00',
      latest: '2026-01-04 00:00:00',
      spooled: 1,
    });
    await a.close();
    const again = Archive.open(db);
    expect(again.append(meta('2026-01-05 00:00:00.000'), body(5))).toBe(5);
    expect((await again.bodies([1, 2, 3, 4, 5])).size).toBe(5);
    await again.close();
  });

  it('finishes a roll-up killed after its segment was in place, or before: nothing lost, nothing doubled', async () => {
    const a = Archive.open(db);
    for (let i = 1; i <= 3; i++) a.append(meta('2026-01-01 00:00:00.000'), body(i));
    // The spool as it was before the roll-up, put back after it: a kill between the segment's rename and the spool's removal.
    const saved = join(dir, 'saved');
    cpSync(join(a.dir, 'spool'), saved, { recursive: true });
    await a.close();
    cpSync(saved, join(a.dir, 'spool'), { recursive: true });
    // And temporary files of a later roll-up killed before its rename.
    writeFileSync(join(a.dir, 'segments', '000000009-000000000009.pages.parquet.tmp'), 'partial');

    const b = Archive.open(db);
    expect(b.append(meta('2026-01-02 00:00:00.000'), body(4))).toBe(4);
    await b.close();
    const segments = readdirSync(join(b.dir, 'segments')).filter((f) => f.endsWith('.pages.parquet'));
    expect(segments).toHaveLength(2);
    expect(readdirSync(join(b.dir, 'segments')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    const c = Archive.open(db);
    expect(await c.bodies([1, 2, 3, 4])).toEqual(new Map([1, 2, 3, 4].map((e) => [e, body(e)])));
    expect((await c.stats()).entries).toBe(4);
    await c.close();
  });

  it('prunes whole segments older than a date; entry numbers are not given again', async () => {
    const a = Archive.open(db);
    a.append(meta('2026-01-01 00:00:00.000'), body(1));
    a.append(meta('2026-01-02 00:00:00.000'), body(2));
    await a.rollUp();
    a.append(meta('2026-03-01 00:00:00.000'), body(3));
    expect(await a.prune('2026-02-01 00:00:00')).toMatchObject({ entries: 2, kept: 1 });
    expect(a.pruned()).toEqual({ before: '2026-02-01 00:00:00', through: 2 });
    expect(await a.bodies([1, 2, 3])).toEqual(new Map([[3, body(3)]]));
    await a.close();
    const b = Archive.open(db);
    expect(b.append(meta('2026-03-02 00:00:00.000'), body(4))).toBe(4);
    expect(await b.prune('2030-01-01 00:00:00')).toMatchObject({ entries: 2, kept: 0 });
    await b.close();
    const c = Archive.open(db);
    expect(c.append(meta('2030-02-01 00:00:00.000'), body(5))).toBe(5);
    await c.close();
  });
});
