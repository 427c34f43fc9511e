/**
 * The status page: the status document (`evsync status --json`) rendered on the server as one self-contained HTML
 * page (inline CSS, inline SVG, no asset from anywhere), readable without JavaScript. Served live by the admin
 * server it carries a small script that refreshes it from `status.json`; written as a file it carries none.
 */
import { utcMs } from '../../sync/capture/time.js';
import type { RunInfo, StatusReport } from '../commands/status.js';
import { chartRange, type TimeAxis, timeAxis } from './axis.js';
import { creditsChart } from './credits-chart.js';
import { deliveriesChart } from './deliveries-chart.js';
import { clock, esc, num, span } from './html.js';
import { LIVE_SCRIPT } from './live-script.js';
import { outcomeOf, runsChart } from './runs-chart.js';
import { HISTORY_HOURS } from './sections.js';
import type { StreamHealth, StreamRow } from './streams.js';
import { STYLES } from './styles.js';

export interface PageOptions {
  /** Add the script that refreshes the page from `status.json` (the admin server's page). */
  live: boolean;
}

const HEALTH: Record<StreamHealth, { cls: string; mark: string }> = {
  ok: { cls: 'ok', mark: '✓' },
  failing: { cls: 'bad', mark: '✕' },
  unavailable: { cls: 'warn', mark: '⊘' },
  'no data': { cls: 'idle', mark: '…' },
};

const OUTCOME_MARK: Record<ReturnType<typeof outcomeOf>, string> = { ok: '✓', warn: '!', bad: '✕', live: '▶' };

function pill(cls: string, mark: string, word: string): string {
  return `<span class="pill ${cls}"><span aria-hidden="true">${mark}</span>${esc(word)}</span>`;
}

function nowMsOf(doc: StatusReport): number {
  const ms = doc.generatedAt ? Date.parse(doc.generatedAt) : Number.NaN;
  return Number.isNaN(ms) ? Date.now() : ms;
}

function ago(seconds: number | null, at: string | null): string {
  return at === null ? '–' : `${esc(span(seconds))} ago <small>${esc(clock(at))} UTC</small>`;
}

function secondsSince(text: string | null, nowMs: number): number | null {
  const ms = text ? Date.parse(`${text.slice(0, 19).replace(' ', 'T')}Z`) : Number.NaN;
  return Number.isNaN(ms) ? null : Math.max(0, Math.round((nowMs - ms) / 1000));
}

function streamRow(s: StreamRow, nowMs: number): string {
  const h = HEALTH[s.health];
  const lag =
    s.lagP50Seconds === null
      ? '–'
      : `p50 ${s.lagP50Seconds} s · p95 ${s.lagP95Seconds} s <small>(${num(s.lagSamples)})</small>`;
  const freshness =
    s.newestChangeAt === null
      ? '–'
      : `<span data-k="age" data-at="${esc(s.newestChangeAt)}">${esc(span(s.freshnessSeconds))}</span> <small>at ${esc(s.newestChangeAt.slice(11))} UTC</small>`;
  return `<tr data-stream="${esc(s.stream)}" data-health="${esc(s.health)}">
<th scope="row">${esc(s.stream)}${s.reason ? `<span class="reason" data-k="reason">${esc(s.reason)}</span>` : ''}</th>
<td data-label="Status" data-k="health">${pill(h.cls, h.mark, s.health)}</td>
<td data-label="Rows" class="n" data-k="rows">${esc(num(s.rows))}</td>
<td data-label="Freshness" data-k="freshness">${freshness}</td>
<td data-label="Fed by" class="fed" data-k="fed">${s.fed === 'webhook' ? 'webhook' : 'polling'}</td>
<td data-label="Webhook lag" data-k="lag">${lag}</td>
<td data-label="Last poll" data-k="poll">${ago(secondsSince(s.lastPollAt, nowMs), s.lastPollAt)}</td>
<td data-label="Rejected" class="n" data-k="rejected">${esc(num(s.rejected))}</td>
</tr>`;
}

function streamsSection(doc: StatusReport, nowMs: number): string {
  const rows = doc.streams ?? [];
  const body = rows.length
    ? rows.map((s) => streamRow(s, nowMs)).join('\n')
    : `<tr><td colspan="8">No stream synced yet: run <code>evsync sync</code> or <code>evsync serve</code>.</td></tr>`;
  return `<section id="streams" aria-labelledby="streams-h"><h2 id="streams-h">Streams</h2>
<p class="sub">Freshness is the age of the newest change applied, by webhook or by polling.</p>
<table class="streams"><thead><tr><th scope="col">Stream</th><th scope="col">Status</th><th scope="col" class="n">Rows</th>
<th scope="col">Freshness</th><th scope="col">Fed by</th><th scope="col">Webhook lag</th><th scope="col">Last poll</th>
<th scope="col" class="n">Rejected</th></tr></thead><tbody>
${body}
</tbody></table></section>`;
}

