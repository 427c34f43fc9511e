/**
 * One sync run: plan the selected streams over their scopes phase by phase (each phase's scopes come from what the
 * one before stored), hand the items to the executor, and record the run. The planner (plan.ts) decides what to
 * do, the executor (executor.ts) how and when to stop, the walks (walk.ts, refresh.ts) one item each; the
 * warehouse answers every question about state.
 */
import { customFieldsFromDefinitions, resolveStream } from '../../connectors/index.js';
import type { CustomField, ResolvedStream, StreamDefinition } from '../../connectors/types.js';
import { ENGINE_DEFAULTS } from '../../schemas/engine-options.js';
import { type ApiClient, CredentialsRejectedError } from '../api/index.js';
import {
  type EventRow,
  recordCustomFieldTypes,
  type ScopeRef,
  type UnavailableStream,
  type Warehouse,
} from '../warehouse/index.js';
import { checkAccount } from './account.js';
import { assertTimeZone, formatTimestamp, hoursBetween } from './clock.js';
import { CreditRecorder } from './credit-recorder.js';
import { SyncUsageError } from './errors.js';
import { checkEventFilters, eventsInScope, hasEventFilters, unmatchedFilters } from './event-scope.js';
import { Executor } from './executor.js';
import { errorText } from './failures.js';
import { PageLoader } from './page-loader.js';
import { cursorId, type EventInfo, eventRank, FULL_READ_PRIORITY, type PlanContext } from './plan.js';
import { findResumableRun, type ResumableRun } from './runs.js';
import { ACCOUNT_SCOPE, eventScope, parentScope } from './scope.js';
import { resolveSelection, type Selection } from './selection.js';
import { planItem, planSweep } from './stream-kinds.js';
import type { SyncOptions, SyncResult, UnavailableReport } from './types.js';
import { Window } from './window.js';
import type { CountedItem, WorkItem } from './work-item.js';

const DEFAULTS = { streams: 'core', ...ENGINE_DEFAULTS };

type Options = SyncOptions & typeof DEFAULTS;

/**
 * How the engine treats planned items: walk them, only list them (no call), or walk one page each to count (the
 * events list whole: it gives every event scope).
 */
interface EngineMode {
  execution: 'run' | 'dry' | 'count';
  /** Told of every planned item; with 'count', also of what its walk learned (the first answer's `_meta`). */
  onItem?: (item: WorkItem, counted: CountedItem | null) => void;
  /** With 'count': the items to count; the others are only listed, as in a dry run. Every item when absent. */
  counts?: (item: WorkItem) => boolean;
  /** With 'count': told of the events in scope once they are known, before any event-scoped item runs. */
  eventsKnown?: (events: readonly EventInfo[]) => Promise<void>;
}

/** The pages a counting walk reads: the events list whole (every event scope comes from it), one of the rest. */
function countPages(item: WorkItem): number | undefined {
  return item.stream.name === 'events' ? undefined : 1;
}

/** Everything one run shares between its phases. */
interface Run {
  client: ApiClient;
  warehouse: Warehouse;
  o: Options;
  dry: boolean;
  selection: Selection;
  runId: string;
  window: Window;
  resumable: ResumableRun | null;
  exec: Executor;
  resolved: Map<string, ResolvedStream>;
  warnings: string[];
  /** Records the credit window as answers come (null for a dry run, which makes no call). */
  credits: CreditRecorder | null;
}

/**
 * One sync run. Returns a summary; throws only for what makes any run impossible (configuration, credentials,
 * the database, a warehouse of another account, filters that match no event).
 */
export function runSync(client: ApiClient, warehouse: Warehouse, options: SyncOptions): Promise<SyncResult> {
  return syncEngine(client, warehouse, options, { execution: 'run' });
}

