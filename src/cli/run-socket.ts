/**
 * While a one-shot `sync` or `backfill` holds the warehouse, `evsync status` from another shell is answered by it,
 * on the socket a daemon listens on (daemon/socket.ts), instead of being refused as "in use": the run's progress (items,
 * streams, events), the credits it spent and the window as the service last reported it, and when it should end.
 * From what the run knows alone (its progress events and its client's ledger): no second DuckDB instance opens the
 * file (closing one drops the run's lock: see warehouse/copies/query-copy.ts), no query runs beside the run's writes, no
 * API call is made. A query is refused, saying why and what to do instead.
 */
import { utcText } from '../../connectors/service.js';
import type { ApiClient } from '../api/index.js';
import { type DaemonSocket, startDaemonSocket } from '../daemon/socket.js';
import { holderName, oneShotQueryRefusal } from '../daemon/socket-protocol.js';
import type { RunProgress, RunProgressTracker, SyncMode } from '../sync/index.js';
import type { Ctx } from './context.js';
import { errorMessage } from './errors.js';
import type { RunInfo, StatusReport } from './status/document.js';
import { creditsSection, liveReading } from './status-page/sections.js';
import { runState, waitingState } from './status-page/state.js';

interface RunStatusInputs {
  db: string;
  /** `evsync backfill (PID 9)`. */
  holder: string;
  progress: RunProgress;
  client: ApiClient;
  nowMs: number;
}

/** The run as the document's runs list it (rows are counted once its pages merge, at its end). */
function runInfo(p: RunProgress): RunInfo {
  return {
    runId: p.runId ?? 'starting',
    kind: p.mode,
    status: 'running',
    startedAt: utcText(Date.parse(p.startedAt), 'seconds'),
    finishedAt: null,
    durationMs: null,
    credits: p.credits.spent,
    requests: null,
    rows: { inserted: 0, updated: 0, deleted: 0, rejected: 0 },
    error: null,
  };
}

/** The status document of a one-shot run: the same schema as the warehouse's, filled from the run's progress. */
function runStatusDocument(i: RunStatusInputs): StatusReport {
  const ledger = i.client.ledger;
  const empty = { windows: [], deliveries: [], pending: 0, oldestPendingAt: null, lags: [] };
  const credits = creditsSection(empty, liveReading(ledger.reading(), i.holder), i.nowMs);
  const run = runInfo(i.progress);
  return {
    db: i.db,
    exists: true,
    runs: [run],
    cursors: [],
    rejected: { total: 0, byStream: {} },
    unavailable: [],
    ledger: null,
    tables: {},
    servedBy: i.holder,
    generatedAt: new Date(i.nowMs).toISOString(),
    state: runState(i.progress, waitingState(ledger.waiting(), i.holder, i.nowMs), i.holder),
    credits: { ...credits, limit: credits.limit ?? ledger.limit, windowSeconds: Math.round(ledger.windowMs / 1000) },
    timeline: [run],
    progress: i.progress,
  };
}

/**
 * Listens on the warehouse's socket for the run's life (the run holds the file, so a socket left there is stale).
 * Null when it cannot listen: the run goes on, and `status` says the file is in use as before.
 */
export async function startRunSocket(
  ctx: Ctx,
  mode: SyncMode,
  client: ApiClient,
  tracker: RunProgressTracker,
): Promise<DaemonSocket | null> {
  const holder = holderName(mode === 'backfill' ? 'backfill' : 'sync', process.pid);
  try {
    return await startDaemonSocket(ctx.config.db, async (request) => {
      if (request.op !== 'status') throw new Error(oneShotQueryRefusal(holder));
      const progress = tracker.snapshot();
      return runStatusDocument({ db: ctx.config.db, holder, progress, client, nowMs: ctx.now() });
    });
  } catch (err) {
    ctx.log.warn(`status from another shell is not answered during this run (its socket: ${errorMessage(err)})`);
    return null;
  }
}
