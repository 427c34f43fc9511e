/**
 * evsync's own reading of query text (sql-tokens.ts, statement-check.ts): statements split where DuckDB splits
 * them, judged by their first keyword wherever comments, strings, identifiers and parentheses put it. Checked by
 * hand on the tricky cases, then against DuckDB's own parser: on generated text, wherever DuckDB reads the text,
 * it finds as many statements as evsync, and nothing evsync lets through is a statement DuckDB types as a write.
 */
import { DuckDBConnection, DuckDBInstance, StatementType } from '@duckdb/node-api';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { splitStatements } from '../../src/warehouse/db/sql-tokens.js';
import { readOnlyReason, statementRefusal } from '../../src/warehouse/db/statement-check.js';

const NO_FOLDER = { explain: true };
const FOLDERS = { explain: false };

/** The statements as evsync reads them: each one's tokens joined by spaces. */
function split(sql: string): string[] {
  return splitStatements(sql).map((tokens) => tokens.map((t) => t.text).join(' '));
}

function refused(sql: string, rules = NO_FOLDER): string | null {
  const message = statementRefusal(sql, rules);
  if (message === null) return null;
  // The part before the reason: "<WHAT> is refused (statement i of n)".
  return message.replace(`: ${readOnlyReason(rules)}`, '');
}

describe('splitting into statements', () => {
  it('splits at top-level semicolons and drops empty statements (DuckDB counts none for them either)', () => {
    expect(split('select 1; select 2')).toEqual(['select 1', 'select 2']);
    expect(split(';;select 1;; ;\n;select 2;')).toEqual(['select 1', 'select 2']);
    expect(split('')).toEqual([]);
    expect(split(' ; -- nothing\n ; /* nothing */ ;')).toEqual([]);
  });

  it('keeps semicolons inside strings, with doubled quotes', () => {
    expect(split("select 'a;b'; select 2")).toEqual(["select 'a;b'", 'select 2']);
    expect(split("select 'it''s; copy'; select 2")).toEqual(["select 'it''s; copy'", 'select 2']);
    expect(split("select ''';'''; select 2")).toEqual(["select ''';'''", 'select 2']);
  });

  it("reads backslash escapes only in E'' strings, which start only where a token starts", () => {
    // A plain string ends at the quote after the backslash; an E string does not.
    expect(split("select 'a\\'; copy t to 'x'")).toEqual(["select 'a\\'", "copy t to 'x'"]);
    expect(split("select E'a\\'; copy t to x'")).toEqual(["select E'a\\'; copy t to x'"]);
    expect(split("select e'\\\\'; select 2")).toEqual(["select e'\\\\'", 'select 2']);
    // `xe'...'` is the word xe and a plain string; after a number, e' starts an E string (DuckDB: both measured).
    expect(split("select xe'\\'; select 2")).toEqual(["select xe '\\'", 'select 2']);
    expect(split("select 1e'\\'; select 2'")).toEqual(["select 1 e'\\'; select 2'"]);
  });

  it('keeps semicolons inside quoted identifiers, with doubled quotes', () => {
    expect(split('select 1 as "a;b"; select 2')).toEqual(['select 1 as "a;b"', 'select 2']);
    expect(split('select 1 as """;"""; select 2')).toEqual(['select 1 as """;"""', 'select 2']);
  });

  it('skips line comments to the end of the line, and block comments, which nest', () => {
    expect(split('select 1 -- ; copy t to x\n; select 2')).toEqual(['select 1', 'select 2']);
    expect(split('select 1 -- ; copy\r; select 2')).toEqual(['select 1', 'select 2']);
    expect(split('select /* ; copy */ 1; select 2')).toEqual(['select 1', 'select 2']);
    expect(split('select /* a /* ; */ ; copy t to x */ 1')).toEqual(['select 1']);
    expect(split('select /* //* */ ; */ 1')).toEqual(['select 1']);
    expect(split('select /* /*/ */ ; */ 1')).toEqual(['select 1']);
    expect(split("select /* ' */ 1; select '/*'")).toEqual(['select 1', "select '/*'"]);
    expect(split("select '--'; select 2")).toEqual(["select '--'", 'select 2']);
    expect(split('select 4 //* c */ 2')).toEqual(['select 4 / 2']);
  });

  it('keeps semicolons inside dollar-quoted strings, closed only by the same tag', () => {
    expect(split('select $$a;b$$; select 2')).toEqual(['select $$a;b$$', 'select 2']);
    expect(split('select $t$ $$ ; $u$ ; $t$; select 2')).toEqual(['select $t$ $$ ; $u$ ; $t$', 'select 2']);
    expect(split("select $_x1$ '; $_x1$; select 2")).toEqual(["select $_x1$ '; $_x1$", 'select 2']);
    // `$` continues a word: `a$b$` is an identifier, and the semicolon after it is a statement's end.
    expect(split('select 1 as a$b$; select $b$')).toEqual(['select 1 as a$b$', 'select $b$']);
    // Parameters are no quotes: `$1` then the dollar quote `$x$`.
    expect(split('select $1$x$;$x$; select 2')).toEqual(['select $1 $x$;$x$', 'select 2']);
    expect(split('select $name; select 2')).toEqual(['select $name', 'select 2']);
    // After a number a dollar quote starts (DuckDB: `1$a$;...` is 1 and a string).
    expect(split('select 1$a$;select 2$a$')).toEqual(['select 1 $a$;select 2$a$']);
  });

  it('runs an unterminated string or comment to the end (DuckDB refuses the text)', () => {
    expect(split("select 'a; copy t to x")).toEqual(["select 'a; copy t to x"]);
    expect(split('select /* /* */ ; copy t to x')).toEqual(['select']);
    expect(split('select $q$ ; copy')).toEqual(['select $q$ ; copy']);
  });
});

