/**
 * Scrubbing the credentials evsync holds out of what it stores.
 *
 * The service may echo a credential inside a record (a `_links` href with `?access_token=`, a field holding
 * `Bearer <token>`). Logs are covered by src/api/redact.ts; this covers stored values: table cells, the raw JSON of
 * rejected records, and everything exported from them. Only the exact secrets (and the forms they take inside JSON
 * text and URLs) are replaced: patterns such as `password=...` would rewrite the customers' own data.
 */

export const SCRUBBED = '[REDACTED]';

/**
 * Secrets shorter than this are not scrubbed from data: a four-letter client secret would otherwise replace that
 * word in every registrant's answers. Real client secrets, Basic strings and tokens are far longer.
 */
const MIN_SCRUBBED_LENGTH = 8;

export interface SecretScrubber {
  /** Length of the shortest form scrubbed (Infinity when none): a shorter string cannot hold a secret. */
  readonly shortest: number;
  /**
   * Re-reads the secret list. Cheap when the list is unchanged (an identical array, or the same strings): call it
   * once per record or page, so a token rotated mid-run is scrubbed from the next record on.
   */
  refresh(): void;
  /** `text` with every held secret replaced by `[REDACTED]`; the same string when it holds none. */
  text(text: string): string;
  /**
   * Whether JSON text has a `\uXXXX` escape naming a character of a held secret's forms: such text could spell a
   * secret that `text()` does not see, so it must be parsed and scrubbed value by value. An answer that escapes only
   * what no secret holds (every non-ASCII character, as Python's `json.dumps` writes them) can be scrubbed as text.
   */
  escapesMayHide(text: string): boolean;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/**
 * The forms a secret takes in stored text: as is, slash-escaped in JSON (`\/`, as PHP writes it), URL-encoded, and
 * as JSON text writes it (a `"`, a backslash or a control character escaped), slashes escaped or not.
 */
function variants(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const slashed = (s: string) => s.replaceAll('/', '\\/');
  return [...new Set([secret, slashed(secret), encodeURIComponent(secret), json, slashed(json)])];
}

/**
 * A pattern matching a JSON `\u` escape of any of `characters` (UTF-16 units), hex digits in either case: a backslash
 * before `u` that is itself escaped matches too, which only sends text down the careful path.
 */
function escapesOf(characters: ReadonlySet<string>): RegExp | null {
  if (characters.size === 0) return null;
  const hex = (c: string) =>
    [...c.charCodeAt(0).toString(16).padStart(4, '0')]
      .map((d) => (/[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d))
      .join('');
  return new RegExp(`\\\\u(?:${[...characters].map(hex).join('|')})`);
}

/**
 * A scrubber over the secrets `secrets()` returns (client secret and its encodings, the Basic string, current and
 * previous access tokens). Strings shorter than the shortest secret are passed through after one length check, so
 * the cost on ordinary values is a comparison.
 */
export function makeSecretScrubber(secrets: () => readonly string[]): SecretScrubber {
  let source: readonly string[] = [];
  let test: RegExp | null = null;
  let replace: RegExp | null = null;
  /** An escape of a character of the scrubbed forms (which could spell a secret), null when none is held. */
  let hiding: RegExp | null = null;
  let built = false;

  function sameList(list: readonly string[]): boolean {
    if (list === source) return true;
    if (list.length !== source.length) return false;
    for (let i = 0; i < list.length; i++) if (list[i] !== source[i]) return false;
    return true;
  }

  function refresh(): void {
    const list = secrets();
    if (built && sameList(list)) return;
    built = true;
    source = [...list];
    const forms = [...new Set(list.filter((s) => s.length >= MIN_SCRUBBED_LENGTH).flatMap(variants))];
    // Longest first, so a secret containing another is replaced whole.
    forms.sort((a, b) => b.length - a.length);
    // UTF-16 code units, as `\u` escapes name them (a character past U+FFFF is two escapes).
    hiding = escapesOf(new Set(forms.flatMap((f) => f.split(''))));
    if (forms.length === 0) {
      test = replace = null;
      scrubber.shortest = Number.POSITIVE_INFINITY;
      return;
    }
    const pattern = forms.map(escapeRegExp).join('|');
    test = new RegExp(pattern);
    replace = new RegExp(pattern, 'g');
    scrubber.shortest = Math.min(...forms.map((f) => f.length));
  }

  function text(value: string): string {
    if (value.length < scrubber.shortest || test === null || replace === null) return value;
    return test.test(value) ? value.replace(replace, SCRUBBED) : value;
  }

  function escapesMayHide(value: string): boolean {
    // One scan for escapes of those characters only: text that escapes every non-ASCII character (thousands of
    // escapes on a page of names in another script) costs no more than text with none.
    return hiding !== null && value.includes('\\u') && hiding.test(value);
  }

  // A plain field rather than a getter: the normalizer reads it for every text value.
  const scrubber = { shortest: Number.POSITIVE_INFINITY, refresh, text, escapesMayHide };
  refresh();
  return scrubber;
}
