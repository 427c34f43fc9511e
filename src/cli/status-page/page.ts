/**
 * The status page: the status document (`evsync status --json`) rendered on the server as one self-contained HTML
 * page (inline CSS, inline SVG, no asset from anywhere), readable without JavaScript and at a phone's width without
 * sideways scrolling. The state that matters comes first (waiting for credits, failing, stale), then the figures,
 * then streams, credits, runs and deliveries (or, while a one-shot run holds the warehouse, its progress). Served
 * live by the admin server it carries a small script that refreshes it from `status.json`; as a file it carries none.
 */
import { DEFAULT_RATE_LIMIT, utcText } from '../../../connectors/service.js';
import { utcMs } from '../../sync/capture/time.js';
import type { RunInfo, StatusReport } from '../status/document.js';
import { chartRange, NARROW, NARROW_HOURS, type TimeAxis, timeAxis, WIDE } from './axis.js';
import { cards, OUTCOME_MARK } from './cards.js';
import { creditsChart } from './credits-chart.js';
import { deliveriesChart } from './deliveries-chart.js';
import { esc, num, span } from './html.js';
import { LIVE_SCRIPT } from './live-script.js';
import { progressSection } from './progress-section.js';
import { outcomeOf, runsChart } from './runs-chart.js';
import { HISTORY_HOURS } from './sections.js';
import { stateBanner } from './state-banner.js';
import { pill, streamsSection } from './streams-table.js';
import { STYLES } from './styles.js';

interface PageOptions {
  /** Add the script that refreshes the page from `status.json` (the admin server's page). */
  live: boolean;
}

function nowMsOf(doc: StatusReport): number {
  const ms = doc.generatedAt ? Date.parse(doc.generatedAt) : Number.NaN;
  return Number.isNaN(ms) ? 0 : ms;
}

/** A chart drawn wide (the whole range) and narrow (the last hours, for a phone): the stylesheet shows one. */
function chartPair(axes: Axes, draw: (axis: TimeAxis) => string): string {
  return `<div class="chart-box wide">${draw(axes.wide)}</div><div class="chart-box narrow">${draw(axes.narrow)}<p class="small">the last ${NARROW_HOURS} hours; wider screens show ${HISTORY_HOURS}</p></div>`;
}

interface Axes {
  wide: TimeAxis;
  narrow: TimeAxis;
}

function creditsSectionHtml(doc: StatusReport, axes: Axes): string {
  const credits = doc.credits ?? { limit: null, windowSeconds: null, current: null, windows: [] };
  const rows = credits.windows
    .map(
      (w) =>
        `<tr><td title="${esc(w.resetAt)} UTC"><span class="opt">${esc(w.resetAt.slice(0, 11))}</span>${esc(w.resetAt.slice(11, 16))}</td><td class="n">${esc(num(w.used))}</td><td class="n">${esc(num(w.limit))}</td><td class="n">${esc(num(w.spentByRuns))}</td></tr>`,
    )
    .join('');
  const windowText = credits.windowSeconds ? ` (${span(credits.windowSeconds)} each)` : '';
  return `<section id="credits" aria-labelledby="credits-h"><h2 id="credits-h">Credits</h2>
<p class="sub">Used per rate-limit window${esc(windowText)} over the last ${HISTORY_HOURS} hours as the service counted them (every run, backfill and daemon here records what it reads), against the limit it reported.</p>
<figure style="margin:0">${chartPair(axes, (axis) => creditsChart(credits, axis))}
<figcaption><ul class="legend"><li><i class="bar"></i>credits used in a window</li><li><i class="high"></i>90% of the limit or more</li><li><i class="limit"></i>limit</li></ul></figcaption></figure>
<details><summary>Windows as a table</summary><table class="compact"><thead><tr><th>window ends (UTC)</th><th class="n">used</th><th class="n">limit</th><th class="n">by evsync</th></tr></thead><tbody>${rows || '<tr><td colspan="4">none</td></tr>'}</tbody></table></details>
</section>`;
}

function runRow(r: RunInfo): string {
  const o = outcomeOf(r.status);
  const rows = r.rows.inserted + r.rows.updated + r.rows.deleted;
  const error = r.error
    ? `<tr class="err"><td colspan="6"><span class="reason">${esc(r.error.split('\n')[0])}</span></td></tr>`
    : '';
  return `<tr data-run="${esc(r.runId)}"${r.error ? ' class="has-err"' : ''}><td title="${esc(r.startedAt)} UTC">${r.startedAt ? `<span class="opt">${esc(r.startedAt.slice(5, 10))} </span>${esc(r.startedAt.slice(11, 16))}` : '–'}</td><td>${esc(r.kind)}</td><td>${pill(o, OUTCOME_MARK[o], r.status)}</td>
<td class="n opt">${r.durationMs === null ? '–' : esc(span(r.durationMs / 1000))}</td><td class="n">${esc(num(r.credits))}</td><td class="n opt">${esc(num(rows))}</td></tr>${error}`;
}

