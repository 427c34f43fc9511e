/**
 * One row per stream for the status document: rows, how it is fed, freshness (the age of the newest change applied,
 * by webhook or by poll), webhook lag, last poll, and whether it is ok, failing (the newest run that covered it
 * failed on it), unavailable (the service does not serve its path) or has no data yet.
 */
import { utcText } from '../../../connectors/service.js';
import { recordTimeMs, utcMs } from '../../sync/capture/time.js';
import type { CaptureStreamState, CursorState, RunRecord, UnavailableStream, WallLag } from '../../warehouse/index.js';

export type StreamHealth = 'ok' | 'failing' | 'unavailable' | 'no data';

export interface StreamRow {
  stream: string;
  /** Current rows in its table (null: no table yet). */
  rows: number | null;
  /** 'webhook' once a delivery or a reconciliation of webhook-fed streams touched it, else 'polled'. */
  fed: 'webhook' | 'polled';
  health: StreamHealth;
  /** Why it is failing or unavailable (the run's error, or the refused path), null when ok. */
  reason: string | null;
  /** UTC of the newest change applied: a delivery's change time, or the newest polled window's end. */
  newestChangeAt: string | null;
  /** Seconds from `newestChangeAt` to the document's time. */
  freshnessSeconds: number | null;
  /** UTC of the last time a poll moved one of its cursors. */
  lastPollAt: string | null;
  /** UTC of the newest delivery applied. */
  lastDeliveryAt: string | null;
  /** Webhook lag (change at the service to its row) over the last 24 hours' deliveries. */
  lagP50Seconds: number | null;
  lagP95Seconds: number | null;
  lagSamples: number;
  rejected: number;
}

export interface StreamInputs {
  tables: Record<string, number>;
  cursors: readonly CursorState[];
  capture: readonly CaptureStreamState[];
  unavailable: readonly UnavailableStream[];
  rejected: Record<string, number>;
  /** Newest first. */
  runs: readonly RunRecord[];
  lags: readonly WallLag[];
  /** The zone the service writes record times in (cursor watermarks and delivery times are in it). */
  zone: string;
  nowMs: number;
}

function newest(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length ? Math.max(...known) : null;
}

/** The error lines of a run that are about `stream` (lines start with its name, as the engine writes them). */
function errorsAbout(run: RunRecord, stream: string): string[] {
  const stats = run.streams?.[stream] as { errors?: unknown } | undefined;
  const own = Array.isArray(stats?.errors) ? stats.errors.filter((e): e is string => typeof e === 'string') : [];
  const lines = (run.error ?? '').split('\n').filter((l) => new RegExp(`^${stream}[:/ ]`).test(l));
  return [...lines, ...own];
}

/** The newest run that covered the stream decides whether it is failing (a later good run clears it). */
function failure(runs: readonly RunRecord[], stream: string): string | null {
  for (const run of runs) {
    if (run.status === 'running') continue;
    const errors = errorsAbout(run, stream);
    if (errors.length) return errors[0]!;
    if (run.streams && stream in run.streams) return null;
  }
  return null;
}

function lagSeconds(ms: number | null): number | null {
  return ms === null ? null : Math.round(Math.max(0, ms) / 100) / 10;
}

function rowOf(stream: string, i: StreamInputs, offsetMs: number): StreamRow {
  const cursors = i.cursors.filter((c) => c.stream === stream);
  const capture = i.capture.find((c) => c.stream === stream) ?? null;
  const unavailable = i.unavailable.find((u) => u.stream === stream) ?? null;
  const lag = i.lags.find((l) => l.stream === stream) ?? null;
  const newestMs = newest([
    recordTimeMs(capture?.lastChangeAt, i.zone),
    ...cursors.map((c) => recordTimeMs(c.watermark, i.zone)),
  ]);
  const lastPollMs = newest(cursors.map((c) => utcMs(c.updatedAt)));
  const failed = failure(i.runs, stream);
  const rows = i.tables[stream] ?? null;
  let health: StreamHealth = 'ok';
  let reason: string | null = null;
  if (failed) [health, reason] = ['failing', failed];
  else if (unavailable) {
    health = 'unavailable';
    reason = `${unavailable.path} answered ${unavailable.status} since ${unavailable.firstSeenAt} UTC: set streams.${stream}.path`;
  } else if (rows === null && newestMs === null) health = 'no data';
  return {
    stream,
    rows,
    fed: capture ? 'webhook' : 'polled',
    health,
    reason,
    newestChangeAt: newestMs === null ? null : utcText(newestMs, 'seconds'),
    freshnessSeconds: newestMs === null ? null : Math.max(0, Math.round((i.nowMs - newestMs) / 1000)),
    lastPollAt: lastPollMs === null ? null : utcText(lastPollMs, 'seconds'),
    lastDeliveryAt: capture?.lastDeliveryAt ?? null,
    lagP50Seconds: lag ? lagSeconds(lag.p50WallMs + offsetMs) : null,
    lagP95Seconds: lag ? lagSeconds(lag.p95WallMs + offsetMs) : null,
    lagSamples: lag?.count ?? 0,
    rejected: i.rejected[stream] ?? 0,
  };
}

export function streamRows(i: StreamInputs): StreamRow[] {
  // Lags were measured with record wall time read as UTC: the zone's offset now corrects them.
  const wall = utcMs(utcText(i.nowMs, 'seconds')) ?? i.nowMs;
  const offsetMs = wall - (recordTimeMs(utcText(i.nowMs, 'seconds'), i.zone) ?? wall);
  const names = new Set<string>([
    ...Object.keys(i.tables),
    ...i.cursors.map((c) => c.stream),
    ...i.capture.map((c) => c.stream),
    ...i.unavailable.map((u) => u.stream),
  ]);
  return [...names].sort().map((stream) => rowOf(stream, i, offsetMs));
}
