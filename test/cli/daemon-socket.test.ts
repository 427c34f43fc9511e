/**
 * The daemon's socket, in-process: one database file has one socket whatever path names it (a link to the file,
 * a link to its folder, a relative path), and the client reads answers as large as the daemon's query service
 * allows and no larger (one constant for both; the daemon refuses an answer its client would not read).
 */
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUERY_RESULT_MAX_CHARS } from '../../src/daemon/query-settings.js';
import { askDaemon, MAX_ANSWER_CHARS, socketPathFor, startDaemonSocket } from '../../src/daemon/socket.js';
import { tempDir } from './helpers.js';

let dir: string;
let cleanup: () => void;
let real: string;

beforeAll(() => {
  ({ dir, cleanup } = tempDir('evsync-sock-'));
  mkdirSync(join(dir, 'real'));
  real = join(dir, 'real', 'w.duckdb');
  writeFileSync(real, '');
  symlinkSync(real, join(dir, 'link.duckdb'));
  symlinkSync(join(dir, 'real'), join(dir, 'alias'));
});
afterAll(() => cleanup());

describe('the socket follows the resolved warehouse path', () => {
  it('names one socket for the file whatever path names it', () => {
    const expected = `${realpathSync(real)}.sock`;
    expect(socketPathFor(real)).toBe(expected);
    expect(socketPathFor(join(dir, 'link.duckdb'))).toBe(expected);
    expect(socketPathFor(join(dir, 'alias', 'w.duckdb'))).toBe(expected);
    expect(socketPathFor(relative(process.cwd(), real))).toBe(expected);
    // A file not there yet (no daemon can hold it): its folder resolved, the name kept.
    expect(socketPathFor(join(dir, 'alias', 'new.duckdb'))).toBe(`${realpathSync(join(dir, 'real'))}/new.duckdb.sock`);
    expect(socketPathFor(join(dir, 'nowhere', 'x.duckdb'))).toBe(`${join(dir, 'nowhere', 'x.duckdb')}.sock`);
  });

  it('a client asking through a link reaches the daemon listening on the real path', async () => {
    const socket = await startDaemonSocket(real, async (request) => ({ answered: request.op }));
    try {
      expect(await askDaemon(join(dir, 'link.duckdb'), { op: 'status', runs: 1 })).toEqual({
        ok: true,
        result: { answered: 'status' },
      });
      expect(await askDaemon(join(dir, 'alias', 'w.duckdb'), { op: 'status', runs: 1 })).toMatchObject({ ok: true });
    } finally {
      await socket.close();
    }
  });
});

describe('answers as large as the query service allows', () => {
  it("the client's bound follows the service's, with a little headroom", () => {
    expect(MAX_ANSWER_CHARS).toBeGreaterThan(QUERY_RESULT_MAX_CHARS);
    // "A little headroom" for the envelope and the column list: not the 256 MB the client once read.
    expect(MAX_ANSWER_CHARS).toBeLessThanOrEqual(QUERY_RESULT_MAX_CHARS * 1.1);
  });

  it('reads a result at the service bound whole; an answer past the client bound is refused by the daemon', async () => {
    // Rows as the service counts them (each row's JSON and a separator): exactly at its bound.
    const row = { s: 'x'.repeat(1024 * 1024 - 9) };
    const rows = Array.from({ length: QUERY_RESULT_MAX_CHARS / (JSON.stringify(row).length + 1) }, () => row);
    const atBound = { columns: [{ name: 's', type: 'VARCHAR' }], rows };
    const socket = await startDaemonSocket(real, async (request) =>
      request.op === 'query' ? atBound : { columns: [], rows: ['y'.repeat(MAX_ANSWER_CHARS)] },
    );
    try {
      const read = await askDaemon(real, { op: 'query', sql: 'select', form: 'json', allowRead: [] });
      expect(read?.ok).toBe(true);
      expect(read?.ok && (read.result as typeof atBound).rows.length).toBe(rows.length);
      const tooLarge = await askDaemon(real, { op: 'status', runs: 1 });
      expect(tooLarge).toEqual({
        ok: false,
        error: `the answer is larger than ${Math.round(MAX_ANSWER_CHARS / 1048576)} MB (its column names and types too): select fewer columns, or write it with \`evsync export\` (Parquet) instead`,
      });
    } finally {
      await socket.close();
    }
  });
});