export async function syncEngine(
  client: ApiClient,
  warehouse: Warehouse,
  options: SyncOptions,
  engine: EngineMode,
): Promise<SyncResult> {
  const o: Options = { ...DEFAULTS, ...options };
  assertTimeZone(o.recordTimezone);
  checkEventFilters(o);
  const selection = resolveSelection(o.streams, { customFields: o.customFields !== false });
  // A daemon's runs list streams one by one that the user selected through a set: only the user's own names count.
  if (o.namedStreams) selection.named = new Set(o.namedStreams);
  const dry = engine.execution === 'dry';
  const started = new Date(client.now());
  // Made before the token call, whose answer is the run's first reading of the credit window.
  const credits = dry ? null : (o.creditRecorder ?? ownRecorder(client, warehouse, o));
  try {
    // The token call is not cancelled by a stop: it is short, and the run it opens records the stop as partial.
    if (!dry) await client.ensureToken();
    await checkAccount(client, warehouse, { bind: !dry });
    const run = await openRun(client, warehouse, o, engine, selection, credits);
    try {
      await runPhases(run, engine);
    } catch (err) {
      run.exec.fatal ??= err;
    }
    const result = await closeRun(run, started, engine);
    const fatal = run.exec.fatal;
    if (fatal instanceof CredentialsRejectedError || fatal instanceof SyncUsageError) throw fatal;
    return result;
  } finally {
    if (credits && credits !== o.creditRecorder) await credits.close();
  }
}

/** A one-shot run's own credit recorder; a reading it could not write is lost, never the run. */
function ownRecorder(client: ApiClient, warehouse: Warehouse, o: Options): CreditRecorder {
  return new CreditRecorder({ ledger: client.ledger, warehouse, now: o.now ?? client.now });
}

/** Streams earlier runs found unavailable that are not yet due for a retry (same path, within the retry hours). */
async function knownUnavailable(
  warehouse: Warehouse,
  o: Options,
  selection: Selection,
  now: Date,
): Promise<Map<string, UnavailableStream>> {
  const byName = new Map(
    [...selection.accountPhase, ...selection.dependentPhase, ...selection.eventPhase].map((s) => [s.name, s]),
  );
  const known = new Map<string, UnavailableStream>();
  for (const u of await warehouse.unavailable.list()) {
    const def = byName.get(u.stream);
    if (!def) continue;
    const path = o.overrides?.[u.stream]?.path ?? def.path;
    if (path === u.path && hoursBetween(u.lastSeenAt, now) < o.unavailableRetryHours) known.set(u.stream, u);
  }
  return known;
}

async function openRun(
  client: ApiClient,
  warehouse: Warehouse,
  options: Options,
  engine: EngineMode,
  selection: Selection,
  credits: CreditRecorder | null,
): Promise<Run> {
  const dry = engine.execution === 'dry';
  const serverNow = dry ? new Date(client.now()) : client.serverNow();
  const kind = options.runKind ?? options.mode;
  const resumable = engine.execution === 'dry' ? null : await findResumableRun(warehouse, kind);
  const window = resumable
    ? new Window(resumable.signpost)
    : Window.endingAt(serverNow, options.lagSeconds, options.recordTimezone);
  // A counting plan is recorded as a run of the kind it prices, so that run resumes it and reuses every page read.
  const runId = dry
    ? 'dry-run'
    : await warehouse.runs.start(kind, {
        signpost: window.signpost,
        streams: options.streams,
        events: options.events ?? null,
        eventStatus: options.eventStatus ?? null,
        deletes: options.deletes ?? 'auto',
        resumeOf: resumable?.runId ?? null,
        countedByPlan: engine.execution === 'count',
        // On the server's clock to the second, like the cursors' updatedAt it is compared with.
        originStartedAt: (
          resumable?.startedAt ?? new Date(Math.floor(serverNow.getTime() / 1000) * 1000)
        ).toISOString(),
      });
  const counts = engine.execution === 'count' ? engine.counts : undefined;
  if (!dry) {
    // The config says which streams keep no history; before any page of the run is written.
    const off = Object.entries(options.overrides ?? {}).filter(([, o]) => o.history === false);
    await warehouse.setHistoryOff(off.map(([name]) => name));
    credits?.runStarted(runId);
    options.onProgress?.({ type: 'run', runId });
  }
  const exec = new Executor({
    // The walks' calls: in the run's lane when it is bulk work.
    client: options.lane ? client.inBulkLane(options.lane) : client,
    warehouse,
    loader: dry ? null : new PageLoader(warehouse, runId, warehouse.openLoad(runId)),
    runId,
    concurrency: options.concurrency,
    mergeEachItem: options.mergeEachItem,
    signal: options.signal,
    onProgress: options.onProgress,
    execution: engine.execution,
    countPages,
    listOnly: counts && ((item) => !counts(item)),
    onItem: engine.onItem,
    knownUnavailable: await knownUnavailable(warehouse, options, selection, serverNow),
    onItemSettled: dry ? undefined : (credits, streams) => warehouse.runs.recordProgress(runId, { credits, streams }),
  });
  const resolved = new Map<string, ResolvedStream>();
  return {
    client,
    warehouse,
    o: options,
    dry,
    selection,
    runId,
    window,
    resumable,
    exec,
    resolved,
    warnings: [],
    credits,
  };
}

