/**
 * DuckDB's SQL text as tokens, split into statements at top-level semicolons: the lexing `evsync query` needs to
 * judge a statement by its own reading before DuckDB parses it (statement-check.ts). It follows DuckDB's scanner
 * (PostgreSQL's, as DuckDB 1.5 has it) wherever a difference could hide a statement or a keyword:
 * - `--` comments run to the end of the line; block comments nest (DuckDB's do, measured: a comment holding a
 *   comment ends at the second star-slash), and a slash-star opens a nested one anywhere inside, after a slash too;
 * - '...' strings end at a quote not doubled (`''` is a quote); `E'...'` (only where a token starts: `xe'...'` is
 *   the word `xe` and a plain string) also takes backslash escapes (`E'it\'s'`); `N''`, `B''`, `X''` and `U&''`
 *   are plain strings for where they end;
 * - "..." identifiers end at a quote not doubled;
 * - `$tag$ ... $tag$` and `$$ ... $$` strings end at the same delimiter, and start only where a token starts
 *   (`$` continues a word: `a$b$` is one identifier), with a tag of a letter or `_` then letters, digits, `_`;
 *   `$1` and `$name` are parameters (DuckDB tries the dollar quote first: `$ab$c$ab$` is the string `c`);
 * - a number ends before a letter, so `1$a$` is `1` and a dollar quote, and `1e'...'` is `1` and an E string.
 * Statements that hold nothing but whitespace and comments are dropped, as DuckDB drops them.
 */

type TokenKind = 'word' | 'quoted' | 'number' | 'open' | 'close' | 'comma' | 'other';

export interface Token {
  kind: TokenKind;
  /** The token as written (a quoted token with its quotes). */
  text: string;
}

function isIdentStart(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_' || c.charCodeAt(0) >= 0x80;
}

function isDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}

function isIdentPart(c: string): boolean {
  return isIdentStart(c) || isDigit(c) || c === '$';
}

/** PostgreSQL's whitespace (`space` in its scanner). */
function isSpace(c: string): boolean {
  return c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v';
}

/** `$$` or `$tag$` at `at`, or null. */
const DOLLAR_DELIMITER = /\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/y;

function dollarDelimiterAt(sql: string, at: number): string | null {
  DOLLAR_DELIMITER.lastIndex = at;
  return DOLLAR_DELIMITER.exec(sql)?.[0] ?? null;
}

/** Where a block comment opened at `at` ends (past its closing star-slash), counting the comments nested in it. */
function blockCommentEnd(sql: string, at: number): number {
  let depth = 0;
  let i = at;
  while (i < sql.length) {
    if (sql.startsWith('/*', i)) {
      depth++;
      i += 2;
    } else if (sql.startsWith('*/', i)) {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else i++;
  }
  return sql.length; // unterminated: DuckDB refuses it; nothing after it is code either way
}

/** Where a quoted run opened at `at` (by `quote`) ends, past its closing quote; backslashes escape when `escapes`. */
function quotedEnd(sql: string, at: number, quote: string, escapes: boolean): number {
  let i = at + 1;
  while (i < sql.length) {
    const c = sql[i] as string;
    if (escapes && c === '\\') i += 2;
    else if (c === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else i++;
  }
  return sql.length;
}

function runEnd(sql: string, at: number, part: (c: string) => boolean): number {
  let i = at;
  while (i < sql.length && part(sql[i] as string)) i++;
  return i;
}

/** The end of the token that starts at `at` (no whitespace or comment there), and its kind; null for `;`. */
function tokenAt(sql: string, at: number): { end: number; kind: TokenKind } | null {
  const c = sql[at] as string;
  const next = sql[at + 1];
  if (c === ';') return null;
  if (c === "'") return { end: quotedEnd(sql, at, "'", false), kind: 'quoted' };
  if (c === '"') return { end: quotedEnd(sql, at, '"', false), kind: 'quoted' };
  if ((c === 'e' || c === 'E') && next === "'") return { end: quotedEnd(sql, at + 1, "'", true), kind: 'quoted' };
  if (c === '$') {
    const delimiter = dollarDelimiterAt(sql, at);
    if (delimiter) {
      const close = sql.indexOf(delimiter, at + delimiter.length);
      return { end: close < 0 ? sql.length : close + delimiter.length, kind: 'quoted' };
    }
    // A parameter ($1, $name): the `$` and the name, which never continues into a `$`.
    return { end: runEnd(sql, at + 1, (ch) => isIdentStart(ch) || isDigit(ch)), kind: 'other' };
  }
  if (isIdentStart(c)) return { end: runEnd(sql, at + 1, isIdentPart), kind: 'word' };
  if (isDigit(c)) return { end: runEnd(sql, at + 1, (ch) => isDigit(ch) || ch === '_' || ch === '.'), kind: 'number' };
  if (c === '(') return { end: at + 1, kind: 'open' };
  if (c === ')') return { end: at + 1, kind: 'close' };
  if (c === ',') return { end: at + 1, kind: 'comma' };
  return { end: at + 1, kind: 'other' };
}

/** The statements of `sql`, each as its tokens (comments and whitespace left out), empty statements dropped. */
export function splitStatements(sql: string): Token[][] {
  const statements: Token[][] = [];
  let current: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    if (isSpace(c)) i++;
    else if (sql.startsWith('--', i)) {
      const eol = runEnd(sql, i, (ch) => ch !== '\n' && ch !== '\r');
      i = eol;
    } else if (sql.startsWith('/*', i)) i = blockCommentEnd(sql, i);
    else {
      const token = tokenAt(sql, i);
      if (token === null) {
        if (current.length) statements.push(current);
        current = [];
        i++;
      } else {
        current.push({ kind: token.kind, text: sql.slice(i, token.end) });
        i = token.end;
      }
    }
  }
  if (current.length) statements.push(current);
  return statements;
}
