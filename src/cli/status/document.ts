/**
 * The status document (`status --json`, the status page, `/status.json`, the socket's status answer): what the
 * warehouse knows, without a single API call, read from `_evsync` (see warehouse/state/bookkeeping.ts), with what a
 * running process knows now (its window, what waits, its cadence) taken over the file's. One schema for the page,
 * its JSON and the CLI's text (text.ts).
 */

import { utcText } from '../../../connectors/service.js';
import { catchUpPendingSince } from '../../daemon/catch-up.js';
import { HEARTBEAT_MARK } from '../../daemon/heartbeat.js';
import type { PublishStats } from '../../daemon/publisher.js';
import type { RunProgress } from '../../sync/index.js';
import type { CursorState, LedgerRecord, RunRecord, UnavailableStream, Warehouse } from '../../warehouse/index.js';
import type { Ctx } from '../context.js';
import {
  type CreditsSection,
  creditsSection,
  type DeliveriesSection,
  deliveriesSection,
  HISTORY_HOURS,
  recordedReading,
  type WindowReading,
} from '../status-page/sections.js';
import {
  type Cadence,
  type DeliveriesWaiting,
  type StatusState,
  statusState,
  type WaitingState,
} from '../status-page/state.js';
import { type StreamRow, streamRows } from '../status-page/streams.js';
import { lastCadence } from './cadence.js';
import { type CaptureStatus, captureStatus } from './capture.js';

export interface RunInfo {
  runId: string;
  kind: string;
  status: string;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  credits: number | null;
  requests: number | null;
  rows: { inserted: number; updated: number; deleted: number; rejected: number };
  error: string | null;
}

export interface CursorInfo extends CursorState {
  /** Seconds since the cursor last moved. */
  ageSeconds: number | null;
}

export interface StatusReport {
  db: string;
  exists: boolean;
  /** The warehouse's layout version (null: a file evsync never wrote). */
  layoutVersion?: number | null;
  runs: RunInfo[];
  cursors: CursorInfo[];
  rejected: { total: number; byStream: Record<string, number> };
  /** Streams the service does not serve here, with the config key that fixes each. */
  unavailable: (UnavailableStream & { fix: string })[];
  /** The newest credit reading recorded here (by any run or daemon): the window as the service last reported it. */
  ledger: LedgerRecord | null;
  tables: Record<string, number>;
  /** Streams fed by webhooks (`evsync serve`): last delivery, lag, applied, found by reconciliation. */
  capture?: CaptureStatus[];
  /** Set when a running `evsync serve` answered (it holds the database). */
  servedBy?: string;
  /** When the document was made (ISO 8601, UTC). */
  generatedAt?: string;
  /** One row per stream: rows, how it is fed, freshness, lag, last poll, health with its reason. */
  streams?: StreamRow[];
  /**
   * Credits per rate-limit window over the last 24 hours (every credit any run or daemon spent here), and the window
   * as the service last reported it: live from the process answering, else the newest reading recorded.
   */
  credits?: CreditsSection;
  /** What matters first: waiting for the window (until when), failing, stale streams (by how much), or all fresh. */
  state?: StatusState;
  /** Set when a one-shot `sync` or `backfill` holding the warehouse answered: its progress, credits and ETA. */
  progress?: RunProgress;
  /** Syncs and reconciles started in the last 24 hours, newest first (at most TIMELINE_MAX). */
  timeline?: RunInfo[];
  /** Webhook deliveries received, settled, refused per 10 minutes over the last 24 hours; pending now. */
  deliveries?: DeliveriesSection;
  /** What the daemon (`serve`, `schedule`) left in the warehouse, and, when one answered, its live state. */
  daemon?: DaemonStatus;
  /** What the archive of every page and delivery holds, and since when (null: none yet). */
  archive?: Awaited<ReturnType<Warehouse['archiveStatus']>>;
  /** The versions the history keeps beyond the current rows, per stream, and the streams whose history is off. */
  history?: Awaited<ReturnType<Warehouse['historyStatus']>>;
}

export interface DaemonStatus {
  /** The last heartbeat a daemon wrote here (UTC ISO), null when none ever ran. */
  lastHeartbeat: string | null;
  /** Since when a catch-up is owed (it polls every selected stream, past events included, until one completes). */
  catchUpPendingSince: string | null;
  /** Set when a running daemon answered. */
  command?: 'serve' | 'schedule';
  pid?: number;
  /** Queries through the daemon not answered yet (running or waiting for a worker). */
  queriesRunning?: number;
  /** Of those, how many run in a worker process and how many wait for one; worker processes alive. */
  queries?: { running: number; waiting: number; processes: number };
  /** What publishing to --parquet-out / --snapshot costs and whether it keeps up (when the daemon publishes). */
  publish?: PublishStats;
}

/** The most runs the timeline holds (a daemon reconciling every minute makes 1,440 a day). */
const TIMELINE_MAX = 300;

/** A warehouse timestamp (`YYYY-MM-DD HH:MM:SS[.ffffff]`, UTC) as epoch ms. */
function epochOf(value: unknown): number | null {
  if (typeof value !== 'string' || value === '') return null;
  const ms = Date.parse(`${value.slice(0, 23).replace(' ', 'T')}Z`);
  return Number.isNaN(ms) ? null : ms;
}