/** The run's "now": the server's clock, or this machine's for a dry run (which makes no call to learn it). */
function runNow(run: Run): Date {
  return run.dry ? new Date(run.client.now()) : run.client.serverNow();
}

async function planContext(run: Run): Promise<PlanContext> {
  const { o } = run;
  return {
    mode: o.mode,
    window: run.window,
    now: runNow(run),
    cursors: new Map((await run.warehouse.cursors.list()).map((c) => [cursorId(c.stream, c.scope), c])),
    resumedStartedAt: run.resumable ? run.resumable.startedAt : null,
    snapshotEveryHours: o.snapshotEveryHours,
    fullSnapshotEveryHours: o.fullSnapshotEveryHours,
    pastEventDays: o.pastEventDays,
    pastEventPollHours: o.pastEventPollHours,
    auditStart: o.auditStart ?? 'event-created',
  };
}

async function resolve(run: Run, def: StreamDefinition, customFields: CustomField[] = []): Promise<ResolvedStream> {
  const stream = resolveStream(def, {
    overrides: run.o.overrides?.[def.name],
    customFields,
    extraFields: await run.warehouse.existingExtraFields(def),
  });
  if (!run.dry) await run.warehouse.ensureTable(stream);
  run.resolved.set(def.name, stream);
  return stream;
}

/**
 * Custom fields per scope key ('account' or 'event:<id>') from a synced definitions table. When the definitions
 * stream is unavailable the stream loads its documented fields only, and the run says so once.
 */
