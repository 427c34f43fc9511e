/**
 * JSON parsing that keeps every number literal's digits.
 *
 * `JSON.parse` turns `9007199254740993` into 9007199254740992 and `1e400` into Infinity: the digits are gone before
 * any converter sees them. The reviver's `context.source` would give the literal back, but Node 20 (which evsync
 * supports) lacks it, and a reviver runs for every value of a 1 MB page. So: one regex pass decides whether the page
 * holds a literal that could lose digits (16 or more digits in a row, or a three-digit exponent); almost no page
 * does, and those go straight to `JSON.parse`. A page that might is scanned token by token (string-aware), and each
 * integer literal beyond 2^53 or number literal beyond a double's range is turned into a JSON string of the same
 * text before the parse. Converters read digit strings as integers (normalize.ts), so `"9007199254740993"` lands in
 * a BIGINT exactly, or as its text in a text column; nothing downstream meets a type JSON cannot write back.
 */

// Anything shorter than 16 digits is a safe integer; a double overflows only with an exponent of 3 digits or more.
const MAY_LOSE_DIGITS = /\d{16}|\d[eE]\+?\d{3}/;

/** `JSON.parse(text)`, except that number literals a double cannot hold exactly come back as their text. */
export function parseJsonExact(text: string): unknown {
  if (!MAY_LOSE_DIGITS.test(text)) return JSON.parse(text);
  return JSON.parse(quoteInexactNumbers(text));
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

// The JSON number grammar: a malformed literal (`-`, `1e`, `012`) is left for JSON.parse to refuse.
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** Whether a number literal's value as a double differs from the literal (integers) or is not finite. */
function losesDigits(literal: string, integer: boolean): boolean {
  const n = Number(literal);
  if (!Number.isFinite(n)) return true;
  // Below 16 digits every integer is safe; the digit count check keeps the common case to one comparison.
  return integer && literal.length >= 16 && !Number.isSafeInteger(n);
}

/**
 * `text` with every number literal that `losesDigits` quoted. Only positions outside strings are looked at, and
 * only a well-formed literal is touched, so valid JSON stays valid and invalid JSON stays invalid.
 */
function quoteInexactNumbers(text: string): string {
  const parts: string[] = [];
  let copiedTo = 0;
  let i = 0;
  const length = text.length;
  while (i < length) {
    const char = text.charCodeAt(i);
    if (char === 34 /* " */) {
      // Skip the string, escapes included.
      i++;
      while (i < length) {
        const stringChar = text.charCodeAt(i);
        if (stringChar === 92 /* \ */) i += 2;
        else if (stringChar === 34) break;
        else i++;
      }
      i++;
      continue;
    }
    if (char !== 45 /* - */ && !isDigit(char)) {
      i++;
      continue;
    }
    const start = i;
    if (char === 45) i++;
    while (i < length && isDigit(text.charCodeAt(i))) i++;
    let integer = true;
    if (text.charCodeAt(i) === 46 /* . */) {
      integer = false;
      i++;
      while (i < length && isDigit(text.charCodeAt(i))) i++;
    }
    const exponentMark = text.charCodeAt(i);
    if (exponentMark === 101 || exponentMark === 69 /* exponentMark E */) {
      integer = false;
      i++;
      const sign = text.charCodeAt(i);
      if (sign === 43 || sign === 45) i++;
      while (i < length && isDigit(text.charCodeAt(i))) i++;
    }
    const literal = text.slice(start, i);
    if (losesDigits(literal, integer) && JSON_NUMBER.test(literal)) {
      parts.push(text.slice(copiedTo, start), `"${literal}"`);
      copiedTo = i;
    }
  }
  if (copiedTo === 0) return text;
  parts.push(text.slice(copiedTo));
  return parts.join('');
}
