/**
 * One batch of journaled deliveries turned into warehouse changes: read each body again, drop duplicates and what the
 * sync does not cover, decide per record (decide.ts), then write: payload rows and re-read rows through the engine's
 * own PageLoader (the one sink polled pages go through: secrets scrubbed, bad records quarantined, new fields added
 * as columns), deletes as `_deleted_at`. Returns how each delivery was settled; the caller records that in the journal.
 */

import { IDS_PER_CALL, LIST_CALL_CREDITS, utcText } from '../../../connectors/service.js';
import type { ApiClient } from '../../api/index.js';
import { ForbiddenError, NotFoundError } from '../../api/index.js';
import type { JournaledDelivery, Partition, Settlement, StreamSettlement, Warehouse } from '../../warehouse/index.js';
import type { PageLoader } from '../page-loader.js';
import { ACCOUNT_SCOPE, eventScope } from '../scope.js';
import { type Candidate, type Decision, decide, type StoredState } from './decide.js';
import { type ParsedDelivery, parseDelivery } from './payload.js';
import { rereadByIds } from './reread.js';
import type { EventScope } from './scope.js';
import type { CaptureStream, CaptureStreams } from './streams.js';
import { recordTimeMs, utcMs } from './time.js';

export interface BatchContext {
  warehouse: Warehouse;
  client: ApiClient;
  /** Where every record becomes a row (or a quarantined record), as in a sync run. */
  loader: PageLoader;
  streams: CaptureStreams;
  scope: EventScope;
  /** Streams this sync covers (the others' deliveries are journaled and ignored). */
  selected: ReadonlySet<string>;
  recordTimezone: string;
  runId: string;
  /** Re-applying deliveries already applied (after a reconciliation run): see decide.ts. */
  replay?: boolean;
  signal?: AbortSignal;
  /** Told of each partition (its table, its event or null for the whole table) once a write to it is committed (the daemon's publisher). */
  onTouched?: (partition: Partition) => void;
}

interface BatchResult {
  settlements: Settlement[];
  streams: StreamSettlement[];
  /** List calls made to re-read records (10 credits each). */
  calls: number;
  /** Seconds from each applied change (its `datetime`) to now, per stream. */
  lags: { stream: string; seconds: number }[];
  /** Whether an event record changed (the event scope must be read again). */
  eventsChanged: boolean;
  /** Deliveries left pending: their re-read would have waited for the credit window. */
  deferred: number;
  /** When the oldest of them was journaled (UTC text), null when none was deferred. */
  oldestDeferred: string | null;
}

const CONTENT_TYPE = { json: 'application/json', post: 'application/x-www-form-urlencoded' } as const;

interface Item {
  entry: JournaledDelivery;
  delivery: ParsedDelivery;
}

function isComplete(record: Record<string, unknown>, fields: readonly string[]): boolean {
  return fields.every((f) => record[f] !== undefined);
}

/** The payload record cut to what a list of its scope returns (nothing else may reach the table). */
function listShaped(record: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) if (record[f] !== undefined) out[f] = record[f];
  if (record.event_id !== undefined && out.event_id === undefined) out.event_id = record.event_id;
  return out;
}

function minimalRecord(d: ParsedDelivery): Record<string, unknown> {
  return d.eventId !== null && d.object !== 'event' ? { id: d.recordId, event_id: d.eventId } : { id: d.recordId };
}

/** What a batch did so far: settlements, lags, calls, deliveries deferred. */
class Tally {
  readonly settlements: Settlement[] = [];
  readonly lags: { stream: string; seconds: number }[] = [];
  calls = 0;
  deferred = 0;
  oldestDeferred: string | null = null;

  settle(entry: JournaledDelivery, status: Settlement['status'], outcome: string, reason: string | null = null): void {
    this.settlements.push({ seq: entry.seq, status, outcome, reason });
  }

  defer(entry: JournaledDelivery): void {
    this.deferred += 1;
    if (this.oldestDeferred === null || entry.receivedAt < this.oldestDeferred) this.oldestDeferred = entry.receivedAt;
  }
}

/** Records of one scope into rows (or, `observed`, into the history alone), through the sink polled pages go through. */
async function load(
  ctx: BatchContext,
  captureStream: CaptureStream,
  eventId: number | null,
  records: readonly unknown[],
  observed = false,
): Promise<void> {
  if (records.length === 0) return;
  const scope = eventId === null ? ACCOUNT_SCOPE : eventScope(eventId);
  const r = await ctx.loader.load({ stream: captureStream.stream, scope, records, ...(observed ? { observed } : {}) });
  ctx.onTouched?.({ table: captureStream.stream.name, eventId });
  // A new field became a column: the stream, resolved again, keeps it in the payloads written from now on.
  if (r.newColumns.length > 0) ctx.streams.invalidate(captureStream.stream.name);
}