async function customFieldsOf(run: Run, def: StreamDefinition): Promise<Map<string, CustomField[]> | null> {
  if (!def.customFields) return null;
  const definitions = def.customFields.definitions;
  if (run.exec.isUnavailable(definitions)) {
    const note = `${def.name}: custom fields not requested (their definitions, ${definitions}, are unavailable): documented fields only`;
    if (!run.warnings.includes(note)) run.warnings.push(note);
  }
  const groups = new Map<string, Record<string, unknown>[]>();
  for (const row of await run.warehouse.current.rows(definitions)) {
    const key = row.event_id != null ? eventScope(Number(row.event_id)).key : ACCOUNT_SCOPE.key;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  return new Map([...groups].map(([key, rows]) => [key, customFieldsFromDefinitions(rows)]));
}

function keep(run: Run, item: WorkItem | null, list: WorkItem[]): void {
  if (item) list.push(item);
  else run.exec.counts.skipped += 1;
}

async function runPhases(run: Run, engine: EngineMode): Promise<void> {
  await accountPhase(run);
  const events = await eventsPhase(run);
  if (engine.execution === 'count') await engine.eventsKnown?.(events);
  const groups = await byValue(run, events);
  if (groups === null) {
    await dependentPhase(run, events, true);
    await eventPhase(run, await eventItems(run, events));
    await sweepPhase(run, await sweepItems(run, events, true));
  } else {
    for (const [index, group] of groups.entries()) {
      await dependentPhase(run, group, index === 0);
      await owedGroup(run, group, index === groups.length - 1);
    }
  }
  if (!run.dry) await buildViews(run);
}

/**
 * The events in the order their work runs when the run owes delete checks or due sweeps (a daemon's catch-up after
 * a silence): the live and upcoming events first, then the past ones; null for other runs, whose sweeps use spare
 * credits after every poll. A delete the silence lost in a live event is otherwise found only after every past
 * event was polled, windows later at the real limit (catch-up-value.test.ts).
 */
async function byValue(run: Run, events: readonly EventInfo[]): Promise<(readonly EventInfo[])[] | null> {
  const owed = (run.o.deleteChecks?.length ?? 0) > 0 || run.o.deletes === 'due';
  if (!owed) return null;
  // Ranking needs the clock only (planContext would read every cursor for nothing).
  const ctx = {
    now: run.dry ? new Date(run.client.now()) : run.client.serverNow(),
    pastEventDays: run.o.pastEventDays,
  };
  const first = new Set(events.filter((e) => eventRank(e, ctx) === 0));
  return [[...first], events.filter((e) => !first.has(e))];
}

/**
 * One group of a catch-up's events, cheapest repair first: each stream's polls with its delete checks (one call a
 * scope; a check that finds a lost record sweeps its scope there and then), then the refreshes through a parent, the
 * whole reads (a stream without a cursor is read whole: a live event's line items cost more pages than all of its
 * polls), and last the sweeps whose schedule fell due in the silence. Streams go in the order the run was given
 * them (the daemon's catch-up names the webhook-fed ones first: the silence left them the furthest behind).
 */
async function owedGroup(run: Run, events: readonly EventInfo[], accountScopes: boolean): Promise<void> {
  const items = await eventItems(run, events);
  const sweeps = await sweepItems(run, events, accountScopes);
  const polls = items.filter((i) => i.priority < FULL_READ_PRIORITY && i.mode !== 'refresh');
  // With the checks, the sweeps they began (an open walk): what a check found is settled before anything else.
  const checks = sweeps.filter((i) => i.mode === 'check' || i.resume !== null);
  const ofStream = (list: readonly WorkItem[], name: string) => list.filter((i) => i.stream.name === name);
  const streams = [...run.selection.requested.map((s) => s.name), ...run.resolved.keys()];
  // A scope's check after its poll: the check counts what the poll stored, and a sweep never races the poll.
  for (const name of new Set(streams)) {
    await run.exec.execute(ofStream(polls, name));
    await run.exec.execute(ofStream(checks, name));
  }
  await run.exec.execute(items.filter((i) => i.mode === 'refresh'));
  await run.exec.execute(items.filter((i) => i.priority >= FULL_READ_PRIORITY && i.mode !== 'refresh'));
  if (!run.exec.stopping) await run.exec.execute(sweeps.filter((i) => i.mode !== 'check' && i.resume === null));
}

/**
 * Account streams. `events` gives every event scope and the definition streams name the custom fields of others,
 * so those land first; the rest of the account streams are resolved after them.
 */
async function accountPhase(run: Run): Promise<void> {
  const { selection } = run;
  const isDefinition = new Set(
    [...selection.accountPhase, ...selection.eventPhase].flatMap((s) =>
      s.customFields ? [s.customFields.definitions] : [],
    ),
  );
  const first = selection.accountPhase.filter((s) => s.name === 'events' || isDefinition.has(s.name));
  const rest = selection.accountPhase.filter((s) => !first.includes(s));
  // With event filters the events list goes alone first and the filters are judged on it: a filter that matches no
  // event costs that list, never the other streams.
  const filtered = hasEventFilters(run.o);
  const groups = filtered
    ? [first.filter((s) => s.name === 'events'), first.filter((s) => s.name !== 'events'), rest]
    : [first, rest];
  for (const [index, group] of groups.entries()) {
    if (filtered && index === 1) refuseUnmatchedFilters(run, await run.warehouse.current.events());
    const ctx = await planContext(run);
    const items: WorkItem[] = [];
    for (const def of group) {
      const customs = await customFieldsOf(run, def);
      const stream = await resolve(run, def, customs?.get(ACCOUNT_SCOPE.key) ?? []);
      keep(run, planItem(stream, ACCOUNT_SCOPE, ctx), items);
    }
    await run.exec.execute(items);
  }
}

/**
 * Refuses filters that match no stored event (naming what exists), once the events can be judged: the run needs
 * them, `events` answered, and a dry run has some stored. Returns the warning for ids that match nothing.
 */
function refuseUnmatchedFilters(run: Run, all: readonly EventRow[]): string | null {
  const needsEvents = run.selection.dependentPhase.length + run.selection.eventPhase.length > 0;
  if (!needsEvents || run.exec.stopping || run.exec.isUnavailable('events') || (run.dry && all.length === 0))
    return null;
  const { error, warning } = unmatchedFilters(all, run.o);
  if (error) throw new SyncUsageError(error);
  return warning;
}

/** The events in scope, once `events` is stored; filters that match none are refused, naming what exists. */
async function eventsPhase(run: Run): Promise<EventInfo[]> {
  const all = await run.warehouse.current.events();
  const events = eventsInScope(all, run.o);
  const warning = refuseUnmatchedFilters(run, all);
  if (warning) run.warnings.push(warning);
  run.o.onProgress?.({
    type: 'plan',
    items: 0,
    streams: [...run.selection.accountPhase, ...run.selection.dependentPhase, ...run.selection.eventPhase].map(
      (s) => s.name,
    ),
    events: events.length,
  });
  return events;
}

/** Event-scoped definitions of `events`, and the parent-scoped streams (with the first group of events only). */
async function dependentPhase(run: Run, events: readonly EventInfo[], parentScopes: boolean): Promise<void> {
  const ctx = await planContext(run);
  const items: WorkItem[] = [];
  for (const def of run.selection.dependentPhase) {
    const stream = await resolve(run, def);
    if (def.scope === 'event') {
      for (const e of events) keep(run, planItem(stream, eventScope(e.id), ctx, { event: e }), items);
    } else if (typeof def.scope === 'object' && parentScopes) {
      for (const id of await run.warehouse.current.ids(def.scope.parent)) {
        keep(run, planItem(stream, parentScope(def, id), ctx), items);
      }
    }
  }
  await run.exec.execute(items);
}

/** The event-scoped streams' items over `events`, with the custom fields each scope's definitions name. */
async function eventItems(run: Run, events: readonly EventInfo[]): Promise<WorkItem[]> {
  const ctx = await planContext(run);
  const items: WorkItem[] = [];
  for (const def of run.selection.eventPhase) {
    const customs = await customFieldsOf(run, def);
    const union = new Map<string, CustomField>();
    for (const list of customs?.values() ?? []) for (const f of list) union.set(f.name, f);
    const stream = await resolve(run, def, [...union.values()]);
    for (const e of events) {
      const scope: ScopeRef = eventScope(e.id);
      // Definitions are per event (event questions) or account-wide (session, contact, sponsor fields).
      const fields = customs ? (customs.get(scope.key) ?? customs.get(ACCOUNT_SCOPE.key) ?? []) : undefined;
      keep(run, planItem(stream, scope, ctx, { event: e, customFieldNames: fields?.map((f) => f.name) }), items);
    }
  }
  return items;
}

/** The event-scoped streams, live and upcoming events first (priority); refreshes through a parent after the parent. */
async function eventPhase(run: Run, items: readonly WorkItem[]): Promise<void> {
  await run.exec.execute(items.filter((i) => i.mode !== 'refresh'));
  await run.exec.execute(items.filter((i) => i.mode === 'refresh'));
}

/** Delete sweeps and checks of cursor streams; account-wide streams only with the last group of events (byValue). */
async function sweepItems(run: Run, events: readonly EventInfo[], accountScopes: boolean): Promise<WorkItem[]> {
  const { o } = run;
  if (o.deletes === false || run.exec.stopping) return [];
  const ctx = await planContext(run);
  const items: WorkItem[] = [];
  const checked = new Set(o.deleteChecks ?? []);
  for (const { name } of run.selection.requested) {
    const stream = run.resolved.get(name);
    if (!stream?.cursor) continue;
    const policy = { force: o.deletes === true, everyHours: o.sweepEveryHours, check: checked.has(name) };
    if (stream.scope === 'account' && accountScopes) keep(run, planSweep(stream, ACCOUNT_SCOPE, ctx, policy), items);
    else if (stream.scope === 'event') {
      for (const e of events) keep(run, planSweep(stream, eventScope(e.id), ctx, policy, e), items);
    }
  }
  return items;
}

/**
 * Delete sweeps, last: with what credits are left ('auto'), the due ones ('due'), or all (`--deletes`). Delete
 * checks are owed whatever `deletes` says (a lost delete delivery is seen by nothing else).
 */
async function sweepPhase(run: Run, items: readonly WorkItem[]): Promise<void> {
  if (run.exec.stopping) return;
  const spareOnly = run.o.deletes !== true && run.o.deletes !== 'due';
  await run.exec.execute(items.filter((i) => i.mode === 'check'));
  await run.exec.execute(
    items.filter((i) => i.mode !== 'check'),
    spareOnly,
  );
}

/** Views are a convenience over the data: a view that cannot be built is reported (it alone), not a failed sync. */
async function buildViews(run: Run): Promise<void> {
  try {
    // The views type a custom field by the type its answers were stored with this run (custom-field-types.ts).
    await recordCustomFieldTypes(run.warehouse, [...run.resolved.values()]);
    const report = await run.warehouse.buildAnalyticsViews();
    for (const warning of report.warnings) run.warnings.push(`analytics views: ${warning}`);
  } catch (err) {
    run.warnings.push(`analytics views: ${errorText(err)}`);
  }
}

/** Fields kept out of the tables (a case twin of a column, a scope name carried as data): said once per stream. */
function skippedFieldWarnings(run: Run): void {
  for (const [stream, skipped] of Object.entries(run.exec.loader?.skippedFields() ?? {})) {
    const list = skipped
      .slice(0, 5)
      .map((s) => `${s.field} (${s.reason}, ${s.count} record${s.count === 1 ? '' : 's'})`)
      .join('; ');
    const more = skipped.length > 5 ? `; +${skipped.length - 5} more` : '';
    run.warnings.push(`${stream}: fields kept out of the table: ${list}${more}`);
  }
}

function unavailableReports(run: Run): UnavailableReport[] {
  return run.exec.unavailableStreams().map((u) => {
    const def = run.resolved.get(u.stream);
    return {
      ...u,
      verified: def?.verified ?? u.verified,
      named: run.selection.named.has(u.stream),
      hint: `set streams.${u.stream}.path in evsync.config.json if your account serves ${u.stream} elsewhere`,
    };
  });
}

function statusOf(run: Run, unavailable: readonly UnavailableReport[]): SyncResult['status'] {
  const { exec } = run;
  if (exec.fatal || exec.counts.failed > 0 || exec.unreachable) return 'failed';
  if (unavailable.some((u) => u.named)) return 'failed';
  return exec.stopReason || (run.o.signal?.aborted && exec.counts.pending > 0) ? 'partial' : 'done';
}

/**
 * The run's pages were staged and merged into their tables in batches (src/warehouse/load/merge.ts): merge the rest and
 * take the counts of what they inserted and updated.
 */
async function finishLoads(run: Run): Promise<void> {
  if (run.dry) return;
  try {
    for (const [name, c] of Object.entries(await run.warehouse.finishLoads(run.runId))) {
      const s = run.exec.statsOf(name);
      s.inserted += c.inserted;
      s.updated += c.updated;
    }
  } catch (err) {
    run.exec.fatal ??= err;
  }
}

async function closeRun(run: Run, started: Date, engine: EngineMode): Promise<SyncResult> {
  const { exec, client } = run;
  await finishLoads(run);
  exec.settle();
  skippedFieldWarnings(run);
  const unavailable = unavailableReports(run);
  const stopReason = exec.stopReason ?? (run.o.signal?.aborted && exec.counts.pending > 0 ? 'stop requested' : null);
  let status = statusOf(run, unavailable);
  // A counting plan leaves the rest for the run it prices: partial, so that run resumes it.
  if (engine.execution === 'count' && status === 'done') status = 'partial';
  const errors = exec.errorLines();
  for (const entry of unavailable.filter((x) => x.named))
    errors.push(`${entry.stream}: ${entry.detail}: ${entry.hint}`);
  if (exec.fatal) errors.unshift(errorText(exec.fatal));
  else if (exec.unreachable && stopReason) errors.unshift(stopReason);
  const warnings = [...run.warnings];
  for (const entry of unavailable.filter((x) => !x.named)) {
    warnings.push(
      `${entry.stream} is unavailable (${entry.detail}${entry.since ? `, since ${entry.since} UTC` : ''}): skipped; ${entry.hint}`,
    );
  }
  const stats = client.stats();
  const finished = new Date(client.now());
  const credits = {
    list: stats.credits.list,
    other: stats.credits.other,
    token: stats.credits.token,
    total: stats.credits.list + stats.credits.other + stats.credits.token,
  };
  const result: SyncResult = {
    runId: run.runId,
    status,
    reason: stopReason,
    signpost: run.window.signpost,
    resumed: run.resumable?.runId ?? null,
    startedAt: started.toISOString(),
    finishedAt: finished.toISOString(),
    durationMs: finished.getTime() - started.getTime(),
    credits,
    requests: stats.requests,
    waitsMs: stats.waitMs,
    rejected429: stats.rejected429,
    streams: exec.stats,
    items: { ...exec.counts },
    errors,
    warnings,
    unavailable,
  };
  if (!run.dry) await recordRun(run, result, engine);
  return result;
}

async function recordRun(run: Run, result: SyncResult, engine: EngineMode): Promise<void> {
  const { warehouse, runId, exec } = run;
  // The window as the service last reported it, with what the run spent since its last reading.
  await run.credits?.runEnded();
  await warehouse.runs.finish(runId, {
    status: result.status,
    finishedAt: formatTimestamp(new Date(result.finishedAt)),
    credits: result.credits,
    requests: result.requests,
    waitsMs: result.waitsMs,
    rejected429: result.rejected429,
    streams: result.streams,
    error: result.errors.length ? result.errors.join('\n').slice(0, 4000) : null,
  });
  // The next run resumes this one (its signpost, the scopes it completed) when it stopped on the service going
  // away or was a counting plan; a run failed by its data or a refused stream starts afresh (its walks still
  // resume from their checkpoints), so a lasting failure can never pin every later run to an old signpost.
  const resumable =
    result.status === 'failed' && (exec.unreachable || (!exec.hardFailure && exec.counts.failed > 0))
      ? !(exec.fatal instanceof Error)
      : engine.execution === 'count';
  if (resumable) await warehouse.runs.setResumable(runId, true);
}
