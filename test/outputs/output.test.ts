/**
 * The readers' outputs (src/outputs): a touched partition collected in one shape, the export's selection read from
 * it, and the output named by `--out`/`--parquet-out` chosen once (a folder resolved from the working folder, the
 * lake, or refused).
 */
import { describe, expect, it } from 'vitest';
import { chooseOutput } from '../../src/outputs/output.js';
import { TouchedPartitions } from '../../src/outputs/partition.js';
import type { OutputSettings } from '../../src/outputs/settings.js';

const settings: OutputSettings = {
  cwd: '/work/here',
  db: '/work/here/evsync.duckdb',
  lake: {},
  account: 'default',
  env: {},
  now: () => Date.UTC(2026, 0, 1),
  log: () => {},
};

describe('TouchedPartitions', () => {
  it('a table touched whole is written whole; the others by their events, sorted', () => {
    const t = new TouchedPartitions();
    t.touch('sessions', [12, 10]);
    t.add({ table: 'events', eventId: null });
    t.touch('registrants', [11]);
    t.touch('registrants', 'all');
    t.touch('sessions', [10]);
    expect(t.selection()).toEqual({
      tables: ['events', 'registrants', 'sessions'],
      partitions: [{ table: 'sessions', eventIds: [10, 12] }],
    });
    expect(t.count()).toBe(4);
  });

  it('collects what a run wrote: pages with rows, items that loaded or marked deletes', () => {
    const t = new TouchedPartitions();
    t.onProgress({ type: 'page', stream: 'registrants', eventId: 10, rows: 0 });
    t.onProgress({ type: 'page', stream: 'registrants', eventId: 11, rows: 3 });
    t.onProgress({ type: 'item-done', stream: 'sessions', eventId: 12, rows: 0, deleted: 1 });
    t.onProgress({ type: 'item-done', stream: 'events', eventId: null, rows: 2, deleted: 0 });
    t.onProgress({ type: 'plan' });
    expect([...t.byStream].map(([table, ids]) => [table, [...ids]])).toEqual([
      ['registrants', [11]],
      ['sessions', [12]],
      ['events', [null]],
    ]);
  });

  it('addAll keeps what another set touched (a failed publish gives its batch back)', () => {
    const a = new TouchedPartitions();
    const b = new TouchedPartitions();
    a.touch('registrants', [1]);
    b.touch('registrants', [2]);
    b.touch('events', 'all');
    a.addAll(b);
    expect(a.selection()).toEqual({
      tables: ['events', 'registrants'],
      partitions: [{ table: 'registrants', eventIds: [1, 2] }],
    });
  });
});

describe('chooseOutput', () => {
  it('a folder is resolved from the working folder; s3:// is the lake', () => {
    const folder = chooseOutput('--parquet-out', 'parquet', settings);
    expect({ kind: folder.kind, where: folder.where }).toEqual({ kind: 'folder', where: '/work/here/parquet' });
    const lake = chooseOutput('--out', 's3://lake/evsync/', settings);
    expect({ kind: lake.kind, where: lake.where }).toEqual({ kind: 'lake', where: 's3://lake/evsync' });
  });

  it('refuses what names no output, said with the flag (refused: the user’s to fix)', () => {
    expect(() => chooseOutput('--parquet-out', 'gs://lake/evsync', settings)).toThrowError(
      expect.objectContaining({
        name: 'OutputError',
        verdict: 'refused',
        message: expect.stringContaining('--parquet-out: gs://lake/evsync is not a destination evsync can write'),
      }),
    );
  });
});
