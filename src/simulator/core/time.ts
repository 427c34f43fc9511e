/**
 * Time: the simulated clock, the record timestamp format and the zone records are written in.
 *
 * Record timestamps are stored and compared as "wall seconds": the wall-clock time in the record zone, counted as if
 * it were UTC. Formatting wall seconds as UTC yields exactly the `YYYY-MM-DD HH:MM:SS` text the API sends, and
 * comparing wall seconds numerically is the same as comparing those texts, which is what the service's search does.
 */

export class SimClock {
  private offsetMs = 0;

  nowMs(): number {
    return Date.now() + this.offsetMs;
  }

  advance(seconds: number): void {
    this.offsetMs += seconds * 1000;
  }
}

const TWO = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
const dayCache = new Map<number, string>();

/** `YYYY-MM-DD` of a day number (days since 1970-01-01), cached: Date#toISOString is slow on the hot path. */
function dayText(day: number): string {
  let text = dayCache.get(day);
  if (text === undefined) {
    text = new Date(day * 86_400_000).toISOString().slice(0, 10);
    if (dayCache.size > 50_000) dayCache.clear();
    dayCache.set(day, text);
  }
  return text;
}

/** Epoch (or wall) seconds to `YYYY-MM-DD HH:MM:SS`, read as UTC. */
export function formatTimestamp(seconds: number): string {
  const s = Math.floor(seconds);
  const day = Math.floor(s / 86_400);
  let rest = s - day * 86_400;
  const h = Math.floor(rest / 3600);
  rest -= h * 3600;
  const m = Math.floor(rest / 60);
  return `${dayText(day)} ${TWO[h]}:${TWO[m]}:${TWO[rest - m * 60]}`;
}

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/** `YYYY-MM-DD HH:MM:SS` read as UTC, in seconds; null when the text is not exactly that shape. */
export function parseTimestamp(text: string): number | null {
  const m = TIMESTAMP.exec(text);
  if (!m) return null;
  const ms = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  return Number.isNaN(ms) ? null : ms / 1000;
}

/** Converts epoch seconds to wall seconds of one IANA zone. Offsets are cached per quarter hour. */
export class RecordZone {
  private readonly format: Intl.DateTimeFormat | null;
  private readonly cache = new Map<number, number>();

  constructor(readonly name: string) {
    // Throws RangeError for an unknown zone, which is what a caller passing a bad --record-tz should see.
    const format = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    this.format = name === 'UTC' || name === 'Etc/UTC' ? null : format;
  }

  wall(epochSeconds: number): number {
    if (!this.format) return Math.floor(epochSeconds);
    const bucket = Math.floor(epochSeconds / 900);
    let offset = this.cache.get(bucket);
    if (offset === undefined) {
      offset = this.offsetAt(bucket * 900);
      this.cache.set(bucket, offset);
    }
    return Math.floor(epochSeconds) + offset;
  }

  private offsetAt(epochSeconds: number): number {
    const parts: Record<string, number> = {};
    for (const p of this.format!.formatToParts(new Date(epochSeconds * 1000))) {
      if (p.type !== 'literal') parts[p.type] = Number(p.value);
    }
    const asUtc = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
    return Math.round(asUtc / 1000 - epochSeconds);
  }
}
