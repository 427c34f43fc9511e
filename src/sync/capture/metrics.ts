import type { Now } from '../../../schemas/clock.js';

/**
 * What `GET /metrics` says, in the Prometheus text format: deliveries by outcome, what applying them did, the lag
 * from a change at the service to its row, credits, reconciliation runs. Labels hold stream names and outcomes only.
 */

const LAG_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300];

type Labels = Record<string, string>;

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/["\\\n]/g, '_')}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

class Counter {
  readonly values = new Map<string, { labels: Labels; value: number }>();
  add(labels: Labels, n = 1): void {
    const key = labelText(labels);
    const entry = this.values.get(key) ?? { labels, value: 0 };
    entry.value += n;
    this.values.set(key, entry);
  }
  get(labels: Labels): number {
    return this.values.get(labelText(labels))?.value ?? 0;
  }
}

export class CaptureMetrics {
  /** The daemon's clock. */
  constructor(private readonly now: Now) {
    this.startedAt = now();
  }

  /** Deliveries the receiver answered, by outcome: journaled, rejected, unauthorized, too_large, unavailable. */
  readonly deliveries = new Counter();
  /** Deliveries the applier settled, by stream and outcome (payload, reread, deleted, stale, duplicate, ...). */
  readonly applied = new Counter();
  /** Credits spent, by who spent them: capture (re-reads) or reconcile (polling runs). */
  readonly credits = new Counter();
  /** Reconciliation runs by status, and rows they wrote per stream that webhooks had not. */
  readonly runs = new Counter();
  readonly reconciled = new Counter();
  private readonly lag = new Map<string, { buckets: number[]; sum: number; count: number }>();
  /** Set by the daemon: deliveries journaled and not yet applied, and the newest delivery time per stream. */
  pending = 0;
  /** Seconds since the oldest of them was journaled (0 when none is pending). */
  oldestPendingSeconds = 0;
  /** Deliveries whose re-read waits for the credit window. */
  waitingForCredits = 0;
  readonly lastDelivery = new Map<string, number>();
  startedAt: number;

  /** Seconds from a change at the service (its `datetime`) to its row in the warehouse. */
  observeLag(stream: string, seconds: number): void {
    let h = this.lag.get(stream);
    if (!h) {
      h = { buckets: LAG_BUCKETS.map(() => 0), sum: 0, count: 0 };
      this.lag.set(stream, h);
    }
    LAG_BUCKETS.forEach((le, i) => {
      if (seconds <= le) h.buckets[i]! += 1;
    });
    h.sum += seconds;
    h.count += 1;
  }

  render(): string {
    const lines: string[] = [];
    const counter = (name: string, help: string, c: Counter) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
      for (const { labels, value } of c.values.values()) lines.push(`${name}${labelText(labels)} ${value}`);
    };
    counter('evsync_webhook_deliveries_total', 'Webhook deliveries answered, by outcome.', this.deliveries);
    counter('evsync_webhook_applied_total', 'Journaled deliveries settled, by stream and outcome.', this.applied);
    counter('evsync_credits_spent_total', 'API credits spent by this process, by what spent them.', this.credits);
    counter('evsync_reconcile_runs_total', 'Reconciliation (polling) runs, by status.', this.runs);
    counter(
      'evsync_reconcile_rows_total',
      'Rows reconciliation wrote that webhooks had not brought, by stream.',
      this.reconciled,
    );
    lines.push(
      '# HELP evsync_webhook_pending Deliveries journaled and not yet applied.',
      '# TYPE evsync_webhook_pending gauge',
      `evsync_webhook_pending ${this.pending}`,
    );
    const gauge = (name: string, help: string, value: number) =>
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${value}`);
    gauge('evsync_deliveries_pending', 'Deliveries journaled and not yet applied.', this.pending);
    gauge(
      'evsync_deliveries_oldest_pending_seconds',
      'Seconds since the oldest delivery not yet applied was journaled.',
      this.oldestPendingSeconds,
    );
    gauge(
      'evsync_deliveries_waiting_for_credits',
      'Deliveries whose re-read waits for the credit window.',
      this.waitingForCredits,
    );
    lines.push(
      '# HELP evsync_webhook_last_delivery_timestamp_seconds When the newest delivery of a stream was applied.',
      '# TYPE evsync_webhook_last_delivery_timestamp_seconds gauge',
    );
    for (const [stream, ms] of this.lastDelivery) {
      lines.push(`evsync_webhook_last_delivery_timestamp_seconds${labelText({ stream })} ${ms / 1000}`);
    }
    lines.push(
      '# HELP evsync_capture_lag_seconds Seconds from a change at the service to its row in the warehouse.',
      '# TYPE evsync_capture_lag_seconds histogram',
    );
    for (const [stream, h] of this.lag) {
      LAG_BUCKETS.forEach((le, i) => {
        lines.push(`evsync_capture_lag_seconds_bucket${labelText({ stream, le: String(le) })} ${h.buckets[i]}`);
      });
      lines.push(`evsync_capture_lag_seconds_bucket${labelText({ stream, le: '+Inf' })} ${h.count}`);
      lines.push(`evsync_capture_lag_seconds_sum${labelText({ stream })} ${h.sum}`);
      lines.push(`evsync_capture_lag_seconds_count${labelText({ stream })} ${h.count}`);
    }
    lines.push(
      '# HELP evsync_uptime_seconds Seconds since this process started.',
      '# TYPE evsync_uptime_seconds gauge',
      `evsync_uptime_seconds ${Math.round((this.now() - this.startedAt) / 1000)}`,
    );
    return `${lines.join('\n')}\n`;
  }
}
