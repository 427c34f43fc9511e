import { describe, expect, it } from 'vitest';
import { newRunId, type Warehouse } from '../../src/warehouse/index.js';
import { cursor, rows, tempWarehouseEach } from './helpers.js';

let w: Warehouse;
tempWarehouseEach((t) => {
  w = t.w;
});

describe('runs and credits', () => {
  it('records a run from start to finish', async () => {
    const id = await w.runs.start('sync', { streams: ['registrants'], signpost: '2024-05-01 00:00:00' });
    expect(id).toMatch(/^\d{8}T\d{6}Z-[0-9a-f]{6}$/);
    expect(await rows(w, `SELECT status, kind, CAST(args AS VARCHAR) AS args, pid FROM _evsync.runs`)).toEqual([
      {
        status: 'running',
        kind: 'sync',
        args: '{"streams":["registrants"],"signpost":"2024-05-01 00:00:00"}',
        pid: process.pid,
      },
    ]);
    await w.runs.recordCredits(id, {
      limit: 2000,
      remaining: 1930,
      resetAt: new Date('2024-05-01T00:10:00Z'),
      seenAt: new Date('2024-05-01T00:04:59.500Z'),
      spent: 70,
      detail: { spent: { list: 60, token: 1, other: 9 } },
    });
    await w.runs.finish(id, {
      status: 'partial',
      finishedAt: '2024-05-01T00:05:00.000Z',
      credits: { list: 60, token: 1 },
      requests: 7,
      waitsMs: 1500,
      rejected429: 1,
      streams: { registrants: { inserted: 5, updated: 1, deleted: 0, rejected: 0, pages: 6 } },
      error: 'budget reached',
    });
    expect(
      await rows(
        w,
        `SELECT run_id, status, finished_at, CAST(credits AS VARCHAR) AS credits, requests, waits_ms, rejected_429,
                streams->'registrants'->>'pages' AS pages, error FROM _evsync.runs`,
      ),
    ).toEqual([
      {
        run_id: id,
        status: 'partial',
        finished_at: '2024-05-01 00:05:00',
        credits: '{"list":60,"token":1}',
        requests: '7',
        waits_ms: '1500',
        rejected_429: '1',
        pages: '6',
        error: 'budget reached',
      },
    ]);
    expect(
      await rows(w, `SELECT run_id, recorded_at, credit_limit, remaining, reset_at, spent FROM _evsync.credits`),
    ).toEqual([
      {
        run_id: id,
        recorded_at: '2024-05-01 00:04:59.5',
        credit_limit: '2000',
        remaining: '1930',
        reset_at: '2024-05-01 00:10:00',
        spent: '70',
      },
    ]);
    await expect(
      w.runs.finish('nope', { status: 'done', credits: {}, requests: 0, waitsMs: 0, rejected429: 0, streams: {} }),
    ).rejects.toThrow(/no run nope/);
  });

  it('makes run ids unique and sortable by start time', () => {
    const a = newRunId(new Date('2024-01-01T00:00:00Z'));
    const b = newRunId(new Date('2024-01-01T00:00:01Z'));
    expect(a < b).toBe(true);
    const at = new Date('2024-01-01T00:00:00Z');
    expect(newRunId(at)).not.toBe(newRunId(at));
  });
});

describe('cursors', () => {
  it('round-trips cursor states, with and without an open walk', async () => {
    const open = cursor('registrants', 'event:7', {
      watermark: null,
      walk: {
        mode: 'incremental',
        walkId: 'w-1',
        from: '2024-04-01 00:00:00',
        to: '2024-05-01 00:00:00',
        lastKey: 9007199254740991,
        pages: 3,
        rows: 2500,
      },
      lastPages: 12,
    });
    const closed = cursor('events', 'account', {
      lastSweepAt: '2024-05-01 00:00:10',
      updatedAt: '2024-05-01T00:00:10Z',
    });
    await w.cursors.save(open);
    await w.cursors.save(closed);
    expect(await w.cursors.get('registrants', 'event:7')).toEqual(open);
    expect(await w.cursors.get('registrants', 'event:8')).toBeNull();
    expect(await w.cursors.list()).toEqual([closed, open]);
    const done = { ...open, walk: null, watermark: '2024-05-01 00:00:00', lastPages: 3 };
    await w.cursors.save(done);
    expect(await w.cursors.get('registrants', 'event:7')).toEqual(done);
  });
});

describe('query', () => {
  it('returns JSON-safe scalars: BIGINT, DECIMAL and TIMESTAMP as strings, lists as JSON text', async () => {
    const r = await w.query(
      `SELECT 9007199254740993::BIGINT AS big, 1.10::DECIMAL(12,2) AS money, TIMESTAMP '2024-01-01 10:00:00.123456' AS ts,
              [1, 2] AS list, {'a': 1} AS obj, 1.5::DOUBLE AS dbl, true AS flag, NULL AS nothing, ? AS p1, ? AS p2`,
      ['text', 42],
    );
    expect(r.columns).toEqual(['big', 'money', 'ts', 'list', 'obj', 'dbl', 'flag', 'nothing', 'p1', 'p2']);
    expect(r.rows).toEqual([
      {
        big: '9007199254740993',
        money: '1.10',
        ts: '2024-01-01 10:00:00.123456',
        list: '[1,2]',
        obj: '{"a":1}',
        dbl: 1.5,
        flag: true,
        nothing: null,
        p1: 'text',
        p2: '42',
      },
    ]);
  });

  it('counts current rows per stream table only', async () => {
    await w.query(`CREATE TABLE user_notes (a INTEGER)`);
    expect(await w.tableCounts()).toEqual({});
  });
});
