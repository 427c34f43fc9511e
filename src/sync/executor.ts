/**
 * The executor: runs planned work items under the budget with bounded concurrency, and owns the run's policies:
 * when to stop (budget, max wait, stop request, the service gone away), what a failure means (a refused path is
 * recorded as unavailable, not a failure; a transport failure counts toward "unreachable"), and what the user is
 * told. The planner decides what to do; the walks do one item; this decides what happens around them.
 */
import pLimit from 'p-limit';
import type { ResolvedStream } from '../../connectors/types.js';
import { type ApiClient, ForbiddenError, NotFoundError } from '../api/index.js';
import type { UnavailableStream, Warehouse } from '../warehouse/index.js';
import { classify, errorText, groupFailures, shortError } from './failures.js';
import type { PageLoader } from './page-loader.js';
import { eventIdOf } from './page-loop.js';
import { byPriority } from './plan.js';
import { runRefresh } from './refresh.js';
import { runWalk } from './stream-kinds.js';
import type { ProgressEvent, StreamStats, UnavailableReport } from './types.js';
import type { CountedItem, WorkItem } from './work-item.js';

/** After this many 403 answers for a stream with no success, it is recorded unavailable (a 404 is one answer). */
const FORBIDDEN_BEFORE_UNAVAILABLE = 2;
/** Items failing in a row on transport errors (each after its retries) before the run stops as unreachable. */
const UNREACHABLE_AFTER = 3;

interface ExecutorOptions {
  client: ApiClient;
  warehouse: Warehouse;
  loader: PageLoader | null;
  runId: string;
  concurrency: number;
  signal?: AbortSignal | undefined;
  onProgress?: ((event: ProgressEvent) => void) | undefined;
  /** 'dry': list items without a call; 'count': walk one page per item (or what `countPages` says). */
  execution: 'run' | 'dry' | 'count';
  /** With 'count': the pages an item's walk stops after (undefined: the whole walk). Default 1. */
  countPages?: ((item: WorkItem) => number | undefined) | undefined;
  /** With 'count': items only listed, as in a dry run (an estimate counts a sample of the events). */
  listOnly?: ((item: WorkItem) => boolean) | undefined;
  /** Told of every item listed or walked; with 'count', of what its walk learned (null: only listed). */
  onItem?: ((item: WorkItem, counted: CountedItem | null) => void) | undefined;
  /** Streams recorded unavailable by earlier runs and not yet due for a retry: skipped without a call. */
  knownUnavailable: ReadonlyMap<string, UnavailableStream>;
  /** Merge each completed item's pages at once (SyncOptions.mergeEachItem). */
  mergeEachItem?: boolean | undefined;
  /** After every walked item: the credits and stream figures so far (a killed run's row keeps them). */
  onItemSettled?:
    | ((credits: Record<string, number>, streams: Record<string, StreamStats>) => Promise<void>)
    | undefined;
}

interface Refused {
  item: WorkItem;
  status: number;
  message: string;
}

function emptyStats(): StreamStats {
  return { inserted: 0, updated: 0, deleted: 0, rejected: 0, pages: 0 };
}

/** What one walk's pages tell a counting plan: the first answer's `_meta`, and the pages this walk read. */
class PageCounter {
  private first: Pick<CountedItem, 'totalCount' | 'pageCount' | 'perPage'> | null = null;
  private read = 0;

  see(event: ProgressEvent): void {
    if (event.type !== 'page') return;
    this.read += 1;
    this.first ??= { totalCount: event.totalCount, pageCount: event.pageCount, perPage: event.perPage };
  }

  counted(complete: boolean): CountedItem | null {
    return this.first && { ...this.first, pagesRead: this.read, complete };
  }
}

export class Executor {
  readonly counts = { total: 0, done: 0, skipped: 0, failed: 0, pending: 0 };
  readonly stats: Record<string, StreamStats> = {};
  readonly warnings: string[] = [];
  stopReason: string | null = null;
  fatal: unknown = null;
  /** Set when the run stopped because the service went away: the run is then resumable. */
  unreachable = false;
  /** True once a failure other than the service going away happened (the run is then not resumed as a whole). */
  hardFailure = false;
  private readonly failures: { stream: string; scope: string; message: string }[] = [];
  private readonly answered = new Set<string>();
  private readonly refused = new Map<string, Refused[]>();
  private readonly unavailable = new Map<string, UnavailableReport>();
  private transportRun = 0;
  /** The run's page loader (null for a dry run): what it kept out of the tables is reported with the run. */
  readonly loader: PageLoader | null;

