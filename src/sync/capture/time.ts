/**
 * Times of deliveries and records. Record timestamps (`updated_at`, a delivery's `datetime`) are wall-clock texts in
 * the service's record zone; `_deleted_at` and journal times are UTC. Ordering compares instants, so every text is
 * read into epoch milliseconds first.
 */
import { formatTimestamp } from '../clock.js';

const TEXT = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})/;

/** `YYYY-MM-DD HH:MM:SS` read as UTC wall time, in ms; null when the text has another shape. */
function wallMs(text: string): number | null {
  const m = TEXT.exec(text);
  if (!m) return null;
  const ms = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  return Number.isNaN(ms) ? null : ms;
}

/** A record-zone wall-clock text as an instant (epoch ms); null when unreadable. */
export function recordTimeMs(text: string | null | undefined, zone: string): number | null {
  if (typeof text !== 'string') return null;
  const wall = wallMs(text);
  if (wall === null || zone === 'UTC') return wall;
  // The zone's offset at that wall time: guess with the wall time as UTC, then correct once (exact outside the
  // hour a DST change repeats or skips).
  let guess = wall;
  for (let i = 0; i < 2; i++) {
    const shown = wallMs(formatTimestamp(new Date(guess), zone));
    if (shown === null) return wall;
    guess = wall - (shown - guess);
  }
  return guess;
}

/** A UTC text (`YYYY-MM-DD HH:MM:SS[.fff]`) as epoch ms; null when unreadable. */
export function utcMs(text: string | null | undefined): number | null {
  if (typeof text !== 'string') return null;
  const ms = Date.parse(`${text.slice(0, 23).replace(' ', 'T')}Z`);
  return Number.isNaN(ms) ? null : ms;
}
