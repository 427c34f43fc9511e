import pLimit from 'p-limit';
import { customFieldsFromDefinitions, resolveStream } from '../../connectors/index.js';
import type { CustomField, ResolvedStream, StreamDefinition } from '../../connectors/types.js';
import {
  type ApiClient,
  BudgetExhaustedError,
  CredentialsRejectedError,
  ForbiddenError,
  NotFoundError,
} from '../api/index.js';
import type { CursorState, ScopeRef, Warehouse } from '../warehouse/index.js';
import { assertTimeZone, formatTimestamp } from './clock.js';
import { PageLoader } from './page-loader.js';
import { byPriority, cursorId, type EventInfo, type PlanContext, planItem, planSweep } from './plan.js';
import { runRefresh } from './refresh.js';
import { findResumableRun } from './runs.js';
import { ACCOUNT_SCOPE, eventScope, parentScope } from './scope.js';
import { resolveSelection } from './selection.js';
import type { StreamStats, SyncOptions, SyncResult } from './types.js';
import { runWalk } from './walk.js';
import { itemLabel, type WorkItem } from './work-item.js';

const DEFAULTS = {
  streams: 'core',
  concurrency: 2,
  lagSeconds: 5,
  recordTimezone: 'UTC',
  snapshotEveryHours: 0,
  fullSnapshotEveryHours: 0,
  sweepEveryHours: 24,
  pastEventDays: 30,
  pastEventPollHours: 24,
};

