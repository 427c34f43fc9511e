/**
 * A one-shot run's progress, when the document is one (a `sync` or `backfill` holding the warehouse answered): items
 * done of those planned so far, credits spent and still needed, when it should end and why, and per stream what it
 * read. The warehouse's own sections come back once the run ends and lets go of the file.
 */
import type { RunProgress } from '../../sync/index.js';
import type { StatusReport } from '../status/document.js';
import { esc, num, span } from './html.js';

const clock = (iso: string) => `${iso.slice(11, 16)} UTC`;

function figure(key: string, label: string, value: string): string {
  return `<div class="fig" data-k="${key}"><span class="k">${esc(label)}</span> <span class="v">${value}</span></div>`;
}

function streamTable(p: RunProgress): string {
  if (p.streams.length === 0) return '';
  const rows = p.streams
    .map(
      (s) =>
        `<tr data-progress="${esc(s.stream)}"><th scope="row">${esc(s.stream)}</th><td class="n">${num(s.done)}</td><td class="n">${num(s.running)}</td><td class="n">${num(s.failed + s.skipped)}</td><td class="n">${num(s.pages)}</td><td class="n">${num(s.rows)}</td></tr>`,
    )
    .join('\n');
  return `<table class="compact"><thead><tr><th>stream</th><th class="n">done</th><th class="n">now</th><th class="n">failed, skipped</th><th class="n">pages</th><th class="n">rows</th></tr></thead><tbody>
${rows}
</tbody></table>`;
}

export function progressSection(doc: StatusReport): string {
  const p = doc.progress;
  if (!p) return '';
  const i = p.items;
  const title = p.mode === 'backfill' ? 'Backfill in progress' : 'Sync in progress';
  const events = p.events === null ? '' : `, ${num(p.events)} events in scope`;
  return `<section id="progress" aria-labelledby="progress-h"><h2 id="progress-h">${title}</h2>
<p class="sub">Run ${esc(p.runId ?? '(starting)')} since ${esc(clock(p.startedAt))}; ${esc(doc.servedBy ?? '')} holds the warehouse: its tables, runs and charts show here again once it ends.</p>
<div class="figs">
${figure('items', 'Items done', `${num(i.done)} <small>of ${num(i.queued)} planned so far${events}</small>`)}
${figure('spent', 'Credits spent', num(p.credits.spent))}
${figure('needed', 'Credits still to spend', `about ${num(p.credits.needed)}`)}
${figure('eta', 'Ends about', `${esc(clock(p.eta.at))} <small>(in ${esc(span(p.eta.seconds))})</small>`)}
</div>
<p class="small" data-k="eta-basis">${esc(p.eta.basis)}.</p>
${streamTable(p)}
</section>`;
}
