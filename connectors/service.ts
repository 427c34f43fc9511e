/**
 * Facts about the service that every layer shares, stated once (the simulator states the service's behaviour on its
 * own, so that tests of the client against it are not these facts checked against themselves).
 */

/** Credits a list call costs, whatever it returns (an empty page included). */
export const LIST_CALL_CREDITS = 10;
/** Credits any other call costs (a single GET, an operation, the token call). */
export const OTHER_CALL_CREDITS = 1;
/** Each credential's documented budget: 2000 credits per 10-minute window. */
export const DEFAULT_RATE_LIMIT = { credits: 2000, windowSeconds: 600 } as const;
/** The spec caps `ids=` (and keeps `*in*` lists short) at 100 ids per call. */
export const IDS_PER_CALL = 100;
/**
 * The largest `per-page` the docs' introduction gives (each endpoint's page says 200: docs/api-facts.md); what a
 * stream asks unless its definition says less, and the client reads the size granted from `_meta.perPage`.
 */
export const MAX_PER_PAGE = 1000;

/**
 * An instant as UTC text: `seconds` is the service's timestamp form, `YYYY-MM-DD HH:MM:SS` (what `search`, `_meta`
 * and the status document use); `ms` adds `.mmm`, the form the warehouse writes to its TIMESTAMP columns (so that
 * two of its writes in one second still order). The one formatter of UTC text: every layer imports it from here.
 */
export function utcText(at: number | Date, precision: 'seconds' | 'ms'): string {
  const iso = new Date(at).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, precision === 'seconds' ? 19 : 23)}`;
}
