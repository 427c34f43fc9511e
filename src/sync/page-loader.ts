import type { NormalizedRow, ResolvedStream, ScalarType } from '../../connectors/types.js';
import { createNormalizer, type Normalizer } from '../../schemas/normalize.js';
import type { CursorState, LoadResult, ScopeRef, Warehouse } from '../warehouse/index.js';

/**
 * Normalizes a page and hands it to the warehouse. DuckDB runs one transaction at a time per connection, and
 * walks run concurrently, so every write goes through one queue: pages load in arrival order, never interleaved.
 */
export class PageLoader {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly normalizers = new Map<string, Normalizer>();
  /** Columns added by schema evolution during this run, per stream, so each is added once. */
  private readonly addedColumns = new Map<string, Set<string>>();

  constructor(
    readonly warehouse: Warehouse,
    readonly runId: string,
  ) {}

  /** Runs `work` after every write queued before it; a failure does not block later writes. */
  serialize<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private normalizer(stream: ResolvedStream): Normalizer {
    let n = this.normalizers.get(stream.name);
    if (!n) {
      n = createNormalizer(stream);
      this.normalizers.set(stream.name, n);
    }
    return n;
  }

  async load(input: {
    stream: ResolvedStream;
    scope: ScopeRef;
    records: readonly unknown[];
    /** Saved in the page's transaction; absent for walks that do not checkpoint (parent refreshes). */
    cursor?: CursorState;
    seenWalkId?: string;
    idsOnly?: boolean;
  }): Promise<LoadResult & { seenIds: number }> {
    const { stream, scope, records } = input;
    const rows: NormalizedRow[] = [];
    const rejected: { raw: unknown; reason: string }[] = [];
    const seenIds: number[] = [];
    let newColumns: Record<string, ScalarType> | undefined;

    if (input.idsOnly) {
      for (const raw of records) {
        const id = Number((raw as { id?: unknown } | null)?.id);
        if (Number.isSafeInteger(id) && id > 0) seenIds.push(id);
        else rejected.push({ raw, reason: 'id sweep: record without a positive integer id' });
      }
    } else {
      const normalizer = this.normalizer(stream);
      const known = this.addedColumns.get(stream.name) ?? new Set<string>();
      this.addedColumns.set(stream.name, known);
      for (const raw of records) {
        const result = normalizer.normalize(raw);
        if (!result.ok) {
          rejected.push({ raw, reason: result.reason });
          continue;
        }
        rows.push(result.row);
        if (input.seenWalkId && typeof result.row.id === 'number') seenIds.push(result.row.id);
        for (const [name, type] of Object.entries(result.extras)) {
          if (known.has(name)) continue;
          known.add(name);
          newColumns ??= {};
          newColumns[name] = type;
        }
      }
    }

    const result = await this.serialize(() =>
      this.warehouse.loadPage({
        stream,
        scope,
        runId: this.runId,
        rows,
        newColumns,
        rejected,
        seen: input.seenWalkId ? { walkId: input.seenWalkId, ids: seenIds } : undefined,
        upsert: !input.idsOnly,
        cursor: input.cursor,
      }),
    );
    return { ...result, seenIds: seenIds.length };
  }
}
