/**
 * A page's records as the archive keeps them (`{"records": [...], "quarantined": [...]}`, JSON text) and as a rebuild
 * reads them back: one format, written and read here. A record nested deeper than JSON.stringify can write (it
 * would overflow the stack) is kept in its storable form (normalizer/storable.ts) under UNWRITABLE: the live load
 * quarantined it, and a rebuild quarantines it again with the same reason, its neighbours loaded.
 */
import { storableRaw } from '../../normalizer/storable.js';

const UNWRITABLE = '__evsync_unwritable__';
const UNWRITABLE_REASON = 'nested deeper than JSON can be written: kept in the archive in its storable form';

interface ArchivedPage {
  records: readonly unknown[];
  quarantined?: readonly { raw: unknown; reason: string }[];
}

function writable(value: unknown): boolean {
  try {
    JSON.stringify(value);
    return true;
  } catch (err) {
    if (err instanceof RangeError) return false;
    throw err;
  }
}

/** The page's archive body, scrubbed by `scrub` (the scrubber's text form: JSON escapes included). */
export function archivedPageText(page: ArchivedPage, scrub: (text: string) => string): string {
  const body = page.quarantined?.length ? page : { records: page.records };
  try {
    return scrub(JSON.stringify(body));
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
  }
  const safe = (raw: unknown) => (writable(raw) ? raw : { [UNWRITABLE]: storableRaw(raw) });
  const quarantined = page.quarantined?.map((q) => ({ raw: safe(q.raw), reason: q.reason }));
  return scrub(JSON.stringify({ records: page.records.map(safe), ...(quarantined?.length ? { quarantined } : {}) }));
}

/** A page read back from its archive body: records kept in their storable form go with the quarantined. */
export function readArchivedPage(text: string): ArchivedPage | null {
  const parsed: unknown = JSON.parse(text);
  if (!parsed || typeof parsed !== 'object' || !Array.isArray((parsed as ArchivedPage).records)) return null;
  const page = parsed as ArchivedPage;
  const quarantined: { raw: unknown; reason: string }[] = [...(page.quarantined ?? [])];
  const records: unknown[] = [];
  for (const r of page.records) {
    if (r && typeof r === 'object' && UNWRITABLE in r) {
      quarantined.push({ raw: (r as Record<string, unknown>)[UNWRITABLE], reason: UNWRITABLE_REASON });
    } else records.push(r);
  }
  return { records, ...(quarantined.length ? { quarantined } : {}) };
}
