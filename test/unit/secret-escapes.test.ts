/**
 * The text scrubber against JSON text that escapes characters (normalizer/secrets.ts): `escapesMayHide` says when a
 * `\u` escape could spell a held credential, and otherwise scrubbing the text leaves no credential in what it decodes
 * to; a credential with a character JSON escapes (a quote, a backslash) is found as JSON text writes it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { makeSecretScrubber, SCRUBBED } from '../../normalizer/secrets.js';

const secret = 'Zk3q9TqL0vX2mB7nR4sW8y/C1dF6gH5j';
const token = '4f9a0c1e7b3d2a6f8e5c9b1a0d3f7e2c';

const unicodeEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** JSON text of `{"v": value}`, each UTF-16 unit written raw or as a `\u` escape as `escaped(i)` says. */
function jsonText(value: string, escaped: (i: number) => boolean): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i] as string;
    const raw = JSON.stringify(c).slice(1, -1);
    // Characters JSON must escape (and lone surrogates) are escaped whatever the choice.
    out += escaped(i) || raw !== c ? unicodeEscape(c) : c;
  }
  return `{"v":"${out}"}`;
}

describe('escapes and the text scrubber', () => {
  const scrub = makeSecretScrubber(() => [secret, token]);

  it('lets through escapes of characters no credential has, and not one that a credential has', () => {
    expect(scrub.escapesMayHide('{"name":"Zo\\u00eb Andr\\u00e9 \\ud83d\\ude00"}')).toBe(false);
    expect(scrub.escapesMayHide('{"name":"plain"}')).toBe(false);
    // `k` is in the secret, `/` in it, `%` in its URL-encoded form (`%2F`), `!` in no form of either.
    expect(scrub.escapesMayHide('{"n":"\\u006b"}')).toBe(true);
    expect(scrub.escapesMayHide('{"n":"\\u002F"}')).toBe(true);
    expect(scrub.escapesMayHide('{"n":"\\u0025"}')).toBe(true);
    expect(scrub.escapesMayHide('{"n":"\\u0021"}')).toBe(false);
    // Nothing held: nothing to hide.
    expect(makeSecretScrubber(() => []).escapesMayHide('{"n":"\\u006b"}')).toBe(false);
  });

  it('scrubs a credential with a quote or a backslash as JSON text writes it', () => {
    const odd = 'quote"and\\backslash-0123';
    const s = makeSecretScrubber(() => [odd]);
    const text = JSON.stringify({ v: `x ${odd} y` });
    expect(JSON.parse(s.text(text)).v).toBe(`x ${SCRUBBED} y`);
    expect(s.text(`x ${odd} y`)).toBe(`x ${SCRUBBED} y`);
  });

  it('property: text whose escapes cannot hide a credential decodes, once scrubbed, to no credential', () => {
    const around = fc.string({ maxLength: 12, unit: 'binary' });
    const value = fc
      .tuple(around, fc.constantFrom(secret, token, secret.replace('/', '\\/')), around)
      .map(([a, s, b]) => a + s + b);
    fc.assert(
      fc.property(value, fc.array(fc.boolean(), { maxLength: 80 }), (v, flags) => {
        const text = jsonText(v, (i) => flags[i % Math.max(1, flags.length)] === true);
        if (scrub.escapesMayHide(text)) return;
        const decoded = String(JSON.parse(scrub.text(text)).v);
        expect(decoded.includes(secret)).toBe(false);
        expect(decoded.includes(token)).toBe(false);
      }),
      { numRuns: 400 },
    );
  });

  it('property: non-ASCII text written ASCII-only (every non-ASCII unit escaped) keeps the text path', () => {
    const nonAscii = fc.string({ maxLength: 40, unit: 'binary' });
    fc.assert(
      fc.property(nonAscii, (v) => {
        const text = jsonText(v, (i) => (v.charCodeAt(i) ?? 0) >= 0x80);
        // Only the characters JSON must escape (controls, quote, backslash) could be of a credential: none here is.
        const forced = [...v].some((c) => c.charCodeAt(0) < 0x80 && JSON.stringify(c).length > 3);
        if (!forced) expect(scrub.escapesMayHide(text)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