function groupByEvent<T>(items: readonly T[], eventOf: (t: T) => number | null): Map<number | null, T[]> {
  const out = new Map<number | null, T[]>();
  for (const t of items) {
    const k = eventOf(t);
    out.set(k, [...(out.get(k) ?? []), t]);
  }
  return out;
}

/** A delivery as decide.ts weighs it against the others for its record and against the stored row. */
function candidateOf(captureStream: CaptureStream, it: Item, hasUpdatedAt: boolean, zone: string): Candidate {
  const d = it.delivery;
  const fields = captureStream.fieldsFor(d.eventId);
  return {
    seq: it.entry.seq,
    action: d.action,
    recordId: d.recordId,
    eventId: d.eventId,
    updatedMs: hasUpdatedAt ? recordTimeMs(d.record.updated_at as string | null | undefined, zone) : null,
    datetimeMs: recordTimeMs(d.datetime, zone),
    // Only a JSON body with every field a list returns (and no expansions) can be written as it is.
    complete: d.format === 'json' && captureStream.stream.expandSelected.length === 0 && isComplete(d.record, fields),
    bodySha256: it.entry.bodySha256,
  };
}

/** The rows already stored for the candidates' records: what a delivery must be newer than to be applied. */
async function storedStates(
  ctx: BatchContext,
  name: string,
  candidates: readonly Candidate[],
): Promise<Map<number, StoredState>> {
  const ids = [...new Set(candidates.map((c) => c.recordId))];
  const stored = new Map<number, StoredState>();
  for (const v of await ctx.warehouse.capture.storedVersions(name, ids)) {
    stored.set(v.id, { updatedMs: recordTimeMs(v.updatedAt, ctx.recordTimezone), deletedMs: utcMs(v.deletedAt) });
  }
  return stored;
}

/** Rows from payloads, and tombstones (written, then marked deleted by `markDeletes`). */
async function writePayloads(
  ctx: BatchContext,
  captureStream: CaptureStream,
  decisions: readonly Decision[],
  itemOf: (seq: number) => Item,
): Promise<void> {
  const written = decisions.filter((d) => d.outcome === 'payload' || d.outcome === 'tombstone');
  for (const [eventId, list] of groupByEvent(written, (d) => d.winner.eventId)) {
    const records = list.map((d) => {
      const p = itemOf(d.winner.seq).delivery;
      return d.winner.complete ? listShaped(p.record, captureStream.storedFor(eventId)) : minimalRecord(p);
    });
    await load(ctx, captureStream, eventId, records);
  }
}

/**
 * Versions the table does not take: deliveries older than the stored row (stale) or than the batch's newest of their
 * record (superseded), when they carry the record whole and its `updated_at`. The history keeps them in their place
 * (warehouse history/observations.ts), so it does not depend on the order deliveries came in. A page holds one
 * version per record (the loader keeps one row per key), so a record's versions go in layers: its oldest first.
 */
async function writeObserved(
  ctx: BatchContext,
  captureStream: CaptureStream,
  decisions: readonly Decision[],
  itemOf: (seq: number) => Item,
): Promise<void> {
  const layers: Candidate[][] = [];
  for (const d of decisions) {
    const older = [...d.losers, ...(d.outcome === 'stale' ? [d.winner] : [])].filter(
      (c) => c.complete && c.action !== 'delete' && c.updatedMs !== null,
    );
    older.forEach((c, i) => {
      layers[i] ??= [];
      layers[i].push(c);
    });
  }
  for (const layer of layers) {
    for (const [eventId, list] of groupByEvent(layer, (c) => c.eventId)) {
      const records = list.map((c) => listShaped(itemOf(c.seq).delivery.record, captureStream.storedFor(eventId)));
      await load(ctx, captureStream, eventId, records, true);
    }
  }
}

/** What re-reading found, by the winner's seq (refused, deferred) or by record id (gone). */
interface Rereads {
  /** Records the service no longer returns. */
  gone: Set<number>;
  /** Why a path was refused (404/403), by seq. */
  refused: Map<number, string>;
  /** Seqs left pending: their re-read would have waited for the credit window. */
  deferred: Set<number>;
}

/**
 * Re-reads: what the service returns now is the newest version there is. One that would wait for the credit window
 * (a reconciliation spent it) is deferred, left pending, rather than holding up every other delivery.
 */
