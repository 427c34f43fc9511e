/**
 * Webhook deliveries per bucket (10 minutes) over the last 24 hours: received and settled side by side, refused on top in its own
 * shade, and the pending count at each hour's end as a line. Every bar carries its figures in a tooltip.
 */
import { utcMs } from '../../sync/capture/time.js';
import { rangeWords, svg, type TimeAxis, timeTicks } from './axis.js';
import { esc, num } from './html.js';
import type { DeliveriesSection } from './sections.js';

const HEIGHT = 180;
const TOP = 14;
const BOTTOM = 152;
const MAX_BAR = 14;

export function deliveriesChart(deliveries: DeliveriesSection, axis: TimeAxis): string {
  const peak = Math.max(
    1,
    ...deliveries.buckets.map((bucket) =>
      Math.max(bucket.received + bucket.refused, bucket.settled, bucket.pendingAtEnd),
    ),
  );
  const y = (v: number) => BOTTOM - (v / (peak * 1.1)) * (BOTTOM - TOP);
  const parts: string[] = [
    `<line class="base" x1="${axis.left}" x2="${axis.right}" y1="${BOTTOM}" y2="${BOTTOM}"/>`,
    `<text class="axis" x="${axis.left - 6}" y="${BOTTOM}" text-anchor="end" dominant-baseline="middle">0</text>`,
    `<text class="axis" x="${axis.left - 6}" y="${y(peak).toFixed(1)}" text-anchor="end" dominant-baseline="middle">${esc(num(peak))}</text>`,
    timeTicks(axis, BOTTOM, TOP),
  ];
  const pending: string[] = [];
  for (const bucket of deliveries.buckets) {
    const at = utcMs(bucket.at);
    const length = deliveries.bucketMinutes * 60_000;
    if (at === null || at + length <= axis.fromMs) continue;
    // Two bars side by side from the bucket's start, never wider than MAX_BAR each.
    const slot = axis.x(at + length) - axis.x(at);
    const barWidth = Math.max(2, Math.min(MAX_BAR, (slot - 2) / 2));
    const x0 = axis.x(at);
    const title = `${bucket.at.slice(0, 16)} UTC, ${deliveries.bucketMinutes} minutes: ${num(bucket.received)} received, ${num(bucket.settled)} applied, ${num(bucket.refused)} refused, ${num(bucket.pendingAtEnd)} pending at its end`;
    const bar = (cls: string, x: number, from: number, value: number) =>
      value > 0
        ? `<rect class="${cls}" x="${x.toFixed(1)}" y="${y(from + value).toFixed(1)}" width="${barWidth.toFixed(1)}" height="${(y(from) - y(from + value)).toFixed(1)}"><title>${esc(title)}</title></rect>`
        : '';
    parts.push(bar('received', x0 + 1, 0, bucket.received), bar('refused', x0 + 1, bucket.received, bucket.refused));
    parts.push(bar('settled', x0 + 1 + barWidth, 0, bucket.settled));
    pending.push(`${(x0 + barWidth).toFixed(1)},${y(bucket.pendingAtEnd).toFixed(1)}`);
  }
  if (pending.length > 1) parts.push(`<polyline class="pending" points="${pending.join(' ')}"/>`);
  const total = deliveries.totals.received + deliveries.totals.refused;
  if (total === 0 && deliveries.pending === 0) {
    parts.push(
      `<text class="empty" x="${axis.width / 2}" y="${(BOTTOM + TOP) / 2}" text-anchor="middle">no webhook delivery in ${rangeWords(axis)}</text>`,
    );
  }
  const label = `Webhook deliveries per ${deliveries.bucketMinutes} minutes: ${num(deliveries.totals.received)} received, ${num(deliveries.totals.settled)} applied, ${num(deliveries.totals.refused)} refused`;
  return svg(axis, HEIGHT, label, parts.join(''));
}
