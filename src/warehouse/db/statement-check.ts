/**
 * What `evsync query` refuses, refused by evsync itself, before DuckDB parses the text: each statement is judged by
 * its first keyword (after comments and opening parentheses), read with sql-tokens.ts. Only reading statements
 * pass; everything else (COPY, EXPORT, IMPORT, PRAGMA, CALL, SET, ATTACH, INSTALL, CREATE, INSERT, ...) is refused
 * with evsync's own message. DuckDB's statement-type check in `Db.readQuery` stays as a second line.
 *
 * Why not let DuckDB judge first: DuckDB binds COPY TO and EXPORT while preparing them (only its sandbox's
 * Permission Error stopped them, and an `--allow-read` folder lets a COPY TO write there), reads an IMPORT folder's
 * files while merely splitting the text, and rewrites `PRAGMA database_list` into a SELECT, which its type check
 * then lets run.
 *
 * Judged beyond the first keyword:
 * - EXPLAIN (when allowed at all) must wrap a reading statement: `EXPLAIN ANALYZE COPY ...` runs the COPY;
 * - DESCRIBE, SHOW and SUMMARIZE followed by a statement keyword (`DESCRIBE SELECT ...`) must wrap a reading one;
 * - WITH: the statement after the common table expressions must be a reading one (`WITH x AS (...) DELETE ...`
 *   deletes). When the list does not read as one (a syntax error, or syntax this walk does not know), DuckDB's
 *   parser and its type check decide, as they did before.
 *
 * Left to run on purpose: table functions inside a SELECT, such as `duckdb_databases()` and `duckdb_settings()`
 * (DuckDB 1.5 has no `pragma_database_list()` table function). They show the path of the file the query reads (the
 * warehouse, or the daemon's query copy beside it) and the sandbox's settings, which the user can see anyway and
 * cannot change (the configuration is locked); they write nothing.
 */
import { splitStatements, type Token } from './sql-tokens.js';

/** First keywords of the statements that read (DESC is DESCRIBE; PIVOT_WIDER and PIVOT_LONGER are PIVOT's names). */
const READING = new Set([
  'SELECT',
  'WITH',
  'FROM',
  'VALUES',
  'TABLE',
  'DESCRIBE',
  'DESC',
  'SHOW',
  'SUMMARIZE',
  'PIVOT',
  'PIVOT_WIDER',
  'UNPIVOT',
  'PIVOT_LONGER',
]);

/** Reading statements that may wrap another statement (`DESCRIBE SELECT ...`). */
const WRAPPERS = new Set(['DESCRIBE', 'DESC', 'SHOW', 'SUMMARIZE']);

/** How refused statements are named in the message (grouped as the README and DuckDB's statement types group them). */
const REFUSED: Record<string, string> = {
  ALTER: 'ALTER',
  ANALYZE: 'ANALYZE',
  ATTACH: 'ATTACH',
  CALL: 'CALL',
  CHECKPOINT: 'CHECKPOINT',
  COMMENT: 'COMMENT',
  COPY: 'COPY',
  CREATE: 'CREATE',
  DEALLOCATE: 'DEALLOCATE',
  DELETE: 'DELETE',
  DETACH: 'DETACH',
  DROP: 'DROP',
  EXECUTE: 'EXECUTE',
  EXPLAIN: 'EXPLAIN',
  EXPORT: 'EXPORT',
  FORCE: 'FORCE',
  IMPORT: 'IMPORT',
  INSERT: 'INSERT',
  INSTALL: 'INSTALL/LOAD',
  LOAD: 'INSTALL/LOAD',
  MERGE: 'MERGE',
  PRAGMA: 'PRAGMA',
  PREPARE: 'PREPARE',
  SET: 'SET/RESET/USE',
  RESET: 'SET/RESET/USE',
  USE: 'SET/RESET/USE',
  TRUNCATE: 'TRUNCATE',
  UPDATE: 'UPDATE',
  VACUUM: 'VACUUM',
  BEGIN: 'BEGIN/COMMIT',
  START: 'BEGIN/COMMIT',
  COMMIT: 'BEGIN/COMMIT',
  END: 'BEGIN/COMMIT',
  ROLLBACK: 'BEGIN/COMMIT',
  ABORT: 'BEGIN/COMMIT',
};

export interface StatementRules {
  /** Whether EXPLAIN may run: only when the sandbox reaches no folder (`EXPLAIN ANALYZE` runs what it explains). */
  explain: boolean;
}

/** Why every query refusal happens, with the statements that do run: the tail of each refusal's message. */
export function readOnlyReason(rules: StatementRules): string {
  const reading = 'SELECT, WITH, FROM, VALUES, TABLE, DESCRIBE, SHOW, SUMMARIZE, PIVOT, UNPIVOT';
  const explain = rules.explain ? ', EXPLAIN' : '; EXPLAIN only without --allow-read';
  return `queries are read-only (${reading}${explain}) and never write a file or change a database`;
}

/** The refusal of statement `index` of `count` (numbered only when there are several), said as evsync says it. */
export function refusalMessage(what: string, index: number, count: number, rules: StatementRules): string {
  const note = count > 1 ? ` (statement ${index + 1} of ${count})` : '';
  return `${what} is refused${note}: ${readOnlyReason(rules)}`;
}

type Verdict = { ok: true } | { ok: false; what: string };
const OK: Verdict = { ok: true };

function keyword(token: Token | undefined): string | null {
  return token?.kind === 'word' ? token.text.toUpperCase() : null;
}

function isStatementKeyword(word: string | null): boolean {
  return word !== null && (READING.has(word) || word in REFUSED);
}

