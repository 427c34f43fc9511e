/**
 * `src/cli/status-page/`: the status page, one self-contained HTML file rendered from the status document (page.ts),
 * its sections, charts and styles.
 *
 * The time axis the charts of the page share: up to the last 24 hours before the document's time, left to right, in
 * an SVG of a fixed coordinate width scaled to the column, with ticks at round times. Each chart is drawn twice: wide
 * (24 hours) and, for a phone's width, narrow (the last hours, its labels as large as the text beside them); the
 * stylesheet shows one, so nothing scrolls sideways.
 */
import { esc } from './html.js';

/** A chart's coordinate frame: its width, and where the plot starts (room for value labels) and ends. */
interface ChartFrame {
  width: number;
  left: number;
  right: number;
}

export const WIDE: ChartFrame = { width: 960, left: 96, right: 950 };
/** Drawn ~350 px wide on a phone: 400 units keep a 12-unit label at about 10 px. */
export const NARROW: ChartFrame = { width: 400, left: 86, right: 392 };
/** The hours a narrow chart shows (the tables below them hold the rest). */
export const NARROW_HOURS = 3;

export interface TimeAxis extends ChartFrame {
  fromMs: number;
  /** The document's time (marked "now"); `toMs` is later when the current window resets later. */
  nowMs: number;
  toMs: number;
  /** x of an instant (clamped to the plot). */
  x(ms: number): number;
}

const MINUTE = 60_000;
const HOUR = 3_600_000;
/** The shortest range drawn before now: a daemon started a minute ago still shows a readable half hour. */
const MIN_RANGE = 30 * MINUTE;

interface ChartRange {
  fromMs: number;
  nowMs: number;
  toMs: number;
}

/**
 * The range the charts share: the last `hours` hours, narrowed to start a little before the oldest thing there is
 * to draw (a daemon started an hour ago shows that hour, not 23 empty ones), never under half an hour, and running
 * on past now to `untilMs` (the current window's reset) so that window shows whole.
 */
export function chartRange(nowMs: number, hours: number, instants: readonly number[], untilMs: number): ChartRange {
  const floor = nowMs - hours * HOUR;
  const earliest = Math.min(...instants.filter((t) => t >= floor && t <= nowMs), nowMs);
  const padded = earliest - (nowMs - earliest) * 0.05;
  const toMs = Math.max(nowMs, Math.min(untilMs, nowMs + 2 * HOUR));
  return { fromMs: Math.max(floor, Math.min(nowMs - MIN_RANGE, padded)), nowMs, toMs };
}

export function timeAxis(range: ChartRange, frame: ChartFrame = WIDE): TimeAxis {
  const { fromMs, toMs } = range;
  const scale = (frame.right - frame.left) / (toMs - fromMs);
  return { ...range, ...frame, x: (ms) => frame.left + (Math.min(toMs, Math.max(fromMs, ms)) - fromMs) * scale };
}

const STEPS = [5, 10, 15, 30, 60, 120, 180, 360].map((m) => m * MINUTE);

/** Ticks at round UTC times (at most eight), labelled `HH:MM`, and "now" marked by a line from `top`. */
export function timeTicks(axis: TimeAxis, y: number, top = 0): string {
  const out: string[] = [];
  // About one tick per 120 units: eight on a wide chart, three on a narrow one.
  const most = Math.max(3, Math.floor(axis.width / 120));
  const step = STEPS.find((s) => (axis.toMs - axis.fromMs) / s <= most) ?? 6 * HOUR;
  const nowX = axis.x(axis.nowMs);
  for (let t = Math.ceil(axis.fromMs / step) * step; t <= axis.toMs; t += step) {
    const x = axis.x(t).toFixed(1);
    if (Math.abs(axis.x(t) - nowX) < 36) continue;
    out.push(
      `<line class="tick" x1="${x}" x2="${x}" y1="${y}" y2="${y + 4}"/>`,
      `<text class="axis" x="${x}" y="${y + 17}" text-anchor="middle">${new Date(t).toISOString().slice(11, 16)}</text>`,
    );
  }
  const anchor = nowX > axis.right - 16 ? 'end' : 'middle';
  out.push(
    `<line class="now" x1="${nowX.toFixed(1)}" x2="${nowX.toFixed(1)}" y1="${top}" y2="${y + 4}"/>`,
    `<text class="axis now-label" x="${nowX.toFixed(1)}" y="${y + 17}" text-anchor="${anchor}">now</text>`,
  );
  return out.join('');
}

/** An SVG element of the axis's width with an accessible name (its caption says the same in words). */
export function svg(axis: ChartFrame, height: number, label: string, body: string): string {
  return `<svg class="chart" viewBox="0 0 ${axis.width} ${height}" role="img" aria-label="${esc(label)}">${body}</svg>`;
}

/** The range a chart shows, in words: `the last 3 hours`, `the last 24 hours`. */
export function rangeWords(axis: TimeAxis): string {
  const hours = Math.max(1, Math.round((axis.nowMs - axis.fromMs) / HOUR));
  return `the last ${hours} hour${hours === 1 ? '' : 's'}`;
}