function num(v: unknown): number | null {
  if (v === null || v === undefined || v === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

function str(v: unknown): string | null {
  return v === null || v === undefined ? null : String(v);
}

async function tableExists(warehouse: Warehouse, name: string): Promise<boolean> {
  return (await warehouse.listTables()).includes(name);
}

async function loadEvents(warehouse: Warehouse, options: SyncOptions): Promise<EventInfo[]> {
  if (!(await tableExists(warehouse, 'events'))) return [];
  const r = await warehouse.query(
    `SELECT id, status, CAST(start_date AS VARCHAR) AS start_date, CAST(end_date AS VARCHAR) AS end_date,
            CAST(created_at AS VARCHAR) AS created_at
       FROM events WHERE _deleted_at IS NULL ORDER BY id`,
  );
  const only = options.events ? new Set(options.events) : null;
  const statuses = options.eventStatus ? new Set(options.eventStatus) : null;
  return r.rows
    .map((row) => ({
      id: num(row.id) ?? 0,
      status: str(row.status),
      startDate: str(row.start_date),
      endDate: str(row.end_date),
      createdAt: str(row.created_at)?.slice(0, 19) ?? null,
    }))
    .filter((e) => !only || only.has(e.id))
    .filter((e) => !statuses || (e.status !== null && statuses.has(e.status)))
    .filter((e) => !options.eventsFrom || (e.startDate !== null && e.startDate >= options.eventsFrom))
    .filter((e) => !options.eventsTo || (e.startDate !== null && e.startDate.slice(0, 10) <= options.eventsTo));
}

async function parentIds(warehouse: Warehouse, parent: string): Promise<number[]> {
  if (!(await tableExists(warehouse, parent))) return [];
  const r = await warehouse.query(`SELECT id FROM "${parent}" WHERE _deleted_at IS NULL ORDER BY id`);
  return r.rows.map((row) => num(row.id)).filter((n): n is number => n !== null);
}

/** Custom fields per scope key ('account' or 'event:<id>') from a synced definitions table. */
async function customFieldsByScope(warehouse: Warehouse, definitions: string): Promise<Map<string, CustomField[]>> {
  const byScope = new Map<string, CustomField[]>();
  if (!(await tableExists(warehouse, definitions))) return byScope;
  const r = await warehouse.query(`SELECT * FROM "${definitions}" WHERE _deleted_at IS NULL ORDER BY id`);
  const groups = new Map<string, Record<string, unknown>[]>();
  for (const row of r.rows) {
    const key = row.event_id != null ? `event:${row.event_id}` : 'account';
    const list = groups.get(key) ?? [];
    list.push(row);
    groups.set(key, list);
  }
  for (const [key, rows] of groups) byScope.set(key, customFieldsFromDefinitions(rows));
  return byScope;
}

function emptyStats(): StreamStats {
  return { inserted: 0, updated: 0, deleted: 0, rejected: 0, pages: 0 };
}

/** After this many 404/403 answers for a stream with no success, its remaining scopes are not tried this run. */
const REFUSALS_BEFORE_GIVING_UP = 2;

function refusalHint(stream: ResolvedStream, err: unknown): string {
  if (err instanceof NotFoundError)
    return `${stream.path} answered 404${stream.verified ? '' : ' (this path is unverified)'}: set streams.${stream.name}.path in evsync.config.json if your account serves it elsewhere`;
  return `${stream.path} answered 403: these credentials lack access to ${stream.name}`;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * One sync run: plan the selected streams over their scopes, walk them under the credit budget, and record the
 * run. Returns a summary; throws only for what makes any run impossible (configuration, credentials, database).
 */
export function runSync(client: ApiClient, warehouse: Warehouse, options: SyncOptions): Promise<SyncResult> {
  return syncEngine(client, warehouse, options, { execution: 'run' });
}

/** How the engine treats planned items: walk them, only list them (no call), or walk one page each to count. */
export interface EngineMode {
  execution: 'run' | 'dry' | 'count';
  /** Told of every planned item; with 'count', also of the first page's total count. */
  onItem?: (item: WorkItem, firstPage: { totalCount: number | null; perPage: number | null } | null) => void;
}

export async function syncEngine(
  client: ApiClient,
  warehouse: Warehouse,
  options: SyncOptions,
  engine: EngineMode,
): Promise<SyncResult> {
  const o = { ...DEFAULTS, ...options };
  const dry = engine.execution === 'dry';
  assertTimeZone(o.recordTimezone);
  const selection = resolveSelection(o.streams, { customFields: o.customFields !== false });
  const started = new Date();

  if (!dry) await client.ensureToken();
  const serverNow = () => (dry ? new Date() : client.serverNow());
  const kind = engine.execution === 'count' ? 'plan' : o.mode;
  const resumable = engine.execution === 'run' ? await findResumableRun(warehouse, o.mode) : null;
  const signpost =
    resumable?.signpost ?? formatTimestamp(new Date(serverNow().getTime() - o.lagSeconds * 1000), o.recordTimezone);
  const runId = dry
    ? 'dry-run'
    : await warehouse.startRun(kind, {
        signpost,
        streams: o.streams,
        events: o.events ?? null,
        eventStatus: o.eventStatus ?? null,
        deletes: o.deletes ?? 'auto',
        resumeOf: resumable?.runId ?? null,
        // On the server's clock to the second, like the cursors' updatedAt it is compared with.
        originStartedAt: (
          resumable?.startedAt ?? new Date(Math.floor(serverNow().getTime() / 1000) * 1000)
        ).toISOString(),
      });

  const loader = new PageLoader(warehouse, runId);
  const stats: Record<string, StreamStats> = {};
  const errors: string[] = [];
  const warnings: string[] = [];
  const counts = { total: 0, done: 0, skipped: 0, failed: 0, pending: 0 };
  // Streams the service refuses (404 on the path, 403 on the scope): stop paying 10 credits per scope to hear it.
  const refusals = new Map<string, number>();
  const answered = new Set<string>();
  let stopReason: string | null = null;
  let fatal: unknown = null;
  const abortReason = () => (o.signal?.aborted ? 'stop requested' : null);

  const planCtx = async (): Promise<PlanContext> => ({
    mode: o.mode,
    signpost,
    now: serverNow(),
    cursors: new Map((await warehouse.listCursors()).map((c: CursorState) => [cursorId(c.stream, c.scope), c])),
    resumedStartedAt: resumable ? resumable.startedAt : null,
    snapshotEveryHours: o.snapshotEveryHours,
    fullSnapshotEveryHours: o.fullSnapshotEveryHours,
    pastEventDays: o.pastEventDays,
    pastEventPollHours: o.pastEventPollHours,
    auditStart: o.auditStart ?? 'event-created',
  });

  const resolved = new Map<string, ResolvedStream>();
  const resolve = async (def: StreamDefinition, customFields: CustomField[] = []): Promise<ResolvedStream> => {
    const stream = resolveStream(def, {
      overrides: o.overrides?.[def.name],
      customFields,
      extraFields: await warehouse.existingExtraFields(def),
    });
    if (!dry) await warehouse.ensureTable(stream);
    resolved.set(def.name, stream);
    return stream;
  };

  const execute = async (items: WorkItem[], spareOnly = false): Promise<void> => {
    const limit = pLimit(Math.max(1, o.concurrency));
    counts.total += items.length;
    await Promise.all(
      [...items].sort(byPriority).map((item) =>
        limit(async () => {
          if (stopReason || fatal || abortReason()) {
            counts.pending += 1;
            return;
          }
          // Sweeps in 'auto' mode use spare credits only: never wait for a window for them.
          if (spareOnly && client.ledger.snapshot().remaining < item.price) {
            counts.skipped += 1;
            return;
          }
          if (dry) {
            engine.onItem?.(item, null);
            counts.done += 1;
            return;
          }
          const streamStats = stats[item.stream.name] ?? emptyStats();
          stats[item.stream.name] = streamStats;
          const refused = refusals.get(item.stream.name) ?? 0;
          if (refused >= REFUSALS_BEFORE_GIVING_UP && !answered.has(item.stream.name)) {
            counts.failed += 1;
            streamStats.errors = [...(streamStats.errors ?? []), `${item.cursorKey}: not tried (stream refused)`];
            return;
          }
          let firstPage: { totalCount: number | null; perPage: number | null } | null = null;
          o.onProgress?.({ type: 'item-start', stream: item.stream.name, scope: item.cursorKey, mode: item.mode });
          try {
            const walk = item.mode === 'refresh' ? runRefresh : runWalk;
            const outcome = await walk(item, {
              client,
              loader,
              stats: streamStats,
              signal: o.signal,
              onProgress: (event) => {
                if (event.type === 'page' && firstPage === null)
                  firstPage = { totalCount: event.totalCount, perPage: event.perPage };
                o.onProgress?.(event);
              },
              now: serverNow,
              pageLimit: engine.execution === 'count' ? 1 : undefined,
            });
            engine.onItem?.(item, firstPage);
            answered.add(item.stream.name);
            if (outcome.complete) {
              counts.done += 1;
              o.onProgress?.({ type: 'item-done', stream: item.stream.name, scope: item.cursorKey, ...outcome });
            } else counts.pending += 1;
          } catch (err) {
            if (err instanceof BudgetExhaustedError) {
              stopReason ??= err.message;
              counts.pending += 1;
              return;
            }
            if (err instanceof CredentialsRejectedError) {
              fatal ??= err;
              counts.failed += 1;
              return;
            }
            const refusal = err instanceof NotFoundError || err instanceof ForbiddenError;
            if (refusal) refusals.set(item.stream.name, (refusals.get(item.stream.name) ?? 0) + 1);
            const message = `${itemLabel(item)}: ${refusal ? refusalHint(item.stream, err) : errorText(err)}`;
            counts.failed += 1;
            errors.push(message);
            streamStats.errors = [...(streamStats.errors ?? []), errorText(err)];
            o.onProgress?.({ type: 'item-failed', stream: item.stream.name, scope: item.cursorKey, error: message });
          }
        }),
      ),
    );
  };

  const keep = (item: WorkItem | null, list: WorkItem[]) => {
    if (item) list.push(item);
    else counts.skipped += 1;
  };

  try {
    // Phase 1: account streams. `events` gives every event scope and the definition streams name the custom
    // fields of others, so those land first; the rest of the account streams are resolved after them.
    const isDefinition = new Set(
      [...selection.accountPhase, ...selection.eventPhase].flatMap((s) =>
        s.customFields ? [s.customFields.definitions] : [],
      ),
    );
    const accountFirst = selection.accountPhase.filter((s) => s.name === 'events' || isDefinition.has(s.name));
    const accountRest = selection.accountPhase.filter((s) => !accountFirst.includes(s));
    for (const group of [accountFirst, accountRest]) {
      const ctx = await planCtx();
      const items: WorkItem[] = [];
      for (const def of group) {
        const customs = def.customFields ? await customFieldsByScope(warehouse, def.customFields.definitions) : null;
        const stream = await resolve(def, customs?.get('account') ?? []);
        keep(planItem(stream, ACCOUNT_SCOPE, ctx), items);
      }
      if (!stopReason && !fatal) await execute(items);
    }

    // Phase 2: event-scoped definitions and parent-scoped streams.
    const events = await loadEvents(warehouse, o);
    const eventById = new Map(events.map((e) => [e.id, e]));
    o.onProgress?.({
      type: 'plan',
      items: 0,
      streams: [...selection.accountPhase, ...selection.dependentPhase, ...selection.eventPhase].map((s) => s.name),
      events: events.length,
    });
    let ctx = await planCtx();
    const dependentItems: WorkItem[] = [];
    for (const def of selection.dependentPhase) {
      const stream = await resolve(def);
      if (def.scope === 'event') {
        for (const e of events) keep(planItem(stream, eventScope(e.id), ctx, { event: e }), dependentItems);
      } else if (typeof def.scope === 'object') {
        for (const id of await parentIds(warehouse, def.scope.parent)) {
          keep(planItem(stream, parentScope(def, id), ctx), dependentItems);
        }
      }
    }
    if (!stopReason && !fatal) await execute(dependentItems);

    // Phase 3: the event-scoped streams, live and upcoming events first.
    ctx = await planCtx();
    const eventItems: WorkItem[] = [];
    for (const def of selection.eventPhase) {
      const customs = def.customFields ? await customFieldsByScope(warehouse, def.customFields.definitions) : null;
      const union = new Map<string, CustomField>();
      for (const list of customs?.values() ?? []) for (const f of list) union.set(f.name, f);
      const stream = await resolve(def, [...union.values()]);
      for (const e of events) {
        const scope: ScopeRef = eventScope(e.id);
        // Definitions are per event (event questions) or account-wide (session, contact, sponsor fields).
        const names = customs ? (customs.get(scope.key) ?? customs.get('account') ?? []).map((f) => f.name) : undefined;
        keep(planItem(stream, scope, ctx, { event: e, customFieldNames: names }), eventItems);
      }
    }
    // Streams refreshed through their parent go after it, once the parent's changes of this run are stored.
    if (!stopReason && !fatal) await execute(eventItems.filter((i) => i.mode !== 'refresh'));
    if (!stopReason && !fatal) await execute(eventItems.filter((i) => i.mode === 'refresh'));

    // Phase 4: delete sweeps of cursor streams, last, with what credits are left.
    if (o.deletes !== false && !stopReason && !fatal && !abortReason()) {
      ctx = await planCtx();
      const sweeps: WorkItem[] = [];
      const policy = { force: o.deletes === true, everyHours: o.sweepEveryHours };
      for (const name of selection.requested.map((s) => s.name)) {
        const stream = resolved.get(name);
        if (!stream?.cursor) continue;
        if (stream.scope === 'account') keep(planSweep(stream, ACCOUNT_SCOPE, ctx, policy), sweeps);
        else if (stream.scope === 'event') {
          for (const e of events) keep(planSweep(stream, eventScope(e.id), ctx, policy, eventById.get(e.id)), sweeps);
        }
      }
      await execute(sweeps, o.deletes !== true);
    }
    // Views are a convenience over the data: a view that cannot be built is reported, not a failed sync.
    if (!dry)
      await warehouse.createAnalyticsViews().catch((err: unknown) => {
        warnings.push(`analytics views: ${errorText(err)}`);
      });
  } catch (err) {
    fatal ??= err;
  }

  // The run's pages were staged and merged into their tables in batches (src/warehouse/merge.ts): merge the rest
  // and take the counts of what they inserted and updated.
  if (!dry) {
    try {
      for (const [name, c] of Object.entries(await warehouse.finishLoads(runId))) {
        const s = stats[name] ?? emptyStats();
        s.inserted += c.inserted;
        s.updated += c.updated;
        stats[name] = s;
      }
    } catch (err) {
      fatal ??= err;
    }
  }
  stopReason ??= abortReason() && counts.pending > 0 ? 'stop requested' : null;
  const clientStats = client.stats();
  const finished = new Date();
  const status: SyncResult['status'] = fatal || counts.failed > 0 ? 'failed' : stopReason ? 'partial' : 'done';
  if (fatal) errors.unshift(errorText(fatal));
  const result: SyncResult = {
    runId,
    status,
    reason: stopReason,
    signpost,
    resumed: resumable?.runId ?? null,
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationMs: finished.getTime() - started.getTime(),
    credits: {
      list: clientStats.credits.list,
      other: clientStats.credits.other,
      token: clientStats.credits.token,
      total: clientStats.credits.list + clientStats.credits.other + clientStats.credits.token,
    },
    requests: clientStats.requests,
    waitsMs: clientStats.waitMs,
    rejected429: clientStats.rejected429,
    streams: stats,
    items: counts,
    errors,
    warnings,
  };
  if (!dry) {
    await warehouse.recordCredits(runId, { ...client.ledger.snapshot() });
    await warehouse.finishRun(runId, {
      status,
      finishedAt: formatTimestamp(finished),
      credits: result.credits,
      requests: result.requests,
      waitsMs: result.waitsMs,
      rejected429: result.rejected429,
      streams: stats,
      error: errors.length ? errors.join('\n').slice(0, 4000) : null,
    });
  }
  if (fatal instanceof CredentialsRejectedError) throw fatal;
  return result;
}
