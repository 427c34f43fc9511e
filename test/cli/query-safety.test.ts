/**
 * `evsync query` never writes: every way out of a read-only query (COPY TO, ATTACH, INSTALL/LOAD, SET, EXPORT,
 * EXPLAIN ANALYZE, reading files) is tried against a real warehouse file, and the file's bytes are compared after.
 * Also the JSON form of values (numbers when exact, lists and JSON as JSON).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Warehouse } from '../../src/warehouse/index.js';
import { accountScope, eventScope, events, page, registrants } from '../warehouse/helpers.js';
import { run, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => void;
let db: string;
let other: string;
let env: Record<string, string>;

function hash(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

beforeAll(async () => {
  ({ dir, cleanup } = tempDir('evsync-query-'));
  db = join(dir, 'evsync.duckdb');
  const w = await Warehouse.open(db);
  await page(w, events, accountScope, [{ id: 10, name: 'Conf A', start_date: '2024-05-01' }]);
  await page(w, registrants, eventScope(10), [
    { id: 1, email: 'a@example.com', individual_gross: '120.50', session_ids: [1, 2] },
    { id: 2, email: 'b@example.com', individual_gross: '0.01', session_ids: [] },
  ]);
  await w.checkpoint();
  await w.close();
  // Another database a query could try to attach and change.
  other = join(dir, 'other.duckdb');
  const o = await Warehouse.open(other);
  await page(o, registrants, eventScope(10), [{ id: 7, email: 'o@example.com' }]);
  await o.checkpoint();
  await o.close();
  env = { EVSYNC_DB: db };
});
afterAll(() => cleanup());

describe('evsync query is read-only', () => {
  const escapes: [string, (d: string) => string, RegExp][] = [
    ['COPY TO over the warehouse', () => `copy (select 1) to '${db}' (format csv)`, /COPY is refused/],
    ['COPY TO elsewhere', (d) => `copy (select * from registrants) to '${join(d, 'leak.csv')}'`, /COPY is refused/],
    [
      'ATTACH another database and delete from it',
      () => `attach '${other}' as o (READ_WRITE); delete from o.registrants`,
      /ATTACH is refused \(statement 1 of 2\)/,
    ],
    ['INSTALL an extension', () => 'install httpfs', /INSTALL\/LOAD is refused/],
    ['LOAD an extension', () => 'load httpfs', /INSTALL\/LOAD is refused/],
    ['SET enable_external_access', () => 'set enable_external_access = true', /SET\/RESET\/USE is refused/],
    ['PRAGMA a profiling file', (d) => `pragma profile_output='${join(d, 'prof.json')}'`, /PRAGMA is refused/],
    ['PRAGMA database_list (DuckDB runs it as a SELECT)', () => 'pragma database_list', /PRAGMA is refused/],
    ['CALL a pragma function', () => 'call pragma_version()', /CALL is refused/],
    ['EXPORT DATABASE', (d) => `export database '${join(d, 'exported')}'`, /EXPORT is refused/],
    ['IMPORT DATABASE', (d) => `import database '${d}'`, /IMPORT is refused/],
    ['CREATE TABLE', () => 'create table t as select 1 as x', /CREATE is refused/],
    ['DELETE', () => 'delete from registrants', /DELETE is refused/],
    ['a DELETE behind WITH', () => 'with x as (select 1) delete from registrants', /DELETE is refused/],
    [
      'a write hidden after a SELECT',
      (d) => `select 1; copy (select 1) to '${join(d, 'x.csv')}'`,
      /COPY is refused \(statement 2 of 2\)/,
    ],
    [
      'a COPY after a string and a comment that hold semicolons',
      (d) => `select 'a;b' /* ; */; -- ;\ncopy (select 1) to '${join(d, 'x.csv')}'`,
      /COPY is refused \(statement 2 of 2\)/,
    ],
    [
      'a SET hidden after a SELECT',
      () => 'select 1; set threads = 1',
      /SET\/RESET\/USE is refused \(statement 2 of 2\)/,
    ],
    [
      'EXPLAIN ANALYZE of a COPY over the warehouse',
      () => `explain analyze copy (select 1) to '${db}' (format csv)`,
      /EXPLAIN COPY is refused/,
    ],
    ['reading a file', (d) => `select * from read_text('${join(d, 'other.duckdb')}')`, /--allow-read/],
  ];

  it.each(escapes)('refuses %s, says why, and leaves every file as it was', async (_what, sqlOf, message) => {
    const before = { db: hash(db), other: hash(other) };
    const r = await run(['query', sqlOf(dir)], { cwd: dir, env });
    expect(r.code, r.stdout).not.toBe(0);
    expect(r.stderr).toMatch(message);
    // Refused by evsync, not by DuckDB: none of DuckDB's own errors is in the message.
    if (message.source.includes('is refused')) expect(r.stderr).not.toMatch(/Permission Error|Binder Error|Parser/);
    expect(r.stdout).toBe('');
    expect(hash(db)).toBe(before.db);
    expect(hash(other)).toBe(before.other);
    for (const f of ['leak.csv', 'x.csv', 'prof.json', 'exported', 'evsync.duckdb.tmp']) {
      expect(existsSync(join(dir, f)), f).toBe(false);
    }
  });

  it("a refused statement exits 1 with evsync's own message, said once; a syntax error exits 1 too", async () => {
    const r = await run(['query', 'delete from registrants'], { cwd: dir, env });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'error: DELETE is refused: queries are read-only (SELECT, WITH, FROM, VALUES, TABLE, DESCRIBE, SHOW, SUMMARIZE, PIVOT, UNPIVOT, EXPLAIN) and never write a file or change a database\n',
    );
    const several = await run(['query', "select ';'; /* ; */ select 2; pragma version"], { cwd: dir, env });
    expect(several.code).toBe(1);
    expect(several.stderr).toContain('error: PRAGMA is refused (statement 3 of 3): queries are read-only (');
    // A word that starts no statement evsync knows is refused as well; a reading statement DuckDB cannot parse
    // gets DuckDB's syntax error.
    const typo = await run(['query', 'selec 1'], { cwd: dir, env });
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain('a statement starting with "selec" is refused');
    const syntax = await run(['query', 'select 1 +'], { cwd: dir, env });
    expect(syntax.code).toBe(1);
    expect(syntax.stderr).toMatch(/syntax error/i);
  });

  it('what evsync refuses never reaches DuckDB: no folder created, no imported SQL run (--allow-read)', async () => {
    // DuckDB alone binds EXPORT DATABASE while preparing it, creating its folder, before any type check can refuse
    // it; and IMPORT DATABASE runs the SQL of the folder's schema.sql while DuckDB merely splits the text.
    const folder = join(dir, 'importable');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'schema.sql'), 'select 42 as imported;\n');
    writeFileSync(join(folder, 'load.sql'), '');
    const before = hash(db);
    const exported = await run(['query', `export database '${join(folder, 'exp')}'`, '--allow-read', folder], {
      cwd: dir,
      env,
    });
    expect(exported.code).toBe(1);
    expect(exported.stderr).toContain('error: EXPORT is refused: queries are read-only (');
    expect(existsSync(join(folder, 'exp'))).toBe(false);
    const imported = await run(['query', `import database '${folder}'`, '--allow-read', folder, '--json'], {
      cwd: dir,
      env,
    });
    expect(imported.code).toBe(1);
    expect(imported.stderr).toContain('error: IMPORT is refused: queries are read-only (');
    expect(imported.stdout).toBe('');
    const copied = await run(['query', `copy registrants to '${join(folder, 'c.csv')}'`, '--allow-read', folder], {
      cwd: dir,
      env,
    });
    expect(copied.stderr).toContain('error: COPY is refused: queries are read-only (');
    expect(readdirSync(folder).sort()).toEqual(['load.sql', 'schema.sql']);
    expect(hash(db)).toBe(before);
  });

  it('--allow-read lets a query read files in that folder only, and still writes nothing there', async () => {
    const data = join(dir, 'data');
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'mine.csv'), 'id,label\n1,one\n2,two\n');
    writeFileSync(join(dir, 'outside.csv'), 'id\n1\n');
    const before = hash(db);
    const ok = await run(
      ['query', `select count(*) as n from read_csv('${join(data, 'mine.csv')}')`, '--allow-read', data, '--json'],
      { cwd: dir, env },
    );
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual([{ n: 2 }]);

    const outside = await run(
      ['query', `select * from read_csv('${join(dir, 'outside.csv')}')`, '--allow-read', data],
      {
        cwd: dir,
        env,
      },
    );
    expect(outside.code).toBe(1);
    expect(outside.stderr).toContain(`files under ${data}`);

    // An allowed folder admits writes in DuckDB: the statement check is what refuses them.
    const copy = await run(['query', `copy (select 1) to '${join(data, 'w.csv')}'`, '--allow-read', data], {
      cwd: dir,
      env,
    });
    expect(copy.stderr).toMatch(/COPY is refused/);
    const explained = await run(
      ['query', `explain analyze copy (select 1) to '${data}/../evsync.duckdb' (format csv)`, '--allow-read', data],
      { cwd: dir, env },
    );
    expect(explained.code).toBe(1);
    expect(explained.stderr).toContain(
      'EXPLAIN is refused: queries are read-only (SELECT, WITH, FROM, VALUES, TABLE, DESCRIBE, SHOW, SUMMARIZE, PIVOT, UNPIVOT; EXPLAIN only without --allow-read)',
    );
    expect(existsSync(join(data, 'w.csv'))).toBe(false);
    expect(hash(db)).toBe(before);

    const missing = await run(['query', 'select 1', '--allow-read', join(dir, 'nope')], { cwd: dir, env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--allow-read');
  });

  it('plain EXPLAIN and DESCRIBE still work without --allow-read', async () => {
    const r = await run(['query', 'explain select count(*) from registrants', '--format', 'csv'], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    const d = await run(['query', 'describe registrants', '--format', 'csv'], { cwd: dir, env });
    expect(d.code, d.stderr).toBe(0);
    expect(d.stdout).toContain('session_ids,BIGINT[]');
  });
});

describe('evsync query --format json', () => {
  it('gives numbers as numbers when a double holds them exactly, else exact strings; lists and JSON as JSON', async () => {
    const sql = `SELECT 42::BIGINT AS small, 9007199254740993::BIGINT AS big, 12.50::DECIMAL(12,2) AS money,
      12345678901234567.8901::DECIMAL(38,4) AS wide, 170141183460469231731687303715884105727::HUGEINT AS huge,
      [1, 2]::BIGINT[] AS ids, {'a': 1::BIGINT, 'b': 2.5::DECIMAL(4,1)} AS s, '{"x": [1, "y"]}'::JSON AS j,
      NULL AS nothing`;
    const r = await run(['query', sql, '--format', 'json'], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([
      {
        small: 42,
        big: '9007199254740993',
        money: 12.5,
        wide: '12345678901234567.8901',
        huge: '170141183460469231731687303715884105727',
        ids: [1, 2],
        s: { a: 1, b: 2.5 },
        j: { x: [1, 'y'] },
        nothing: null,
      },
    ]);
    // Table and CSV keep DuckDB's exact text for numbers; nested values print as JSON.
    const csv = await run(['query', sql, '--format', 'csv'], { cwd: dir, env });
    expect(csv.stdout.split('\n')[1]).toBe(
      '42,9007199254740993,12.50,12345678901234567.8901,170141183460469231731687303715884105727,"[1,2]","{""a"":1,""b"":2.5}","{""x"": [1, ""y""]}",',
    );
  });

  it('reads warehouse columns the same way (BIGINT[] as a JSON array, DECIMAL money as a number)', async () => {
    const r = await run(
      ['query', 'select id, individual_gross, session_ids from registrants order by id', '--format', 'json'],
      { cwd: dir, env },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([
      { id: 1, individual_gross: 120.5, session_ids: [1, 2] },
      { id: 2, individual_gross: 0.01, session_ids: [] },
    ]);
  });
});