function card(key: string, label: string, value: string, detail: string): string {
  return `<div class="card" data-card="${key}"><div class="k">${esc(label)}</div><div class="v">${value}</div><div class="d">${detail}</div></div>`;
}

function cards(doc: StatusReport, nowMs: number): string {
  const streams = doc.streams ?? [];
  const count = (h: StreamHealth) => streams.filter((s) => s.health === h).length;
  const troubled = count('failing') + count('unavailable');
  const stalest = [...streams]
    .filter((s) => s.freshnessSeconds !== null)
    .sort((a, b) => (b.freshnessSeconds ?? 0) - (a.freshnessSeconds ?? 0))[0];
  const c = doc.credits?.current ?? null;
  const limit = doc.credits?.limit ?? null;
  const resetMs = c?.resetAt ? Date.parse(`${c.resetAt.replace(' ', 'T')}Z`) : Number.NaN;
  const resetIn = Number.isNaN(resetMs) ? null : Math.max(0, Math.round((resetMs - nowMs) / 1000));
  const creditsDetail = c
    ? c.resetPassed
      ? `the window reset at ${esc(clock(c.resetAt))} UTC (full limit since)`
      : `of ${esc(num(limit))} left · resets ${esc(clock(c.resetAt))} UTC${resetIn === null ? '' : ` (in ${esc(span(resetIn))})`}`
    : 'no run recorded yet';
  const d = doc.deliveries;
  const last = doc.runs[0];
  return `<div class="cards">
${card('streams', 'Streams ok', `${num(count('ok'))} <small>of ${num(streams.length)}</small>`, troubled ? `<span class="pill bad">${num(count('failing'))} failing</span> ${count('unavailable') ? `<span class="pill warn">${num(count('unavailable'))} unavailable</span>` : ''}` : count('no data') ? `${num(count('no data'))} without data yet` : 'all fresh and answering')}
${card('freshness', 'Stalest stream', stalest ? esc(span(stalest.freshnessSeconds)) : '–', stalest ? `${esc(stalest.stream)}: newest change ${esc(clock(stalest.newestChangeAt))} UTC` : 'nothing applied yet')}
${card('credits', 'Credits this window', c ? (c.resetPassed ? esc(num(limit)) : esc(num(c.remaining))) : '–', creditsDetail)}
${card('deliveries', 'Webhook deliveries pending', esc(num(d?.pending ?? 0)), d?.oldestPendingAgeSeconds != null ? `oldest waiting ${esc(span(d.oldestPendingAgeSeconds))}` : `${esc(num(d?.totals.received ?? 0))} received in ${HISTORY_HOURS} h`)}
${card('last-run', 'Last run', last ? pill(outcomeOf(last.status), OUTCOME_MARK[outcomeOf(last.status)], last.status) : '–', last ? `${esc(last.kind)} started ${esc(clock(last.startedAt))} UTC` : 'none yet')}
</div>`;
}

function creditsSectionHtml(doc: StatusReport, axis: TimeAxis): string {
  const credits = doc.credits ?? { limit: null, windowSeconds: null, current: null, windows: [] };
  const rows = credits.windows
    .map(
      (w) =>
        `<tr><td>${esc(w.resetAt)}</td><td class="n">${esc(num(w.used))}</td><td class="n">${esc(num(w.limit))}</td><td class="n">${esc(num(w.spentByRuns))}</td></tr>`,
    )
    .join('');
  const windowText = credits.windowSeconds ? ` (${span(credits.windowSeconds)} each)` : '';
  return `<section id="credits" aria-labelledby="credits-h"><h2 id="credits-h">Credits</h2>
<p class="sub">Used per rate-limit window${esc(windowText)} over the last ${HISTORY_HOURS} hours, against the limit the service reported.</p>
<figure style="margin:0">${creditsChart(credits, axis)}
<figcaption><ul class="legend"><li><i class="bar"></i>credits used in a window</li><li><i class="high"></i>90% of the limit or more</li><li><i class="limit"></i>limit</li></ul></figcaption></figure>
<details><summary>Windows as a table</summary><table><thead><tr><th>window ends (UTC)</th><th class="n">used</th><th class="n">limit</th><th class="n">by evsync runs</th></tr></thead><tbody>${rows || '<tr><td colspan="4">none</td></tr>'}</tbody></table></details>
</section>`;
}

function runRow(r: RunInfo): string {
  const o = outcomeOf(r.status);
  const rows = r.rows.inserted + r.rows.updated + r.rows.deleted;
  const error = r.error
    ? `<tr class="err"><td colspan="6"><span class="reason">${esc(r.error.split('\n')[0])}</span></td></tr>`
    : '';
  return `<tr data-run="${esc(r.runId)}"${r.error ? ' class="has-err"' : ''}><td title="${esc(r.startedAt)} UTC">${esc(r.startedAt?.slice(5, 16) ?? '–')}</td><td>${esc(r.kind)}</td><td>${pill(o, OUTCOME_MARK[o], r.status)}</td>
<td class="n">${r.durationMs === null ? '–' : esc(span(r.durationMs / 1000))}</td><td class="n">${esc(num(r.credits))}</td><td class="n opt">${esc(num(rows))}</td></tr>${error}`;
}

