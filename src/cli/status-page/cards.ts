/**
 * The page's figures at a glance, under the state: streams ok (and what the state says of the rest), the stalest
 * stream, the credit window as the service last reported it (to whom, when; its reset), webhook deliveries pending
 * (and waiting for credits), the last run. Each card's figure carries its value as data for tests and scripts.
 */
import type { StatusReport } from '../status/document.js';
import { clock, esc, num, span } from './html.js';
import { outcomeOf } from './runs-chart.js';
import { HISTORY_HOURS } from './sections.js';
import type { StreamHealth } from './streams.js';
import { pill } from './streams-table.js';

export const OUTCOME_MARK: Record<ReturnType<typeof outcomeOf>, string> = { ok: '✓', warn: '!', bad: '✕', live: '▶' };

function card(key: string, label: string, value: string, detail: string, data = ''): string {
  return `<div class="card" data-card="${key}"${data}><div class="k">${esc(label)}</div><div class="v">${value}</div><div class="d">${detail}</div></div>`;
}

/** Streams ok, and the state's word for the rest: "all fresh" only when the state says so. */
function streamsCard(doc: StatusReport): string {
  const streams = doc.streams ?? [];
  const count = (h: StreamHealth) => streams.filter((s) => s.health === h).length;
  const stale = doc.state?.stale.length ?? 0;
  const notes = [
    count('failing') ? `<span class="pill bad">${num(count('failing'))} failing</span>` : '',
    stale ? `<span class="pill warn">${num(stale)} stale</span>` : '',
    count('unavailable') ? `<span class="pill warn">${num(count('unavailable'))} unavailable</span>` : '',
    count('no data') ? `${num(count('no data'))} without data yet` : '',
  ].filter(Boolean);
  const level = doc.state?.level;
  const calm = level === 'fresh' ? 'all fresh' : level === 'unjudged' ? 'freshness not judged (no schedule known)' : '';
  const detail = notes.join(' ') || calm || (level === 'waiting' ? 'waiting for credits' : '');
  return card('streams', 'Streams ok', `${num(count('ok'))} <small>of ${num(streams.length)}</small>`, detail);
}

function stalestCard(doc: StatusReport): string {
  const stalest = [...(doc.streams ?? [])]
    .filter((s) => s.freshnessSeconds !== null)
    .sort((a, b) => (b.freshnessSeconds ?? 0) - (a.freshnessSeconds ?? 0))[0];
  return card(
    'freshness',
    'Stalest stream',
    stalest ? esc(span(stalest.freshnessSeconds)) : '–',
    stalest ? `${esc(stalest.stream)}: newest change ${esc(clock(stalest.newestChangeAt))} UTC` : 'nothing applied yet',
  );
}

/** The window as the service last reported it: what is left, of what, said when and to whom, and its reset. */
function creditsCard(doc: StatusReport, nowMs: number): string {
  const c = doc.credits?.current ?? null;
  if (!c) return card('credits', 'Credits this window', '–', 'no answer from the service recorded yet');
  const limit = c.limit ?? doc.credits?.limit ?? null;
  const resetMs = c.resetAt ? Date.parse(`${c.resetAt.replace(' ', 'T')}Z`) : Number.NaN;
  const resetIn = Number.isNaN(resetMs) ? null : Math.max(0, Math.round((resetMs - nowMs) / 1000));
  const said = `as the service said at ${esc(c.recordedAt.slice(11, 19))} UTC`;
  const reset = c.resetPassed
    ? `the window reset at ${esc(clock(c.resetAt))} UTC since (a full window until the next answer says)`
    : `resets ${esc(clock(c.resetAt))} UTC${resetIn === null ? '' : ` (in ${esc(span(resetIn))})`}`;
  const waiting = doc.state?.waiting ? ` ${pill('warn', '…', 'waiting')}` : '';
  return card(
    'credits',
    'Credits left this window',
    `${esc(num(c.remaining))} <small>of ${esc(num(limit))}</small>${waiting}`,
    `${said} · ${reset}`,
    ` data-remaining="${c.remaining ?? ''}" data-limit="${limit ?? ''}" data-seen="${esc(c.recordedAt)}"`,
  );
}

function deliveriesCard(doc: StatusReport): string {
  const d = doc.deliveries;
  const waiting = doc.state?.deliveriesWaiting;
  const detail = waiting
    ? `<span class="pill warn">${esc(num(waiting.pending))} wait for credits</span>`
    : d?.oldestPendingAgeSeconds != null
      ? `oldest waiting ${esc(span(d.oldestPendingAgeSeconds))}`
      : `${esc(num(d?.totals.received ?? 0))} received in ${HISTORY_HOURS} h`;
  return card('deliveries', 'Webhook deliveries pending', esc(num(d?.pending ?? 0)), detail);
}

function lastRunCard(doc: StatusReport): string {
  const last = doc.runs[0];
  if (!last) return card('last-run', 'Last run', '–', 'none yet');
  const o = outcomeOf(last.status);
  return card(
    'last-run',
    'Last run',
    pill(o, OUTCOME_MARK[o], last.status),
    `${esc(last.kind)} started ${esc(clock(last.startedAt))} UTC`,
  );
}

export function cards(doc: StatusReport, nowMs: number): string {
  const figures = doc.progress
    ? [creditsCard(doc, nowMs), lastRunCard(doc)]
    : [streamsCard(doc), creditsCard(doc, nowMs), stalestCard(doc), deliveriesCard(doc), lastRunCard(doc)];
  return `<div class="cards">\n${figures.join('\n')}\n</div>`;
}