  constructor(private readonly o: ExecutorOptions) {
    this.loader = o.loader;
    for (const u of o.knownUnavailable.values()) {
      this.unavailable.set(u.stream, {
        stream: u.stream,
        path: u.path,
        status: u.status,
        detail: u.detail,
        since: u.firstSeenAt,
        skipped: 0,
        recorded: 'earlier',
      });
    }
  }

  /** True when no more items should start. */
  get stopping(): boolean {
    return this.stopReason !== null || this.fatal !== null || this.o.signal?.aborted === true;
  }

  /**
   * Runs items, highest priority first. The first item of each stream not yet heard from this run goes alone
   * (per stream): if its path is not served, the other scopes learn it without paying 10 credits each.
   */
  async execute(items: readonly WorkItem[], spareOnly = false): Promise<void> {
    const sorted = [...items].sort(byPriority);
    const probes: WorkItem[] = [];
    const rest: WorkItem[] = [];
    const probed = new Set<string>();
    for (const item of sorted) {
      // An item only listed (not in an estimate's sample) makes no call: it cannot tell whether the path is served.
      const first = !this.o.listOnly?.(item) && !this.answered.has(item.stream.name) && !probed.has(item.stream.name);
      if (first) probed.add(item.stream.name);
      (first ? probes : rest).push(item);
    }
    this.counts.total += items.length;
    if (items.length > 0) {
      const credits = items.reduce((sum, item) => sum + item.price, 0);
      this.o.onProgress?.({ type: 'queued', items: items.length, credits });
    }
    const limit = pLimit(Math.max(1, this.o.concurrency));
    for (const batch of [probes, rest]) {
      await Promise.all(batch.map((item) => limit(() => this.runItem(item, spareOnly))));
    }
  }

  statsOf(stream: string): StreamStats {
    const s = this.stats[stream] ?? emptyStats();
    this.stats[stream] = s;
    return s;
  }

  private async runItem(item: WorkItem, spareOnly: boolean): Promise<void> {
    const name = item.stream.name;
    if (this.stopping) {
      this.counts.pending += 1;
      return;
    }
    const unavailable = this.unavailable.get(name);
    if (unavailable && !this.answered.has(name)) {
      unavailable.skipped += 1;
      this.skipped(item);
      return;
    }
    // Sweeps in 'auto' mode use spare credits only: never wait for a window for them.
    if (spareOnly && this.o.client.ledger.snapshot().remaining < item.price) {
      this.skipped(item);
      return;
    }
    if (this.o.execution === 'dry' || this.o.listOnly?.(item)) {
      this.o.onItem?.(item, null);
      this.counts.done += 1;
      return;
    }
    await this.walkItem(item);
  }

  private skipped(item: WorkItem): void {
    this.counts.skipped += 1;
    this.o.onProgress?.({ type: 'item-skipped', stream: item.stream.name, scope: item.cursorKey, price: item.price });
  }

  private async walkItem(item: WorkItem): Promise<void> {
    const name = item.stream.name;
    const stats = this.statsOf(name);
    const counter = new PageCounter();
    this.o.onProgress?.({
      type: 'item-start',
      stream: name,
      scope: item.cursorKey,
      mode: item.mode,
      price: item.price,
    });
    try {
      const walk = item.mode === 'refresh' ? runRefresh : runWalk;
      const outcome = await walk(item, {
        client: this.o.client,
        loader: this.o.loader!,
        stats,
        signal: this.o.signal,
        onProgress: (event) => {
          counter.see(event);
          this.o.onProgress?.(event);
        },
        now: () => this.o.client.serverNow(),
        pageLimit: this.o.execution === 'count' ? (this.o.countPages ? this.o.countPages(item) : 1) : undefined,
      });
      this.o.onItem?.(item, counter.counted(outcome.complete));
      this.transportRun = 0;
      await this.heardFrom(item.stream);
      if (outcome.complete) {
        // Its pages are committed with their cursor: a merge that fails here (memory, disk) fails the item, and the
        // pages stay staged for the next merge.
        const merged = this.o.mergeEachItem === true;
        if (merged) await this.o.warehouse.mergeScope(name, item.scope.key);
        this.counts.done += 1;
        const eventId = eventIdOf(item);
        this.o.onProgress?.({ type: 'item-done', stream: name, scope: item.cursorKey, eventId, ...outcome, merged });
      } else this.counts.pending += 1;
    } catch (err) {
      await this.failed(item, err);
    }
    await this.settled();
  }

  private async settled(): Promise<void> {
    if (!this.o.onItemSettled) return;
    const c = this.o.client.stats().credits;
    const credits = { list: c.list, other: c.other, token: c.token, total: c.list + c.other + c.token };
    await this.o.onItemSettled(credits, this.stats).catch(() => undefined);
  }