/** A run a killed process left 'running' (its PID is gone): shown as interrupted, as the next run will record it. */
function liveStatus(run: RunRecord): string {
  if (run.status !== 'running' || run.pid === null || run.pid === process.pid) return run.status;
  try {
    process.kill(run.pid, 0);
    return run.status;
  } catch {
    return 'interrupted';
  }
}

function runOf(run: RunRecord): RunInfo {
  const streams = (run.streams ?? {}) as Record<string, Partial<RunInfo['rows']>>;
  const rows = { inserted: 0, updated: 0, deleted: 0, rejected: 0 };
  for (const s of Object.values(streams)) {
    rows.inserted += s.inserted ?? 0;
    rows.updated += s.updated ?? 0;
    rows.deleted += s.deleted ?? 0;
    rows.rejected += s.rejected ?? 0;
  }
  const started = epochOf(run.startedAt);
  const finished = epochOf(run.finishedAt);
  const credits = run.credits;
  const total = credits
    ? (credits.total ?? Object.entries(credits).reduce((n, [k, v]) => (k === 'total' ? n : n + v), 0))
    : null;
  return {
    runId: run.runId,
    kind: run.kind,
    status: liveStatus(run),
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    durationMs: started !== null && finished !== null ? finished - started : null,
    credits: total,
    requests: run.requests,
    rows,
    error: run.error,
  };
}

/** What a running process knows now that the warehouse does not: the status document takes it over the file's. */
export interface LiveStatus {
  /** Its client's latest reading of the window (null before its first answer: the recorded one is shown). */
  reading: WindowReading | null;
  waiting: WaitingState | null;
  deliveriesWaiting: DeliveriesWaiting | null;
  cadence: Cadence | null;
}

interface CollectOptions {
  db: string;
  /** How many runs to list. */
  runs: number;
  nowMs: number;
  /** The zone the service writes record times in. */
  zone?: string;
  live?: LiveStatus;
}

export async function collectStatus(warehouse: Warehouse, o: CollectOptions): Promise<StatusReport> {
  const { nowMs } = o;
  const since = utcText(nowMs - HISTORY_HOURS * 3_600_000, 'seconds');
  const history = await warehouse.statusHistory(since, utcText(nowMs, 'seconds'));
  const recent = await warehouse.runs.recent({ limit: Math.max(TIMELINE_MAX, Math.floor(o.runs)) });
  const rawCursors = await warehouse.cursors.list();
  const cursors = rawCursors.map((cursor) => {
    const at = epochOf(cursor.updatedAt);
    return { ...cursor, ageSeconds: at === null ? null : Math.max(0, Math.round((nowMs - at) / 1000)) };
  });
  const byStream = await warehouse.rejectedCounts();
  const listed = await warehouse.unavailable.list();
  const unavailable = listed.map((entry) => ({ ...entry, fix: `streams.${entry.stream}.path in evsync.config.json` }));
  const tables = await warehouse.tableCounts();
  const captured = await warehouse.capture.streams();
  const ledger = await warehouse.runs.lastLedger();
  const streams = streamRows({
    tables,
    cursors: rawCursors,
    capture: captured,
    unavailable: listed,
    rejected: byStream,
    runs: recent,
    lags: history.lags,
    zone: o.zone ?? 'UTC',
    nowMs,
  });
  const live = o.live;
  const cadence = live ? live.cadence : await lastCadence(warehouse);
  return {
    db: o.db,
    exists: true,
    layoutVersion: warehouse.layoutVersion,
    runs: recent.slice(0, Math.floor(o.runs)).map(runOf),
    cursors,
    rejected: { total: Object.values(byStream).reduce((a, b) => a + b, 0), byStream },
    unavailable,
    ledger,
    tables,
    capture: captureStatus(captured, nowMs),
    generatedAt: new Date(nowMs).toISOString(),
    state: statusState({
      streams,
      waiting: live?.waiting ?? null,
      deliveriesWaiting: live?.deliveriesWaiting ?? null,
      cadence,
    }),
    streams,
    credits: creditsSection(history, live?.reading ?? recordedReading(ledger), nowMs),
    timeline: recent.filter((r) => r.startedAt >= since).map(runOf),
    deliveries: deliveriesSection(history, nowMs),
    daemon: {
      lastHeartbeat: (await warehouse.marks.get(HEARTBEAT_MARK)) || null,
      catchUpPendingSince: await catchUpPendingSince(warehouse),
    },
    archive: await warehouse.archiveStatus(),
    history: await warehouse.historyStatus(),
  };
}

/** The status document of the warehouse this command is configured for (the socket and the page answer with it). */
export function statusDocument(ctx: Ctx, w: Warehouse, runs: number, live?: LiveStatus): Promise<StatusReport> {
  const zone = ctx.config.values.recordTimezone ?? 'UTC';
  return collectStatus(w, { db: ctx.config.db, runs, nowMs: ctx.now(), zone, ...(live ? { live } : {}) });
}
