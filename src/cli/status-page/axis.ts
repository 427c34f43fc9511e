/**
 * The time axis every chart of the page shares: up to the last 24 hours before the document's time, left to right,
 * in an SVG of a fixed coordinate width (scaled to the column; at a phone's width the chart scrolls sideways rather
 * than shrink its labels), with ticks at round times.
 */
import { esc } from './html.js';

export const CHART_WIDTH = 960;
/** Room on the left for the value labels and at the bottom for the time ticks. */
export const PAD_LEFT = 70;
export const PAD_RIGHT = 10;

export interface TimeAxis {
  fromMs: number;
  toMs: number;
  /** x of an instant (clamped to the plot). */
  x(ms: number): number;
}

const MINUTE = 60_000;
const HOUR = 3_600_000;
/** The shortest range drawn: a single short run still shows as a bar, not a hairline. */
const MIN_RANGE = 2 * HOUR;

/**
 * The range the charts share: the last `hours` hours, narrowed to start a little before the oldest thing there is
 * to draw (a daemon started an hour ago shows that hour, not 23 empty ones), and never under two hours.
 */
export function chartRange(toMs: number, hours: number, instants: readonly number[]): { fromMs: number; toMs: number } {
  const floor = toMs - hours * HOUR;
  const earliest = Math.min(...instants.filter((t) => t >= floor && t <= toMs), toMs);
  const padded = earliest - (toMs - earliest) * 0.05;
  return { fromMs: Math.max(floor, Math.min(toMs - MIN_RANGE, padded)), toMs };
}

export function timeAxis(range: { fromMs: number; toMs: number }): TimeAxis {
  const { fromMs, toMs } = range;
  const scale = (CHART_WIDTH - PAD_LEFT - PAD_RIGHT) / (toMs - fromMs);
  return { fromMs, toMs, x: (ms) => PAD_LEFT + (Math.min(toMs, Math.max(fromMs, ms)) - fromMs) * scale };
}

const STEPS = [5, 10, 15, 30, 60, 120, 180, 360].map((m) => m * MINUTE);

/** Ticks at round UTC times (at most eight), labelled `HH:MM`, plus "now" at the right end. */
export function timeTicks(axis: TimeAxis, y: number): string {
  const out: string[] = [];
  const step = STEPS.find((s) => (axis.toMs - axis.fromMs) / s <= 8) ?? 6 * HOUR;
  for (let t = Math.ceil(axis.fromMs / step) * step; t < axis.toMs - step / 2; t += step) {
    const x = axis.x(t).toFixed(1);
    out.push(
      `<line class="tick" x1="${x}" x2="${x}" y1="${y}" y2="${y + 4}"/>`,
      `<text class="axis" x="${x}" y="${y + 17}" text-anchor="middle">${new Date(t).toISOString().slice(11, 16)}</text>`,
    );
  }
  out.push(`<text class="axis" x="${CHART_WIDTH - PAD_RIGHT}" y="${y + 17}" text-anchor="end">now</text>`);
  return out.join('');
}

/** An SVG element of the chart width with an accessible name (its caption says the same in words). */
export function svg(height: number, label: string, body: string): string {
  return `<div class="chart-box"><svg class="chart" viewBox="0 0 ${CHART_WIDTH} ${height}" role="img" aria-label="${esc(label)}">${body}</svg></div>`;
}
