/**
 * The first thing on the page: the state that matters (status-page/state.ts) in words, with its colour and symbol:
 * waiting for the credit window (until when, who), deliveries waiting for credits, failing streams, stale ones (by
 * how much); or "all fresh", said only when it is true.
 */
import type { StatusReport } from '../status/document.js';
import { esc, span } from './html.js';
import type { StateLevel, StatusState } from './state.js';

const LOOK: Record<StateLevel, { cls: string; mark: string; word: string }> = {
  failing: { cls: 'bad', mark: '✕', word: 'failing' },
  waiting: { cls: 'warn', mark: '…', word: 'waiting for credits' },
  stale: { cls: 'warn', mark: '!', word: 'stale' },
  fresh: { cls: 'ok', mark: '✓', word: 'all fresh' },
  unjudged: { cls: 'idle', mark: '?', word: 'freshness not judged' },
  empty: { cls: 'idle', mark: '…', word: 'no data yet' },
  running: { cls: 'live', mark: '▶', word: 'running' },
};

const clock = (iso: string | null) => (iso ? `${iso.slice(11, 16)} UTC` : 'its reset (not known yet)');

function line(key: string, html: string): string {
  return `<li data-k="${key}">${html}</li>`;
}

/** What the waiting says, with its time in bold: the line a person looks for first. */
function waitingLine(s: StatusState): string {
  const w = s.waiting;
  if (!w) return '';
  const left = w.inSeconds === null ? '' : ` (in ${esc(span(w.inSeconds))})`;
  const why = w.reason === '429' ? ': the service answered 429' : ': the credits of this window are spent';
  return line(
    'waiting',
    `Waiting for the credit window until <strong data-k="until" data-at="${esc(w.until ?? '')}">${esc(clock(w.until))}</strong>${left}${why}. <small>${esc(w.who)}</small>`,
  );
}

function deliveriesLine(s: StatusState): string {
  const d = s.deliveriesWaiting;
  if (!d) return '';
  const oldest = d.oldestSeconds === null ? '' : `, the oldest for ${esc(span(d.oldestSeconds))}`;
  return line(
    'deliveries-waiting',
    `<strong>${esc(d.pending.toLocaleString('en-US'))}</strong> webhook deliveries wait for credits to re-read their records${oldest}.`,
  );
}

function staleLine(s: StatusState): string {
  if (s.stale.length === 0) return '';
  const items = s.stale
    .map(
      (x) =>
        `<span class="nowrap" data-stale="${esc(x.stream)}"><b>${esc(x.stream)}</b> ${esc(span(x.freshnessSeconds))} old</span>`,
    )
    .join(', ');
  const every = [...new Set(s.stale.map((x) => x.cadenceSeconds))].map((x) => span(x)).join(' / ');
  return line(
    'stale',
    `<strong>${s.stale.length}</strong> stream${s.stale.length === 1 ? '' : 's'} stale (older than their cadence, every ${esc(every)}): ${items}.`,
  );
}

function failingLine(s: StatusState): string {
  if (s.failing.length === 0) return '';
  return line('failing', `<strong>${s.failing.length}</strong> failing: ${esc(s.failing.join(', '))}.`);
}

/** What the calm states say (nothing waits, fails or is stale): the summary, and what it was judged against. */
function calmLine(s: StatusState): string {
  const c = s.cadence;
  const against = c
    ? ` <small>Polled every ${esc(span(c.pollSeconds))}${c.reconcileSeconds ? `, webhook-fed streams reconciled every ${esc(span(c.reconcileSeconds))}` : ''} (${esc(c.source)}).</small>`
    : '';
  return line('summary', `${esc(s.summary.charAt(0).toUpperCase() + s.summary.slice(1))}.${against}`);
}

export function stateBanner(doc: StatusReport): string {
  const s = doc.state;
  if (!s) return '';
  const look = LOOK[s.level];
  const problems = [failingLine(s), waitingLine(s), deliveriesLine(s), staleLine(s)].filter(Boolean);
  const running = s.level === 'running' ? line('summary', esc(s.summary)) : '';
  const items = problems.length ? problems.join('') : running || calmLine(s);
  return `<section id="state" class="state ${look.cls}" data-level="${esc(s.level)}" aria-labelledby="state-h">
<h2 id="state-h"><span class="pill ${look.cls}"><span aria-hidden="true">${look.mark}</span>${esc(look.word)}</span></h2>
<ul class="state-list">${items}</ul>
</section>`;
}
