/**
 * A page's records as the archive keeps them and as a rebuild reads them back: one format, written and read here.
 * A list page is kept as the service's answer itself (`{"answer": <its body>, "quarantinedAt": [...], "reasons":
 * [...]}`: the body's text is not written again, which cost 5 us a row), its items split back into the records and
 * the ones the walk quarantined (at those positions, for those reasons). Any other page (a webhook's records, a
 * re-read, a stream whose header secrets are taken out) is kept as `{"records": [...], "quarantined": [...]}`. A record nested deeper than JSON.stringify can write (it
 * would overflow the stack) is kept in its storable form (normalizer/storable.ts) under UNWRITABLE: the live load
 * quarantined it, and a rebuild quarantines it again with the same reason, its neighbours loaded.
 */
import { isUtf8 } from 'node:buffer';
import { storableRaw } from '../../normalizer/storable.js';

const UNWRITABLE = '__evsync_unwritable__';
const UNWRITABLE_REASON = 'nested deeper than JSON can be written: kept in the archive in its storable form';

export interface ArchivedPage {
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

/**
 * A list page's archive body: the answer's text as it came, and where its quarantined items were and why. In three
 * parts, each scrubbed on its own (the answer's text is scanned as the flat string it arrived as: scanning it joined
 * to its head cost a copy of it first), written one after the other (Archive.append). A held secret across a junction
 * of two parts (at most `reach` characters long: page-loader.ts) is looked for around the junctions; were one there,
 * the body would be scrubbed whole, as one string. An answer the scrub left as it was is given as the bytes it came
 * in, when they are at hand and are the UTF-8 its text was decoded from (not encoding it again saves 1 us a row).
 */
export function archivedAnswerText(
  answer: { text: string; bytes?: Buffer | undefined; quarantinedAt: readonly number[] },
  quarantined: readonly { reason: string }[],
  scrub: (text: string) => string,
  reach: number,
): readonly (string | Buffer)[] {
  const reasons = JSON.stringify(quarantined.map((q) => q.reason));
  const raw = [
    `{"quarantinedAt":${JSON.stringify(answer.quarantinedAt)},"reasons":${reasons},"answer":`,
    answer.text,
    '}',
  ];
  // A short answer is scrubbed joined (cheap): a secret could then span all three parts.
  if (answer.text.length <= 2 * reach) return [scrub(raw.join(''))];
  const [head, text, end] = raw.map(scrub) as [string, string, string];
  const junctions = [head.slice(-reach) + text.slice(0, reach), text.slice(-reach) + end];
  if (junctions.some((around) => scrub(around) !== around)) return [scrub(raw.join(''))];
  // isUtf8: bytes that are not (decoded with replacement characters) are not what the text says.
  const asCame = text === answer.text && answer.bytes !== undefined && isUtf8(answer.bytes) ? answer.bytes : text;
  return [head, asCame, end];
}

/** A list page's items split back into the records and the quarantined, as the walk split them. */
function fromAnswer(parsed: { answer?: unknown; quarantinedAt?: unknown; reasons?: unknown }): ArchivedPage | null {
  const items = (parsed.answer as { items?: unknown } | null)?.items;
  if (!Array.isArray(items) || !Array.isArray(parsed.quarantinedAt) || !Array.isArray(parsed.reasons)) return null;
  const at = new Map<number, string>();
  parsed.quarantinedAt.forEach((i, n) => {
    at.set(Number(i), String((parsed.reasons as unknown[])[n] ?? ''));
  });
  if (at.size === 0) return { records: items };
  const records: unknown[] = [];
  const quarantined: { raw: unknown; reason: string }[] = [];
  items.forEach((item, i) => {
    const reason = at.get(i);
    if (reason === undefined) records.push(item);
    else quarantined.push({ raw: item, reason });
  });
  return { records, quarantined };
}

/** A page read back from its archive body: records kept in their storable form go with the quarantined. */
export function readArchivedPage(text: string): ArchivedPage | null {
  const parsed: unknown = JSON.parse(text);
  if (parsed && typeof parsed === 'object' && 'answer' in parsed) return fromAnswer(parsed);
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
