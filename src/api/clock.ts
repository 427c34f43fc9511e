import { utcText } from '../../connectors/service.js';
import type { Now } from '../../schemas/clock.js';
import { API_TIMESTAMP } from '../../schemas/wire.js';

/** `YYYY-MM-DD HH:MM:SS` read as UTC (the token's `expires_at`). Null when the text has another shape. */
export function parseApiTimestamp(text: string): Date | null {
  const m = API_TIMESTAMP.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m.map(Number) as [number, number, number, number, number, number, number];
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  return Number.isNaN(ms) ? null : new Date(ms);
}

/** The inverse of parseApiTimestamp: a Date as `YYYY-MM-DD HH:MM:SS` in UTC. */
export function formatApiTimestamp(date: Date): string {
  return utcText(date, 'seconds');
}

/** The HTTP `Date` header, or null when absent or unparsable. */
export function parseHttpDate(value: string | undefined): Date | null {
  if (!value) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms);
}

const SAMPLES = 9;

/**
 * The server's clock as seen through `Date` headers. The header has one-second resolution and is truncated, so a
 * sample reads the server time as Date + 0.5 s at the midpoint of the exchange; the median of the last few samples
 * keeps one slow answer from skewing it.
 */
export class ServerClock {
  private readonly offsets: number[] = [];
  private offset: number | null = null;
  /** An answer arrived; if none carried a Date header, the local clock is all there is. */
  private answered = false;

  constructor(private readonly localNow: Now) {}

  observe(serverDate: Date | null, sentAt: number, receivedAt: number): void {
    this.answered = true;
    if (!serverDate) return;
    const sample = serverDate.getTime() + 500 - (sentAt + receivedAt) / 2;
    this.offsets.push(sample);
    if (this.offsets.length > SAMPLES) this.offsets.shift();
    const sorted = [...this.offsets].sort((a, b) => a - b);
    this.offset = sorted[Math.floor(sorted.length / 2)] ?? sample;
  }

  /** Whether a Date header has been seen (otherwise nowMs() is the local clock, or null before any answer). */
  get hasSample(): boolean {
    return this.offset !== null;
  }

  /** Server minus local, in ms; 0 before any sample. */
  get offsetMs(): number {
    return this.offset ?? 0;
  }

  /** Server time now in epoch ms; the local time when answers came without a Date header; null before any answer. */
  nowMs(): number | null {
    if (this.offset === null) return this.answered ? this.localNow() : null;
    return this.localNow() + this.offset;
  }
}