function runsSection(doc: StatusReport, axis: TimeAxis): string {
  const timeline = doc.timeline ?? [];
  const shown = timeline.slice(0, 12);
  const more = timeline.length - shown.length;
  return `<section id="runs" aria-labelledby="runs-h"><h2 id="runs-h">Runs</h2>
<p class="sub">Syncs and reconciliations over the last ${HISTORY_HOURS} hours (start and duration); hover a bar for its figures.</p>
${runsChart(timeline, axis)}
<ul class="legend"><li><i class="ok"></i>done</li><li><i class="warn"></i>partial or interrupted</li><li><i class="bad"></i>failed</li><li><i class="live"></i>running</li></ul>
<table class="runs"><thead><tr><th>started (UTC)</th><th>kind</th><th>outcome</th><th class="n">took</th><th class="n">credits</th><th class="n opt">rows</th></tr></thead>
<tbody>${shown.map(runRow).join('\n') || '<tr><td colspan="6">no run in the last 24 hours</td></tr>'}</tbody></table>
${more > 0 ? `<p class="small">${num(more)} more in status.json (<code>evsync status --json</code>).</p>` : ''}
</section>`;
}

function deliveriesSectionHtml(doc: StatusReport, axis: TimeAxis): string {
  const d = doc.deliveries;
  if (!d) return '';
  const oldest = d.oldestPendingAgeSeconds === null ? '' : ` (oldest waiting ${esc(span(d.oldestPendingAgeSeconds))})`;
  return `<section id="deliveries" aria-labelledby="deliveries-h"><h2 id="deliveries-h">Webhook deliveries</h2>
<p class="sub">Per ${d.bucketMinutes} minutes over the last ${HISTORY_HOURS} hours.</p>
${deliveriesChart(d, axis)}
<ul class="legend"><li><i class="received"></i>received</li><li><i class="settled"></i>applied</li><li><i class="refused"></i>refused (unreadable)</li><li><i class="pending"></i>pending at the bucket's end</li></ul>
<p class="now" data-k="deliveries"><strong>${esc(num(d.totals.received))}</strong> received · <strong>${esc(num(d.totals.settled))}</strong> applied · <strong>${esc(num(d.pending))}</strong> pending${oldest} · <strong>${esc(num(d.totals.refused))}</strong> refused</p>
</section>`;
}

/** What the charts draw, as instants: their shared range starts a little before the oldest. */
function instants(doc: StatusReport): number[] {
  const out: number[] = [];
  for (const w of doc.credits?.windows ?? []) {
    const end = utcMs(w.resetAt);
    if (end !== null) out.push(end - (w.windowMs ?? 600_000));
  }
  for (const r of doc.timeline ?? []) out.push(utcMs(r.startedAt) ?? Number.NaN);
  for (const b of doc.deliveries?.buckets ?? []) {
    if (b.received + b.settled + b.refused + b.pendingAtEnd > 0) out.push(utcMs(b.at) ?? Number.NaN);
  }
  return out.filter((t) => !Number.isNaN(t));
}

/** The whole page for a status document. */
export function renderStatusPage(doc: StatusReport, options: PageOptions): string {
  const nowMs = nowMsOf(doc);
  const reset = doc.credits?.current?.resetAt ? utcMs(doc.credits.current.resetAt) : null;
  const axis = timeAxis(chartRange(nowMs, HISTORY_HOURS, instants(doc), reset ?? nowMs));
  const generated = new Date(nowMs).toISOString().slice(0, 19).replace('T', ' ');
  const who = doc.servedBy ? ` · ${esc(doc.servedBy)}` : '';
  const live = options.live
    ? `<span class="live-note" id="live" aria-live="polite">refreshes every 15 s</span>`
    : `<span class="live-note">a snapshot: <code>evsync status --html</code></span>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
<title>evsync status</title>
<style>${STYLES}</style></head>
<body><header class="top"><div class="wrap"><h1><b>evsync</b> status</h1>
<span class="meta">${esc(doc.db)}${who} · as of <time id="generated" datetime="${esc(doc.generatedAt ?? '')}">${esc(generated)} UTC</time></span> ${live}</div></header>
<main class="wrap">
${cards(doc, nowMs)}
${streamsSection(doc, nowMs)}
${creditsSectionHtml(doc, axis)}
${runsSection(doc, axis)}
${deliveriesSectionHtml(doc, axis)}
</main>
${options.live ? `<script>${LIVE_SCRIPT}</script>` : ''}
</body></html>
`;
}
