/** The queries through the daemon as Prometheus gauges, for the daemon's `/metrics`. */
import type { QueryService } from './queries.js';

/** The queries through the daemon as Prometheus gauges. */
export function queryMetricsText(queries: QueryService | null): string {
  const load = queries?.load ?? { running: 0, waiting: 0, processes: 0 };
  const gauge = (name: string, help: string, value: number) =>
    `# HELP ${name} ${help}\n# TYPE ${name} gauge\n${name} ${value}\n`;
  return [
    gauge(
      'evsync_queries_running',
      'Queries through the daemon, running or waiting for a worker.',
      queries?.active ?? 0,
    ),
    gauge('evsync_queries_waiting', 'Queries through the daemon waiting for a worker process.', load.waiting),
    gauge('evsync_query_workers', 'Query worker processes alive.', load.processes),
  ].join('');
}
