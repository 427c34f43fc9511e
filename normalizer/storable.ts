/**
 * The form of a raw record that may be stored (in `_evsync.rejected.raw`): what the service sent, minus what evsync
 * must not or cannot keep.
 *
 * - `_`-prefixed members of the record (`_links`, `_meta`) are the service's envelope, not data, and their hrefs
 *   may carry an access token: they are left out.
 * - Every string (member names too) goes through the secret scrubber.
 * - Values nested deeper than MAX_STORED_DEPTH are replaced by a marker string: `JSON.stringify` recurses and throws
 *   on deep enough input, and one such record must not fail the page that stores it.
 * - Numbers JSON cannot write (Infinity from `1e400` parsed without `parseJsonExact`) become their text instead of
 *   `null`.
 */

/** Nesting levels kept; far beyond any record's real shape, far below where `JSON.stringify` runs out of stack. */
const MAX_STORED_DEPTH = 256;

export const TOO_DEEP = `[nested deeper than ${MAX_STORED_DEPTH} levels: not kept]`;

type Scrub = (text: string) => string;
const keep: Scrub = (s) => s;

function storable(value: unknown, scrub: Scrub, depth: number): unknown {
  if (typeof value === 'string') return scrub(value);
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (value === null || typeof value !== 'object') return value ?? null;
  if (depth >= MAX_STORED_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((v) => storable(v, scrub, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    // defineProperty: a `__proto__` member must stay an own member, as JSON.parse made it.
    Object.defineProperty(out, scrub(k), {
      value: storable(v, scrub, depth + 1),
      enumerable: true,
      configurable: true,
      writable: true,
    });
  }
  return out;
}

/** `raw` as it may be stored: see the module comment. Not on the hot path (rejected records only). */
export function storableRaw(raw: unknown, scrub: Scrub = keep): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return storable(raw, scrub, 0);
  const record: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (k.charCodeAt(0) === 95 /* _ */) continue;
    Object.defineProperty(record, scrub(k), {
      value: storable(v, scrub, 1),
      enumerable: true,
      configurable: true,
      writable: true,
    });
  }
  return record;
}
