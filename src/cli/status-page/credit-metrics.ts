/**
 * The credit window in `/metrics` (`serve` and `schedule` alike), from the same reading the status page and
 * `/status.json` show: the daemon's client's latest answer, else the newest reading recorded here. One source, so
 * the three never disagree on what is left.
 */
import type { WindowReading } from './sections.js';
import type { WaitingState } from './state.js';

const utcSeconds = (text: string) => Date.parse(`${text.replace(' ', 'T')}Z`) / 1000;

function gauge(name: string, help: string, value: number): string {
  return `# HELP ${name} ${help}\n# TYPE ${name} gauge\n${name} ${value}\n`;
}

export function creditMetricsText(reading: WindowReading | null, waiting: WaitingState | null): string {
  const parts = [
    gauge(
      'evsync_credits_waiting',
      "1 while the daemon's calls wait for the credit window to reset, else 0.",
      waiting ? 1 : 0,
    ),
  ];
  if (!reading) return parts.join('');
  if (reading.remaining !== null) {
    parts.push(
      gauge(
        'evsync_credits_remaining',
        'Credits left in the window as the service last reported them (X-Rate-Limit-Remaining of the latest answer).',
        reading.remaining,
      ),
    );
  }
  if (reading.limit !== null) {
    parts.push(gauge('evsync_credits_limit', 'Credits per window, as the service reported it.', reading.limit));
  }
  if (reading.resetAt !== null) {
    parts.push(
      gauge(
        'evsync_credits_window_reset_timestamp_seconds',
        'When the reported window resets (the answer time plus X-Rate-Limit-Reset).',
        utcSeconds(reading.resetAt),
      ),
    );
  }
  parts.push(
    gauge(
      'evsync_credits_reported_timestamp_seconds',
      'When the service reported the window those figures come from.',
      utcSeconds(reading.seenAt),
    ),
  );
  return parts.join('');
}