async function rereadDecided(
  ctx: BatchContext,
  tally: Tally,
  captureStream: CaptureStream,
  decisions: readonly Decision[],
): Promise<Rereads> {
  const out: Rereads = { gone: new Set(), refused: new Map(), deferred: new Set() };
  const rereads = decisions.filter((decision) => decision.outcome === 'reread');
  for (const [eventId, list] of groupByEvent(rereads, (decision) => decision.winner.eventId)) {
    const calls = Math.ceil(list.length / IDS_PER_CALL);
    if (ctx.client.ledger.snapshot().remaining < calls * LIST_CALL_CREDITS) {
      for (const decision of list) out.deferred.add(decision.winner.seq);
      continue;
    }
    try {
      const reread = await rereadByIds(
        ctx.client,
        captureStream,
        eventId,
        list.map((decision) => decision.winner.recordId),
        ctx.signal,
      );
      tally.calls += reread.calls;
      await load(ctx, captureStream, eventId, reread.records);
      for (const id of reread.missing) out.gone.add(id);
    } catch (err) {
      // A path the account does not serve is the reconciliation's to report; the batch goes on without it.
      if (!(err instanceof NotFoundError || err instanceof ForbiddenError)) throw err;
      for (const decision of list)
        out.refused.set(decision.winner.seq, `re-read refused (${err instanceof NotFoundError ? 404 : 403})`);
    }
  }
  return out;
}

/**
 * Now on the service's clock: a delete mark is compared with record versions (`updated_at`, the service's clock), so
 * it must be on that clock too. On the daemon's own clock, behind the service's, a record found gone got a mark older
 * than the version that preceded its deletion, and the replay after a reconciliation brought it back (measured by the
 * daemon benchmark's killed burst). The local clock only before the client has seen an answer.
 */
function serviceNowMs(ctx: BatchContext): number {
  try {
    return ctx.client.serverNow().getTime();
  } catch {
    return ctx.client.now();
  }
}

/** Deletes: the record's own time; records the service no longer returns (unless already deleted), now. */
async function markDeletes(
  ctx: BatchContext,
  name: string,
  decisions: readonly Decision[],
  gone: ReadonlySet<number>,
  stored: ReadonlyMap<number, StoredState>,
): Promise<void> {
  const now = utcText(serviceNowMs(ctx), 'seconds');
  const marks = decisions
    .filter((d) => d.outcome === 'deleted' || d.outcome === 'tombstone')
    .map((d) => ({ id: d.winner.recordId, at: utcText(d.deletedAtMs ?? serviceNowMs(ctx), 'seconds') }));
  for (const id of gone) if (stored.get(id)?.deletedMs == null) marks.push({ id, at: now });
  await ctx.warehouse.capture.markDeleted(name, marks, ctx.runId);
}

/**
 * Says how each delivery was settled: deferred ones stay pending (counted, not settled), refused ones are ignored,
 * the rest applied, with their lag when they changed the warehouse; the losers of each decision are superseded.
 */
function settleDecisions(
  tally: Tally,
  name: string,
  decisions: readonly Decision[],
  itemOf: (seq: number) => Item,
  rereads: Rereads,
  nowMs: number,
): void {
  for (const d of decisions) {
    const entry = itemOf(d.winner.seq).entry;
    if (rereads.deferred.has(d.winner.seq)) {
      tally.defer(entry);
      for (const l of d.losers) tally.defer(itemOf(l.seq).entry);
      continue;
    }
    const why = rereads.refused.get(d.winner.seq);
    if (why) tally.settle(entry, 'ignored', 'refused', why);
    else {
      const outcome = d.outcome === 'reread' && rereads.gone.has(d.winner.recordId) ? 'gone' : d.outcome;
      tally.settle(entry, 'applied', outcome);
      const applied = outcome === 'payload' || outcome === 'reread' || outcome === 'deleted' || outcome === 'tombstone';
      if (applied && d.winner.datetimeMs !== null) {
        tally.lags.push({ stream: name, seconds: Math.max(0, (nowMs - d.winner.datetimeMs) / 1000) });
      }
    }
    for (const l of d.losers) tally.settle(itemOf(l.seq).entry, 'applied', 'superseded');
  }
}

