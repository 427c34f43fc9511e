/**
 * Runs over the last 24 hours as a timeline: one lane per kind (sync, backfill, reconcile, ...), each run a bar from
 * its start for its duration, shaded by outcome, with its figures in a tooltip. The legend names every outcome in
 * words: colour is never the only label.
 */

import { utcMs } from '../../sync/capture/time.js';
import type { RunInfo } from '../status/document.js';
import { rangeWords, svg, type TimeAxis, timeTicks } from './axis.js';
import { esc, num, span } from './html.js';

const LANE = 30;
const TOP = 6;
const MIN_BAR = 5;

/** The outcome class (and word) of a run status. */
export function outcomeOf(status: string): 'ok' | 'warn' | 'bad' | 'live' {
  if (status === 'done') return 'ok';
  if (status === 'running') return 'live';
  if (status === 'partial' || status === 'interrupted') return 'warn';
  return 'bad';
}

function runTitle(r: RunInfo): string {
  const rows = r.rows.inserted + r.rows.updated + r.rows.deleted;
  const parts = [
    `${r.kind} ${r.status}`,
    `started ${r.startedAt ?? '?'} UTC`,
    r.durationMs === null ? 'still running' : `took ${span(r.durationMs / 1000)}`,
    `${num(r.credits)} credits`,
    `${num(rows)} rows`,
  ];
  if (r.error) parts.push(r.error.split('\n')[0]!);
  return parts.join(', ');
}

export function runsChart(runs: readonly RunInfo[], axis: TimeAxis): string {
  const nowMs = axis.nowMs;
  const kinds = [...new Set(runs.map((r) => r.kind))].sort();
  const height = TOP + Math.max(1, kinds.length) * LANE + 24;
  const bottom = TOP + Math.max(1, kinds.length) * LANE;
  const parts: string[] = [];
  kinds.forEach((kind, i) => {
    const y = TOP + i * LANE;
    parts.push(
      `<line class="lane" x1="${axis.left}" x2="${axis.right}" y1="${y + LANE / 2}" y2="${y + LANE / 2}"/>`,
      `<text class="axis" x="${axis.left - 6}" y="${y + LANE / 2}" text-anchor="end" dominant-baseline="middle">${esc(kind)}</text>`,
    );
  });
  let drawn = 0;
  for (const run of runs) {
    const start = utcMs(run.startedAt);
    if (start === null) continue;
    const end = run.durationMs === null ? nowMs : start + run.durationMs;
    if (end < axis.fromMs) continue;
    drawn += 1;
    const x0 = axis.x(start);
    const width = Math.max(MIN_BAR, axis.x(end) - x0);
    const y = TOP + kinds.indexOf(run.kind) * LANE + 5;
    parts.push(
      `<rect class="run ${outcomeOf(run.status)}" x="${Math.min(x0, axis.right - width).toFixed(1)}" y="${y}" width="${width.toFixed(1)}" height="${LANE - 10}" rx="2" data-run="${esc(run.runId)}" data-status="${esc(run.status)}"><title>${esc(runTitle(run))}</title></rect>`,
    );
  }
  parts.push(
    `<line class="base" x1="${axis.left}" x2="${axis.right}" y1="${bottom}" y2="${bottom}"/>`,
    timeTicks(axis, bottom, TOP),
  );
  if (drawn === 0) {
    parts.push(
      `<text class="empty" x="${axis.width / 2}" y="${TOP + LANE / 2}" text-anchor="middle" dominant-baseline="middle">no run in ${rangeWords(axis)}</text>`,
    );
  }
  return svg(axis, height, `Timeline of ${runs.length} run(s)`, parts.join(''));
}