  /** Whether the stream is recorded (now or earlier) as not served. */
  isUnavailable(stream: string): boolean {
    return this.unavailable.has(stream) && !this.answered.has(stream);
  }

  /** The stream answered: an earlier "unavailable" no longer holds. */
  private async heardFrom(stream: ResolvedStream): Promise<void> {
    if (this.answered.has(stream.name)) return;
    this.answered.add(stream.name);
    // Recorded by an earlier run and retried now (retry hours passed, or a new path): it answers, so clear it.
    this.unavailable.delete(stream.name);
    await this.o.warehouse.unavailable.clear(stream.name);
    // Scopes refused before the stream answered elsewhere are failures of their own after all.
    for (const r of this.refused.get(stream.name) ?? []) this.recordFailure(r.item, r.message);
    this.refused.delete(stream.name);
  }

  private async failed(item: WorkItem, err: unknown): Promise<void> {
    switch (classify(err, this.o.signal)) {
      case 'budget':
        this.stopReason ??= errorText(err);
        this.counts.pending += 1;
        return;
      case 'credentials':
        this.fatal ??= err;
        this.counts.failed += 1;
        return;
      case 'stopped':
        this.counts.pending += 1;
        return;
      case 'refused':
        await this.refusedBy(item, err);
        return;
      case 'transport':
        this.transportRun += 1;
        this.recordFailure(item, errorText(err), false);
        if (this.transportRun >= UNREACHABLE_AFTER && !this.unreachable) {
          this.unreachable = true;
          this.stopReason ??= `service unreachable: ${shortError(errorText(err))} (${this.transportRun} items in a row)`;
        }
        return;
      default:
        this.transportRun = 0;
        this.recordFailure(item, errorText(err));
    }
  }

  private recordFailure(item: WorkItem, message: string, hard = true): void {
    const name = item.stream.name;
    this.counts.failed += 1;
    if (hard) this.hardFailure = true;
    const short = shortError(message);
    this.failures.push({ stream: name, scope: item.cursorKey, message: short });
    const stats = this.statsOf(name);
    // Kept short in the run's row: three examples per stream say what `status` needs to say.
    if ((stats.errors?.length ?? 0) < 3) stats.errors = [...(stats.errors ?? []), `${item.cursorKey}: ${short}`];
    this.o.onProgress?.({ type: 'item-failed', stream: name, scope: item.cursorKey, error: `${name}: ${short}` });
  }

  /** A 404 on the path (or repeated 403s) before any success: the stream is not served here; record it. */
  private async refusedBy(item: WorkItem, err: unknown): Promise<void> {
    const name = item.stream.name;
    const status = err instanceof NotFoundError ? 404 : err instanceof ForbiddenError ? 403 : 0;
    const message = errorText(err);
    if (this.answered.has(name)) {
      this.recordFailure(item, message);
      return;
    }
    const list = this.refused.get(name) ?? [];
    list.push({ item, status, message });
    this.refused.set(name, list);
    this.skipped(item);
    const forbidden = list.filter((r) => r.status === 403).length;
    if (status === 404 || forbidden >= FORBIDDEN_BEFORE_UNAVAILABLE) await this.markUnavailable(item.stream, status);
  }

  private async markUnavailable(stream: ResolvedStream, status: number): Promise<void> {
    if (this.unavailable.has(stream.name)) return;
    const detail = status === 404 ? `${stream.path} answered 404` : `${stream.path} answered 403 on every scope tried`;
    await this.o.warehouse.unavailable.mark({
      stream: stream.name,
      path: stream.path,
      status,
      detail,
      runId: this.o.runId,
    });
    this.unavailable.set(stream.name, {
      stream: stream.name,
      path: stream.path,
      status,
      detail,
      since: null,
      skipped: 0,
      recorded: 'now',
      verified: stream.verified,
    });
  }

  /** Streams found or known unavailable, with what fixes each. */
  unavailableStreams(): UnavailableReport[] {
    return [...this.unavailable.values()].sort((a, b) => a.stream.localeCompare(b.stream));
  }

  /** Refusals of streams that never became unavailable (a 403 once, then nothing else tried) are failures. */
  settle(): void {
    for (const [name, list] of this.refused) {
      if (this.unavailable.has(name)) continue;
      for (const r of list) {
        this.counts.skipped -= 1;
        this.recordFailure(r.item, r.message);
      }
    }
    this.refused.clear();
  }

  /** Failures grouped per stream and cause. */
  errorLines(): string[] {
    return groupFailures(this.failures);
  }
}