describe('judging each statement by its first keyword', () => {
  it.each([
    'select 1',
    'SELECT 1',
    'sElEcT 1',
    'with x as (select 1) select * from x',
    'from registrants',
    'values (1), (2)',
    'table registrants',
    'describe registrants',
    'desc registrants',
    'describe',
    'describe select 1',
    'describe table registrants',
    'show tables',
    'show all tables',
    'summarize registrants',
    'summarize (select 1)',
    'pivot registrants on email in (1) using count(*)',
    'unpivot registrants on id into name k value v',
    '(select 1)',
    '((select 1)) union (select 2)',
    '-- a comment first\nselect 1',
    '/* a /* nested */ comment */ (/* and here */ select 1)',
    'select 1; select 2;',
    'select \'copy; insert\' as "delete"',
    'select * from duckdb_databases()',
    'select * from duckdb_settings()',
  ])('runs %s', (sql) => {
    expect(refused(sql)).toBeNull();
    expect(refused(sql, FOLDERS)).toBeNull();
  });

  it.each([
    ["copy (select 1) to 'x.csv'", 'COPY is refused'],
    ['COPY registrants TO stdout', 'COPY is refused'],
    ['copy from database a to b', 'COPY FROM DATABASE is refused'],
    ["export database 'x'", 'EXPORT is refused'],
    ["import database 'x'", 'IMPORT is refused'],
    ['pragma database_list', 'PRAGMA is refused'],
    ['call pragma_version()', 'CALL is refused'],
    ['set threads = 1', 'SET/RESET/USE is refused'],
    ['reset threads', 'SET/RESET/USE is refused'],
    ['use memory', 'SET/RESET/USE is refused'],
    ['set variable v = 1', 'SET VARIABLE is refused'],
    ["attach 'other.duckdb'", 'ATTACH is refused'],
    ['detach other', 'DETACH is refused'],
    ['install httpfs', 'INSTALL/LOAD is refused'],
    ['force install httpfs', 'INSTALL/LOAD is refused'],
    ['load httpfs', 'INSTALL/LOAD is refused'],
    ['create table t as select 1', 'CREATE is refused'],
    ['insert into t values (1)', 'INSERT is refused'],
    ['update t set x = 1', 'UPDATE is refused'],
    ['delete from t', 'DELETE is refused'],
    ['merge into t using s on t.x = s.x when matched then delete', 'MERGE is refused'],
    ['truncate t', 'TRUNCATE is refused'],
    ['drop table t', 'DROP is refused'],
    ['alter table t add column y int', 'ALTER is refused'],
    ['checkpoint', 'CHECKPOINT is refused'],
    ['force checkpoint', 'CHECKPOINT is refused'],
    ['vacuum', 'VACUUM is refused'],
    ['begin', 'BEGIN/COMMIT is refused'],
    ['prepare p as select 1', 'PREPARE is refused'],
    ['execute p', 'EXECUTE is refused'],
    ['(copy t to x)', 'COPY is refused'],
    ['/* select */ copy t to x', 'COPY is refused'],
    ["-- select\ncopy t to 'x'", 'COPY is refused'],
    ['Copy t to x', 'COPY is refused'],
    ['selec 1', 'a statement starting with "selec" is refused'],
    ["'select 1'", "a statement starting with 'select 1' is refused"],
    ['"select" 1', 'a statement starting with "select" is refused'],
    ['()', 'a statement starting with ) is refused'],
  ])('refuses %s', (sql, what) => {
    expect(refused(sql)).toBe(what);
  });

  it('numbers the refused statement when there are several, counting as DuckDB counts (no empty ones)', () => {
    expect(refused("select 1;; select ';'; copy t to 'x'; select 2")).toBe('COPY is refused (statement 3 of 4)');
    expect(refused("select 1; attach 'o.duckdb' as o; delete from o.t")).toBe('ATTACH is refused (statement 2 of 3)');
  });

  it('says the reason the same way every time, with EXPLAIN only when no folder is readable', () => {
    expect(statementRefusal('delete from t', NO_FOLDER)).toBe(
      'DELETE is refused: queries are read-only (SELECT, WITH, FROM, VALUES, TABLE, DESCRIBE, SHOW, SUMMARIZE, PIVOT, UNPIVOT, EXPLAIN) and never write a file or change a database',
    );
    expect(statementRefusal('explain select 1', FOLDERS)).toBe(
      'EXPLAIN is refused: queries are read-only (SELECT, WITH, FROM, VALUES, TABLE, DESCRIBE, SHOW, SUMMARIZE, PIVOT, UNPIVOT; EXPLAIN only without --allow-read) and never write a file or change a database',
    );
    expect(statementRefusal(' ;; -- nothing', NO_FOLDER)).toBe('no SQL statement to run');
  });

  it('lets EXPLAIN wrap only a reading statement, past ANALYZE and its options', () => {
    for (const sql of [
      'explain select 1',
      'explain analyze select 1',
      'EXPLAIN ANALYSE select 1',
      'explain (format json) select 1',
      'explain (analyze, format json) from registrants',
      'explain (select 1)',
      'explain with x as (select 1) select * from x',
      'explain describe registrants',
      'explain summarize registrants',
    ]) {
      expect(refused(sql), sql).toBeNull();
    }
    expect(refused("explain copy t to 'x'")).toBe('EXPLAIN COPY is refused');
    expect(refused("explain analyze copy t to 'x'")).toBe('EXPLAIN COPY is refused');
    expect(refused("explain (analyze) copy t to 'x'")).toBe('EXPLAIN COPY is refused');
    expect(refused("explain (format json) (copy t to 'x')")).toBe('EXPLAIN COPY is refused');
    expect(refused("explain (copy t to 'x')")).toBe('EXPLAIN COPY is refused');
    expect(refused('explain analyze pragma database_list')).toBe('EXPLAIN PRAGMA is refused');
    expect(refused('explain explain select 1')).toBe('EXPLAIN EXPLAIN is refused');
    expect(refused('explain with x as (select 1) delete from t')).toBe('EXPLAIN DELETE is refused');
    expect(refused('explain')).toBe('EXPLAIN nothing is refused');
    expect(refused('explain analyze select 1', FOLDERS)).toBe('EXPLAIN is refused');
  });

  it('lets DESCRIBE, SHOW and SUMMARIZE wrap only a reading statement', () => {
    expect(refused("describe copy t to 'x'")).toBe('DESCRIBE COPY is refused');
    expect(refused('summarize (insert into t values (1))')).toBe('SUMMARIZE INSERT is refused');
    expect(refused('show pragma database_list')).toBe('SHOW PRAGMA is refused');
    expect(refused('describe explain select 1')).toBe('DESCRIBE EXPLAIN is refused');
    expect(refused('summarize with x as (select 1) select * from x')).toBeNull();
  });

  it('reads the statement after WITH: a write behind common table expressions is refused', () => {
    expect(refused('with x as (select 1) insert into t select * from x')).toBe('INSERT is refused');
    expect(refused('with x as (select 1) delete from t')).toBe('DELETE is refused');
    expect(refused('with x as (select 1), y(a) as materialized (select 2) update t set x = 1')).toBe(
      'UPDATE is refused',
    );
    expect(refused('with recursive x(n) using key (n) as not materialized (select 1) (delete from t)')).toBe(
      'DELETE is refused',
    );
    expect(refused('with "copy" as (select \'; delete\') select * from "copy"')).toBeNull();
    // Text that is no list of common tables is left to DuckDB's parser (a syntax error) and its type check.
    expect(refused('with x select 1')).toBeNull();
  });
});

