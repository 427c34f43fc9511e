/**
 * The streams section: one row per stream (rows, freshness, how it is fed, webhook lag, last poll, rejected), the
 * ones that need a look first (failing, stale, unavailable), then the rest by name. At a phone's width each row is
 * a card of label/value pairs on a two-column grid: every value is one element, so it stays whole and aligned.
 */
import type { StatusReport } from '../status/document.js';
import { clock, esc, num, span } from './html.js';
import type { StaleStream } from './state.js';
import type { StreamHealth, StreamRow } from './streams.js';

const HEALTH: Record<StreamHealth, { cls: string; mark: string }> = {
  ok: { cls: 'ok', mark: '✓' },
  failing: { cls: 'bad', mark: '✕' },
  unavailable: { cls: 'warn', mark: '⊘' },
  'no data': { cls: 'idle', mark: '…' },
};

export function pill(cls: string, mark: string, word: string): string {
  return `<span class="pill ${cls}"><span aria-hidden="true">${mark}</span>${esc(word)}</span>`;
}

function secondsSince(text: string | null, nowMs: number): number | null {
  const ms = text ? Date.parse(`${text.slice(0, 19).replace(' ', 'T')}Z`) : Number.NaN;
  return Number.isNaN(ms) ? null : Math.max(0, Math.round((nowMs - ms) / 1000));
}

/** A table cell whose value is one element (at a phone's width: a label above it). */
function cell(key: string, label: string, value: string, cls = ''): string {
  return `<td data-label="${esc(label)}" data-k="${key}"${cls ? ` class="${cls}"` : ''}><span class="v">${value}</span></td>`;
}

function statusCell(s: StreamRow, stale: StaleStream | undefined): string {
  const h = HEALTH[s.health];
  const staleNote = stale ? ` ${pill('warn', '!', `stale ${span(stale.freshnessSeconds)}`)}` : '';
  return cell('health', 'Status', `${pill(h.cls, h.mark, s.health)}${staleNote}`);
}

function streamRow(s: StreamRow, nowMs: number, stale: StaleStream | undefined): string {
  const lag =
    s.lagP50Seconds === null
      ? '–'
      : `p50 ${s.lagP50Seconds} s · p95 ${s.lagP95Seconds} s <small>(${num(s.lagSamples)})</small>`;
  const freshness =
    s.newestChangeAt === null
      ? '–'
      : `<span data-k="age" data-at="${esc(s.newestChangeAt)}">${esc(span(s.freshnessSeconds))}</span> <small>at ${esc(s.newestChangeAt.slice(11))} UTC</small>`;
  const polled = secondsSince(s.lastPollAt, nowMs);
  const poll = s.lastPollAt === null ? '–' : `${esc(span(polled))} ago <small>${esc(clock(s.lastPollAt))} UTC</small>`;
  return `<tr data-stream="${esc(s.stream)}" data-health="${esc(s.health)}"${stale ? ' data-stale="true"' : ''}>
<th scope="row">${esc(s.stream)}${s.reason ? `<span class="reason" data-k="reason">${esc(s.reason)}</span>` : ''}</th>
${statusCell(s, stale)}
${cell('rows', 'Rows', esc(num(s.rows)), 'n')}
${cell('freshness', 'Freshness', freshness)}
${cell('fed', 'Fed by', s.fed === 'webhook' ? 'webhook' : 'polling', 'fed')}
${cell('lag', 'Webhook lag', lag)}
${cell('poll', 'Last poll', poll)}
${cell('rejected', 'Rejected', esc(num(s.rejected)), 'n')}
</tr>`;
}

/** Failing first, then stale (stalest first), unavailable, without data, then the rest; by name within each. */
export function pageOrder(streams: readonly StreamRow[], stale: readonly StaleStream[]): StreamRow[] {
  const staleRank = new Map(stale.map((x, i) => [x.stream, i]));
  const rank = (s: StreamRow) =>
    s.health === 'failing'
      ? 0
      : staleRank.has(s.stream)
        ? 1
        : s.health === 'unavailable'
          ? 2
          : s.health === 'no data'
            ? 3
            : 4;
  return [...streams].sort(
    (a, b) =>
      rank(a) - rank(b) ||
      (staleRank.get(a.stream) ?? 0) - (staleRank.get(b.stream) ?? 0) ||
      a.stream.localeCompare(b.stream),
  );
}

export function streamsSection(doc: StatusReport, nowMs: number): string {
  const stale = doc.state?.stale ?? [];
  const rows = pageOrder(doc.streams ?? [], stale);
  const body = rows.length
    ? rows
        .map((s) =>
          streamRow(
            s,
            nowMs,
            stale.find((x) => x.stream === s.stream),
          ),
        )
        .join('\n')
    : `<tr><td colspan="8">No stream synced yet: run <code>evsync sync</code> or <code>evsync serve</code>.</td></tr>`;
  return `<section id="streams" aria-labelledby="streams-h"><h2 id="streams-h">Streams</h2>
<p class="sub">Freshness is the age of the newest change applied, by webhook or by polling; the ones that need a look come first.</p>
<table class="streams"><thead><tr><th scope="col">Stream</th><th scope="col">Status</th><th scope="col" class="n">Rows</th>
<th scope="col">Freshness</th><th scope="col">Fed by</th><th scope="col">Webhook lag</th><th scope="col">Last poll</th>
<th scope="col" class="n">Rejected</th></tr></thead><tbody>
${body}
</tbody></table></section>`;
}
