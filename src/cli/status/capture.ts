/**
 * The change-capture part of `evsync status`: per stream fed by webhooks, the last delivery, its lag, deliveries
 * applied, and rows reconciliation found that webhooks had not brought (missed, or not arrived yet).
 */
import type { CaptureStreamState } from '../../warehouse/index.js';
import { formatAge, formatNumber, formatTable } from '../output/format.js';
import type { Style } from '../output/style.js';

export interface CaptureStatus extends CaptureStreamState {
  /** Seconds since the last delivery was applied. */
  sinceLastDeliverySeconds: number | null;
}

export function captureStatus(streams: readonly CaptureStreamState[], nowMs: number): CaptureStatus[] {
  return streams.map((s) => {
    const at = s.lastDeliveryAt ? Date.parse(`${s.lastDeliveryAt.replace(' ', 'T')}Z`) : Number.NaN;
    return { ...s, sinceLastDeliverySeconds: Number.isNaN(at) ? null : Math.max(0, Math.round((nowMs - at) / 1000)) };
  });
}

export function renderCapture(style: Style, capture: readonly CaptureStatus[], served: string | null): string {
  if (capture.length === 0 && !served) return '';
  const head = `${style.bold('Change capture')}${served ? ` (answered by ${served})` : ''}`;
  if (capture.length === 0) return `${head}: no delivery applied yet\n`;
  const rows = capture.map((c) => ({
    stream: c.stream,
    'last delivery (UTC)': c.lastDeliveryAt ?? 'none yet',
    ago: c.sinceLastDeliverySeconds === null ? '' : formatAge(0, c.sinceLastDeliverySeconds * 1000),
    lag: c.lastLagMs === null ? '' : `${(c.lastLagMs / 1000).toFixed(1)} s`,
    applied: formatNumber(c.applied),
    ignored: formatNumber(c.ignored),
    'found by reconciliation': formatNumber(c.reconciledRows),
    'last reconciliation (UTC)': c.lastReconcileAt ?? 'never',
  }));
  return `${head}\n${formatTable(Object.keys(rows[0]!), rows)}`;
}