describe("against DuckDB's parser", () => {
  let instance: DuckDBInstance;
  let connection: DuckDBConnection;

  beforeAll(async () => {
    instance = await DuckDBInstance.create(':memory:');
    connection = await DuckDBConnection.create(instance);
    await connection.run('CREATE TABLE t AS SELECT 1 AS x');
    // Nothing the generated text does may touch a file: DuckDB's sandbox, as `evsync query` has it.
    await connection.run("SET temp_directory = ''");
    await connection.run('SET enable_external_access = false');
    await connection.run('SET lock_configuration = true');
  });
  afterAll(() => {
    connection.closeSync();
    instance.closeSync();
  });

  /** DuckDB's statements of `sql` as their types, or null when it does not read the text. */
  async function duckdbTypes(sql: string): Promise<(StatementType | string)[] | null> {
    let extracted: Awaited<ReturnType<DuckDBConnection['extractStatements']>>;
    try {
      extracted = await connection.extractStatements(sql);
    } catch {
      return null;
    }
    const types: (StatementType | string)[] = [];
    for (let i = 0; i < extracted.count; i++) {
      try {
        const stmt = await extracted.prepare(i);
        types.push(stmt.statementType);
        stmt.destroySync();
      } catch (err) {
        // Binding failed: a missing column is harmless, a Permission Error is a statement that tried a file.
        types.push(String(err).includes('Permission Error') ? 'file access' : 'bind error');
      }
    }
    return types;
  }

  const READS = new Set<StatementType | string>([StatementType.SELECT, StatementType.EXPLAIN, 'bind error']);

  it('agrees on the statements of hand-picked text', async () => {
    const texts = [
      "select 'a;b'; select 2",
      "select E'a\\'; copy t to x'",
      'select /* a /* ; */ ; */ 1; select 2',
      'select $t$ $$ ; $t$; select 2',
      'select 1 as a$b$; select 2',
      'select $ab$c$ab$; select 2',
      'select "a"";"; select 2',
      'select /* //* */ ; */ 1',
      ';;select 1;;',
    ];
    for (const sql of texts) {
      const types = await duckdbTypes(sql);
      expect(types?.length ?? 'unparsed', sql).toBe(splitStatements(sql).length);
      expect(types?.length, sql).toBeGreaterThan(0);
    }
  });

  it('property: wherever DuckDB reads generated text it counts the same statements, and none evsync passes writes', async () => {
    // Statements with a slot, filled with strings, identifiers and comments whose insides hold what could end
    // them early or hide a statement: semicolons, quotes, backslashes, dollar tags, comment marks, keywords.
    const inside = fc
      .array(
        fc.constantFrom(
          ';',
          "''",
          "'",
          '\\',
          "\\'",
          '$$',
          '$a$',
          '$',
          '--',
          '/*',
          '*/',
          '\n',
          '"',
          'x',
          ' ',
          "copy t to 'f'",
        ),
        { maxLength: 6 },
      )
      .map((parts) => parts.join(''));
    const unit = fc.oneof(
      inside.map((t) => `'${t}'`),
      inside.map((t) => `E'${t}'`),
      inside.map((t) => `$$${t}$$`),
      inside.map((t) => `$a$${t}$a$`),
      inside.map((t) => `"${t}"`),
      inside.map((t) => `/*${t}*/ 1`),
      inside.map((t) => `1 --${t}\n`),
      fc.constantFrom('1', 'x', 'a$b$', '$1'),
    );
    const template = fc.constantFrom(
      'select {}',
      '(select {})',
      'from t select {}',
      'values ({})',
      'describe select {}',
      'with c as (select {}) select * from c',
      'explain analyze select {}',
      "copy (select {}) to 'out.csv'",
      "explain analyze copy (select {}) to 'out.csv'",
      'insert into t select {}',
      'with c as (select {}) delete from t',
      'delete from t where x = {}',
      'set variable v = {}',
      'pragma version',
    );
    const statement = fc
      .tuple(template, fc.array(unit, { minLength: 1, maxLength: 3 }), fc.constantFrom('', ' ', '\n', '/* ; */'))
      .map(([t, units, lead]) => lead + t.replace('{}', units.join(' || ')));
    const text = fc
      .tuple(fc.array(statement, { minLength: 1, maxLength: 4 }), fc.constantFrom(';', '; ', ';\n', ';;', ' ; -- x\n'))
      .map(([statements, separator]) => statements.join(separator));
    let parsed = 0;
    let several = 0;
    await fc.assert(
      fc.asyncProperty(text, async (sql) => {
        const types = await duckdbTypes(sql);
        if (types === null) return;
        parsed++;
        if (types.length > 1) several++;
        expect(types.length, sql).toBe(splitStatements(sql).length);
        if (statementRefusal(sql, NO_FOLDER) === null) {
          for (const type of types) expect(READS.has(type), `${sql}: ${type}`).toBe(true);
        }
      }),
      { numRuns: 4000, seed: 20_260_327 },
    );
    // The property said something: hundreds of texts parsed, many of them several statements (the rest hold a
    // quote or tag their slot did not close, which DuckDB refuses to read).
    expect(parsed).toBeGreaterThan(400);
    expect(several).toBeGreaterThan(150);
  });
});
