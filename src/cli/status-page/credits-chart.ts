/**
 * Credits per rate-limit window over the last 24 hours: one bar per window the ledger saw (its height the credits
 * used, as the service counted them), against a dashed line at the limit the service reported. Each bar carries its
 * figures (`data-used`, `data-limit`, `data-reset`) and a tooltip in words.
 */
import { DEFAULT_RATE_LIMIT } from '../../../connectors/service.js';
import { utcMs } from '../../sync/capture/time.js';
import { rangeWords, svg, type TimeAxis, timeTicks } from './axis.js';
import { esc, num } from './html.js';
import type { CreditsSection } from './sections.js';

const HEIGHT = 200;
const TOP = 16;
const BOTTOM = 172;
const MIN_BAR = 4;

export function creditsChart(credits: CreditsSection, axis: TimeAxis): string {
  const limit = credits.limit ?? 0;
  const peak = Math.max(limit, ...credits.windows.map((window) => window.used ?? 0), 1);
  const y = (v: number) => BOTTOM - (v / (peak * 1.08)) * (BOTTOM - TOP);
  const parts: string[] = [
    `<line class="base" x1="${axis.left}" x2="${axis.right}" y1="${BOTTOM}" y2="${BOTTOM}"/>`,
    `<text class="axis" x="${axis.left - 6}" y="${BOTTOM}" text-anchor="end" dominant-baseline="middle">0</text>`,
    timeTicks(axis, BOTTOM, TOP),
  ];
  let drawn = 0;
  for (const window of credits.windows) {
    const end = utcMs(window.resetAt);
    if (end === null || window.used === null || end <= axis.fromMs) continue;
    drawn += 1;
    const length = window.windowMs ?? (credits.windowSeconds ?? DEFAULT_RATE_LIMIT.windowSeconds) * 1000;
    const x0 = axis.x(end - length);
    const width = Math.max(MIN_BAR, axis.x(end) - x0 - 1);
    const share = window.limit ? Math.round((100 * window.used) / window.limit) : null;
    const title = `window ending ${window.resetAt} UTC: ${num(window.used)} of ${num(window.limit)} credits used${share === null ? '' : ` (${share}%)`}, ${num(window.spentByRuns)} by evsync's runs`;
    const high = window.limit !== null && window.used >= window.limit * 0.9;
    parts.push(
      `<rect class="bar${high ? ' high' : ''}" x="${(Math.min(x0, axis.right - width)).toFixed(1)}" y="${y(window.used).toFixed(1)}" width="${width.toFixed(1)}" height="${(BOTTOM - y(window.used)).toFixed(1)}" data-reset="${esc(window.resetAt)}" data-used="${window.used}" data-limit="${window.limit ?? ''}"><title>${esc(title)}</title></rect>`,
    );
  }
  if (limit > 0) {
    const ly = y(limit).toFixed(1);
    parts.push(
      `<line class="limit" x1="${axis.left}" x2="${axis.right}" y1="${ly}" y2="${ly}"/>`,
      `<text class="axis" x="${axis.left - 6}" y="${ly}" text-anchor="end" dominant-baseline="middle">${esc(num(limit))}</text>`,
      `<text class="limit-label" x="${axis.right}" y="${(Number(ly) - 5).toFixed(1)}" text-anchor="end">limit ${esc(num(limit))} per window</text>`,
    );
  }
  if (drawn === 0) {
    parts.push(
      `<text class="empty" x="${axis.width / 2}" y="${(BOTTOM + TOP) / 2}" text-anchor="middle">no credits recorded in ${rangeWords(axis)}</text>`,
    );
  }
  const label = `Credits used per rate-limit window: ${credits.windows.length} window(s), limit ${num(credits.limit)}`;
  return svg(axis, HEIGHT, label, parts.join(''));
}
