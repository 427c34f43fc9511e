import type { StreamOverride } from '../../connectors/index.js';
import type { Now } from '../../schemas/clock.js';
import type { EngineTuning } from '../../schemas/engine-options.js';
import type { BulkLane } from '../api/index.js';
import type { RunStreamSummary } from '../warehouse/index.js';
import type { CreditRecorder } from './credit-recorder.js';

export type SyncMode = 'incremental' | 'backfill';

/**
 * What a sync should do. Everything has a default except the mode; the tuning options (concurrency, lag, record time
 * zone, cadences) are declared once, with their defaults, in schemas/engine-options.ts.
 */
export interface SyncOptions extends Partial<EngineTuning> {
  mode: SyncMode;
  /** 'core' | 'all' | a comma list of stream names. Default 'core'. */
  streams?: string;
  /** Only these event ids (event-scoped streams). */
  events?: readonly number[];
  /** Only events whose `status` is one of these. */
  eventStatus?: readonly string[];
  /** Only events starting on or after / before these dates (`YYYY-MM-DD`). */
  eventsFrom?: string;
  eventsTo?: string;
  /**
   * Run delete sweeps: true = every cursor stream now; 'auto' = when due (`sweepEveryHours`) and credits are spare;
   * 'due' = when due, as owed work (a daemon's catch-up: what was swept before it went silent is due again); false =
   * never.
   */
  deletes?: boolean | 'auto' | 'due';
  /**
   * Streams whose scopes get a delete check (one call, delete-check.ts) where no sweep is due: the daemon's catch-up
   * after a silence, for the webhook-fed streams whose delete deliveries may have been lost. A check that does not
   * pass is walked on as a sweep, as owed work whatever `deletes` says.
   */
  deleteChecks?: readonly string[];
  /** Per-stream path, page cap and expand overrides (from evsync.config.json). */
  overrides?: Readonly<Record<string, StreamOverride>>;
  /** Where the audit log starts for an event never read before: its `created_at` (default) or a timestamp. */
  auditStart?: 'event-created' | string;
  /** Sync the custom-field definition streams the selected streams need (default true). */
  customFields?: boolean;
  /**
   * The streams the user named one by one (a path of theirs answering 404 fails the run; one that came in through a
   * set such as `core` is recorded unavailable instead). Default: the names listed in `streams`. A daemon, whose
   * runs list the streams of the user's selection one by one, passes the user's own names here.
   */
  namedStreams?: readonly string[];
  /**
   * Merge a completed work item's staged pages into its table at once, not in batches (every 100k rows of a stream,
   * and at the run's end): a daemon's runs, whose readers (snapshot, Parquet) then get each item at the next publish
   * during a long run. One-shot runs keep the batches: fewer, larger merges.
   */
  mergeEachItem?: boolean;
  /** Stop after the page in flight (clean shutdown); calls and waits in flight are cancelled. */
  signal?: AbortSignal;
  /**
   * Run as bulk work (api/lane.ts): every call of its walks leaves a share of each window to other calls, and when
   * the lane closes the run stops after its pages in flight (none cancelled), partial, its state saved. Default
   * none: interactive, as one-shot `sync` and `backfill` always are.
   */
  lane?: BulkLane;
  /**
   * What the run is recorded as and which earlier run it resumes (default: the mode). A daemon's catch-up is
   * `catch-up`: the incremental runs of the ticks between its slices neither resume it nor end its resumption.
   */
  runKind?: string;
  onProgress?: (event: ProgressEvent) => void;
  /**
   * Records the credit window as answers come (`_evsync.credits`). Default: one for the run. A daemon passes the
   * one it keeps for its life, which also records what it spends between runs.
   */
  creditRecorder?: CreditRecorder;
  /** The clock of the run's bookkeeping (the credit recorder's cadence). Default: the machine's. */
  now?: Now;
}

export type ProgressEvent =
  | { type: 'run'; runId: string }
  | { type: 'plan'; items: number; streams: string[]; events: number }
  /** Items handed to the executor (a phase's), with their priced cost in credits. */
  | { type: 'queued'; items: number; credits: number }
  | { type: 'item-start'; stream: string; scope: string; mode: WalkMode; price: number }
  /** An item not walked: its stream is not served here, or a sweep that waits for spare credits. */
  | { type: 'item-skipped'; stream: string; scope: string; price: number }
  | {
      type: 'page';
      stream: string;
      scope: string;
      /** The event the scope belongs to (null for account and parent scopes). */
      eventId: number | null;
      pages: number;
      rows: number;
      totalCount: number | null;
      pageCount: number | null;
      perPage: number | null;
    }
  | {
      type: 'item-done';
      stream: string;
      scope: string;
      eventId: number | null;
      pages: number;
      rows: number;
      deleted: number;
      /** Its pages are merged into the table (`mergeEachItem`): what it changed is there now, not at the run's end. */
      merged: boolean;
    }
  | { type: 'item-failed'; stream: string; scope: string; error: string }
  | ({ type: 'delete-check'; stream: string; scope: string } & DeleteCheckVerdict);

/** What a delete check (delete-check.ts) found: it is reported as a progress event. */
export interface DeleteCheckVerdict {
  /** The service's count of the scope's records (null: the answer carried none, so the check decides nothing). */
  serviceCount: number | null;
  /** The scope's live rows in the warehouse. */
  live: number;
  /** Ids on the page the warehouse does not hold live (records created since, or restored). */
  unknownOnPage: number;
  /** Whether every id the warehouse lacks is surely on the page (see delete-check.ts). */
  pageCoversNew: boolean;
  /** Live rows the service no longer has, when `pageCoversNew` (else unknown). */
  missed: number | null;
}

/** How an item reads its scope; `check` is a delete check (delete-check.ts), a sweep when it does not pass. */
export type WalkMode = 'incremental' | 'backfill' | 'snapshot' | 'sweep' | 'check' | 'audit' | 'refresh';

/** What one run did to one stream: the counts the warehouse records with the run (`RunSummary.streams`). */
export type StreamStats = RunStreamSummary;

export interface SyncResult {
  runId: string;
  status: 'done' | 'partial' | 'failed';
  /** Why the run is partial: the run budget, the max wait, or a stop request. */
  reason: string | null;
  signpost: string;
  /** The earlier run this one finished, if it resumed one. */
  resumed: string | null;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  credits: { list: number; other: number; token: number; total: number };
  requests: number;
  waitsMs: number;
  rejected429: number;
  streams: Record<string, StreamStats>;
  items: { total: number; done: number; skipped: number; failed: number; pending: number };
  errors: string[];
  /** Problems that did not stop or fail the sync (e.g. an analytics view that could not be built). */
  warnings: string[];
  /** Streams the service does not serve here (404 on the path, or 403 on every scope), found now or earlier. */
  unavailable: UnavailableReport[];
}

/** A stream recorded as not served: a state, reported with the config key that fixes it, not a failure. */
export interface UnavailableReport {
  stream: string;
  path: string;
  status: number;
  detail: string | null;
  /** When an earlier run first recorded it (UTC), null when found by this run. */
  since: string | null;
  /** Items of this run skipped without a call because of it. */
  skipped: number;
  recorded: 'earlier' | 'now';
  verified?: boolean;
  /** The user named it one by one (`--streams a,b`), so the run fails; else it came in through a set or a dependency. */
  named?: boolean;
  /** What to change if the account does serve it: `streams.<name>.path` in evsync.config.json. */
  hint?: string;
}