function runsSection(doc: StatusReport, axes: Axes): string {
  const timeline = doc.timeline ?? [];
  const shown = timeline.slice(0, 12);
  const more = timeline.length - shown.length;
  return `<section id="runs" aria-labelledby="runs-h"><h2 id="runs-h">Runs</h2>
<p class="sub">Syncs and reconciliations over the last ${HISTORY_HOURS} hours (start and duration); hover a bar for its figures.</p>
${chartPair(axes, (axis) => runsChart(timeline, axis))}
<ul class="legend"><li><i class="ok"></i>done</li><li><i class="warn"></i>partial or interrupted</li><li><i class="bad"></i>failed</li><li><i class="live"></i>running</li></ul>
<table class="runs"><thead><tr><th>started (UTC)</th><th>kind</th><th>outcome</th><th class="n opt">took</th><th class="n">credits</th><th class="n opt">rows</th></tr></thead>
<tbody>${shown.map(runRow).join('\n') || '<tr><td colspan="6">no run in the last 24 hours</td></tr>'}</tbody></table>
${more > 0 ? `<p class="small">${num(more)} more in status.json (<code>evsync status --json</code>).</p>` : ''}
</section>`;
}

function deliveriesSectionHtml(doc: StatusReport, axes: Axes): string {
  const d = doc.deliveries;
  if (!d) return '';
  const oldest = d.oldestPendingAgeSeconds === null ? '' : ` (oldest waiting ${esc(span(d.oldestPendingAgeSeconds))})`;
  return `<section id="deliveries" aria-labelledby="deliveries-h"><h2 id="deliveries-h">Webhook deliveries</h2>
<p class="sub">Per ${d.bucketMinutes} minutes over the last ${HISTORY_HOURS} hours.</p>
${chartPair(axes, (axis) => deliveriesChart(d, axis))}
<ul class="legend"><li><i class="received"></i>received</li><li><i class="settled"></i>applied</li><li><i class="refused"></i>refused (unreadable)</li><li><i class="pending"></i>pending at the bucket's end</li></ul>
<p class="now" data-k="deliveries"><strong>${esc(num(d.totals.received))}</strong> received · <strong>${esc(num(d.totals.settled))}</strong> applied · <strong>${esc(num(d.pending))}</strong> pending${oldest} · <strong>${esc(num(d.totals.refused))}</strong> refused</p>
</section>`;
}

/** What the charts draw, as instants: their shared range starts a little before the oldest. */
function instants(doc: StatusReport): number[] {
  const out: number[] = [];
  for (const w of doc.credits?.windows ?? []) {
    const end = utcMs(w.resetAt);
    if (end !== null) out.push(end - (w.windowMs ?? DEFAULT_RATE_LIMIT.windowSeconds * 1000));
  }
  for (const r of doc.timeline ?? []) out.push(utcMs(r.startedAt) ?? Number.NaN);
  for (const b of doc.deliveries?.buckets ?? []) {
    if (b.received + b.settled + b.refused + b.pendingAtEnd > 0) out.push(utcMs(b.at) ?? Number.NaN);
  }
  return out.filter((t) => !Number.isNaN(t));
}

/** The sections under the state and the cards: a one-shot run's progress, else the warehouse's. */
function sections(doc: StatusReport, nowMs: number): string {
  if (doc.progress) return progressSection(doc);
  const reset = doc.credits?.current?.resetAt ? utcMs(doc.credits.current.resetAt) : null;
  const drawn = instants(doc);
  const axes = {
    wide: timeAxis(chartRange(nowMs, HISTORY_HOURS, drawn, reset ?? nowMs), WIDE),
    narrow: timeAxis(chartRange(nowMs, NARROW_HOURS, drawn, reset ?? nowMs), NARROW),
  };
  return [
    streamsSection(doc, nowMs),
    creditsSectionHtml(doc, axes),
    runsSection(doc, axes),
    deliveriesSectionHtml(doc, axes),
  ].join('\n');
}

/** The whole page for a status document: the state first, the figures, then the sections. */
export function renderStatusPage(doc: StatusReport, options: PageOptions): string {
  const nowMs = nowMsOf(doc);
  const generated = utcText(nowMs, 'seconds');
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
${stateBanner(doc)}
${cards(doc, nowMs)}
${sections(doc, nowMs)}
</main>
${options.live ? `<script>${LIVE_SCRIPT}</script>` : ''}
</body></html>
`;
}