/** One stream's share of a batch: decide per record, write payloads, re-read, mark deletes, then settle each. */
async function applyStream(ctx: BatchContext, tally: Tally, name: string, items: readonly Item[]): Promise<void> {
  const captureStream = await ctx.streams.get(name);
  const hasUpdatedAt = 'updated_at' in captureStream.stream.fields;
  const bySeq = new Map<number, Item>();
  const candidates = items.map((it) => {
    bySeq.set(it.entry.seq, it);
    return candidateOf(captureStream, it, hasUpdatedAt, ctx.recordTimezone);
  });
  const itemOf = (seq: number) => bySeq.get(seq)!;
  const stored = await storedStates(ctx, name, candidates);
  const decisions = decide(candidates, stored, { hasUpdatedAt, replay: ctx.replay === true, nowMs: serviceNowMs(ctx) });
  await writePayloads(ctx, captureStream, decisions, itemOf);
  const rereads = await rereadDecided(ctx, tally, captureStream, decisions);
  await markDeletes(ctx, name, decisions, rereads.gone, stored);
  await writeObserved(ctx, captureStream, decisions, itemOf);
  if (ctx.onTouched) {
    const deleted = decisions.filter((d) => d.outcome === 'deleted' || d.outcome === 'tombstone');
    for (const eventId of new Set(deleted.map((d) => d.winner.eventId))) ctx.onTouched({ table: name, eventId });
    if (rereads.gone.size > 0) for (const d of decisions) ctx.onTouched({ table: name, eventId: d.winner.eventId });
  }
  settleDecisions(tally, name, decisions, itemOf, rereads, ctx.client.now());
}

function summarize(
  items: readonly Item[],
  settlements: readonly Settlement[],
  zone: string,
  nowMs: number,
): StreamSettlement[] {
  const bySeq = new Map(items.map((i) => [i.entry.seq, i]));
  const out = new Map<string, StreamSettlement>();
  for (const s of settlements) {
    const it = bySeq.get(s.seq);
    const stream = it?.delivery.stream;
    if (!it || !stream) continue;
    const st = out.get(stream) ?? { stream, applied: 0, ignored: 0, last: null };
    if (s.status === 'applied') st.applied += 1;
    else st.ignored += 1;
    if (!st.last || it.entry.receivedAt > st.last.receivedAt) {
      const dt = recordTimeMs(it.delivery.datetime, zone);
      st.last = {
        receivedAt: it.entry.receivedAt,
        datetime: it.delivery.datetime,
        lagMs: dt !== null ? Math.max(0, nowMs - dt) : null,
      };
    }
    out.set(stream, st);
  }
  return [...out.values()];
}

/** Applies the entries (pending ones, or already applied ones when replaying) and says how each was settled. */
export async function applyBatch(ctx: BatchContext, entries: readonly JournaledDelivery[]): Promise<BatchResult> {
  const tally = new Tally();
  const duplicates = ctx.replay
    ? new Set<string>()
    : await ctx.warehouse.capture.appliedHashes(entries.map((e) => e.bodySha256));
  const byStream = new Map<string, Item[]>();
  const items: Item[] = [];
  let eventsChanged = false;
  for (const entry of entries) {
    if (entry.status === 'rejected' || entry.format === null) continue;
    const parsed = parseDelivery(entry.body, CONTENT_TYPE[entry.format]);
    if (!parsed.ok) {
      tally.settle(entry, 'ignored', 'unreadable', parsed.reason);
      continue;
    }
    const delivery = parsed.delivery;
    items.push({ entry, delivery });
    if (duplicates.has(entry.bodySha256)) {
      tally.settle(entry, 'applied', 'duplicate');
      continue;
    }
    duplicates.add(entry.bodySha256);
    if (delivery.stream === null)
      tally.settle(entry, 'ignored', 'unknown-object', `no catalogue stream declares ${delivery.object}`);
    else if (!ctx.selected.has(delivery.stream))
      tally.settle(entry, 'ignored', 'not-selected', `${delivery.stream} is not synced`);
    else if (
      delivery.object !== 'event' &&
      (await ctx.streams.get(delivery.stream)).stream.scope === 'event' &&
      delivery.eventId === null
    ) {
      tally.settle(entry, 'ignored', 'no-event', 'the record names no event');
    } else if (
      delivery.eventId !== null &&
      delivery.object !== 'event' &&
      !(await ctx.scope.covers(ctx.warehouse, delivery.eventId))
    ) {
      tally.settle(entry, 'ignored', 'out-of-scope', `event ${delivery.eventId} is outside the sync's scope`);
    } else {
      byStream.set(delivery.stream, [...(byStream.get(delivery.stream) ?? []), { entry, delivery }]);
      if (delivery.object === 'event') eventsChanged = true;
    }
  }
  for (const [name, list] of byStream) await applyStream(ctx, tally, name, list);
  return {
    settlements: tally.settlements,
    streams: summarize(items, tally.settlements, ctx.recordTimezone, ctx.client.now()),
    calls: tally.calls,
    lags: tally.lags,
    eventsChanged,
    deferred: tally.deferred,
    oldestDeferred: tally.oldestDeferred,
  };
}
