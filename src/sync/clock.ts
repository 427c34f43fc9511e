/**
 * Record timestamps are zone-less `YYYY-MM-DD HH:MM:SS` strings, compared by the service as text. The signpost
 * must therefore be written in the zone the service writes records in, from the server's clock (not ours).
 */
import { utcText } from '../../connectors/service.js';

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** `date` as the wall-clock time of `timeZone`, in the record format. */
export function formatTimestamp(date: Date, timeZone = 'UTC'): string {
  if (timeZone === 'UTC') return utcText(date, 'seconds');
  const parts: Record<string, string> = {};
  for (const p of formatter(timeZone).formatToParts(date)) parts[p.type] = p.value;
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`;
}

/** Throws a clear error for a zone Intl does not know, before any credit is spent. */
export function assertTimeZone(timeZone: string): void {
  try {
    formatter(timeZone);
  } catch {
    throw new Error(`unknown time zone "${timeZone}" (use an IANA name such as Europe/Paris or UTC)`);
  }
}

/** A record-format timestamp read as UTC (for arithmetic on ages; not for comparisons with the service). */
export function parseTimestampUtc(text: string): Date {
  return new Date(`${text.replace(' ', 'T')}Z`);
}

export function hoursBetween(earlier: string, later: Date): number {
  return (later.getTime() - parseTimestampUtc(earlier).getTime()) / 3_600_000;
}