/** The index just past the parenthesised group opened at `at`, or null when it does not close. */
function pastGroup(tokens: readonly Token[], at: number): number | null {
  let depth = 0;
  for (let i = at; i < tokens.length; i++) {
    const kind = tokens[i]?.kind;
    if (kind === 'open') depth++;
    else if (kind === 'close' && --depth === 0) return i + 1;
  }
  return null;
}

/**
 * Where the statement after WITH's common table expressions starts:
 * `WITH [RECURSIVE] name [(columns)] [USING KEY (columns)] AS [NOT] [MATERIALIZED] (query) [, ...] <statement>`;
 * null when the list does not read that way.
 */
function afterCommonTables(tokens: readonly Token[], withAt: number): number | null {
  let at = withAt + 1;
  if (keyword(tokens[at]) === 'RECURSIVE') at++;
  for (;;) {
    const name = tokens[at]?.kind;
    if (name !== 'word' && name !== 'quoted') return null;
    at++;
    if (tokens[at]?.kind === 'open') {
      const past = pastGroup(tokens, at);
      if (past === null) return null;
      at = past;
    }
    if (keyword(tokens[at]) === 'USING') {
      if (keyword(tokens[at + 1]) !== 'KEY' || tokens[at + 2]?.kind !== 'open') return null;
      const past = pastGroup(tokens, at + 2);
      if (past === null) return null;
      at = past;
    }
    if (keyword(tokens[at]) !== 'AS') return null;
    at++;
    if (keyword(tokens[at]) === 'NOT') at++;
    if (keyword(tokens[at]) === 'MATERIALIZED') at++;
    if (tokens[at]?.kind !== 'open') return null;
    const past = pastGroup(tokens, at);
    if (past === null) return null;
    at = past;
    if (tokens[at]?.kind !== 'comma') return at;
    at++;
  }
}

/** Where EXPLAIN's statement starts: past ANALYZE and an option list such as `(FORMAT json)`. */
function afterExplain(tokens: readonly Token[], explainAt: number): number {
  let at = explainAt + 1;
  const word = keyword(tokens[at]);
  if (word === 'ANALYZE' || word === 'ANALYSE') at++;
  if (tokens[at]?.kind !== 'open') return at;
  let first = at;
  while (tokens[first]?.kind === 'open') first++;
  // `(SELECT ...)` is the statement in parentheses; `(ANALYZE, FORMAT json)` is an option list.
  const inside = keyword(tokens[first]);
  if (inside !== 'ANALYZE' && inside !== 'ANALYSE' && isStatementKeyword(inside)) return at;
  return pastGroup(tokens, at) ?? tokens.length;
}

/** The name of a refused statement starting with `word` at `at` (`COPY FROM DATABASE`, `SET VARIABLE`). */
function refusedName(tokens: readonly Token[], at: number, word: string): string {
  const next = keyword(tokens[at + 1]);
  if (word === 'COPY' && next === 'FROM' && keyword(tokens[at + 2]) === 'DATABASE') return 'COPY FROM DATABASE';
  if ((word === 'SET' || word === 'RESET') && next === 'VARIABLE') return `${word} VARIABLE`;
  if (word === 'FORCE' && next === 'INSTALL') return 'INSTALL/LOAD';
  if (word === 'FORCE' && next === 'CHECKPOINT') return 'CHECKPOINT';
  return REFUSED[word] ?? word;
}

/** A token's first characters, for a message about a statement that starts with no keyword it knows. */
function startOf(text: string): string {
  return text.length > 24 ? `${text.slice(0, 24)}...` : text;
}

/** The verdict on the statement starting at `at`; `wrapped` when another statement holds it (no EXPLAIN there). */
function judge(tokens: readonly Token[], at: number, rules: StatementRules, wrapped: boolean): Verdict {
  while (tokens[at]?.kind === 'open') at++;
  const token = tokens[at];
  if (!token) return { ok: false, what: wrapped ? 'nothing' : 'an empty statement' };
  const word = keyword(token);
  if (word === null) return { ok: false, what: `a statement starting with ${startOf(token.text)}` };
  if (word === 'EXPLAIN') {
    if (!rules.explain || wrapped) return { ok: false, what: 'EXPLAIN' };
    const inner = judge(tokens, afterExplain(tokens, at), rules, true);
    return inner.ok ? OK : { ok: false, what: `EXPLAIN ${inner.what}` };
  }
  if (WRAPPERS.has(word)) {
    // `DESCRIBE registrants`, `SHOW TABLES`: a name, nothing to judge; `DESCRIBE SELECT ...`: the statement wrapped.
    const next = at + 1 + (tokens[at + 1]?.kind === 'open' ? 1 : 0);
    if (!isStatementKeyword(keyword(tokens[next]))) return OK;
    const inner = judge(tokens, at + 1, rules, true);
    return inner.ok ? OK : { ok: false, what: `${word} ${inner.what}` };
  }
  if (word === 'WITH') {
    const body = afterCommonTables(tokens, at);
    return body === null ? OK : judge(tokens, body, rules, true);
  }
  if (READING.has(word)) return OK;
  if (word in REFUSED) return { ok: false, what: refusedName(tokens, at, word) };
  return { ok: false, what: `a statement starting with "${startOf(token.text)}"` };
}

/**
 * Why `sql` is refused (the message, naming the first refused statement), or null when every statement is a
 * reading one. No statement at all is refused too.
 */
export function statementRefusal(sql: string, rules: StatementRules): string | null {
  const statements = splitStatements(sql);
  if (statements.length === 0) return 'no SQL statement to run';
  for (const [i, tokens] of statements.entries()) {
    const verdict = judge(tokens, 0, rules, false);
    if (!verdict.ok) return refusalMessage(verdict.what, i, statements.length, rules);
  }
  return null;
}
