/**
 * What the stream tables hold now (`Warehouse.current`): the questions the engine asks of them to plan and scope
 * its walks. Each is answered after what is staged is merged, so the rows a run just loaded are counted. Every method
 * runs in the warehouse's one queue.
 */
import type { Db, ResultRow } from '../db/connection.js';
import type { StagedFilter } from '../load/staged.js';
import type { ScopeRef } from '../types.js';
import * as state from './state.js';

export class CurrentRows {
  constructor(
    private readonly db: Db,
    /** Merges the staged pages `filter` selects (all without one) into their tables, inside the queue. */
    private readonly mergeStaged: (filter?: StagedFilter) => Promise<void>,
  ) {}

  private afterMerge<T>(read: () => Promise<T>, filter?: StagedFilter): Promise<T> {
    return this.db.exclusive(async () => {
      await this.mergeStaged(filter);
      return read();
    });
  }

  /**
   * Whether a scope of a stream holds a live row (after merging that scope's staged pages only: other scopes'
   * pages keep waiting for their batch). A walk that starts on a scope without one need not track seen ids.
   */
  scopeHoldsRows(table: string, scope: ScopeRef): Promise<boolean> {
    return this.afterMerge(() => state.scopeHoldsRows(this.db, table, scope), { stream: table, scope: scope.key });
  }

  /** The scope's live rows and which of `ids` are among them: what a delete check compares (sync/delete-check.ts). */
  liveCount(table: string, scope: ScopeRef, ids: readonly number[]): Promise<state.LiveCount> {
    return this.afterMerge(() => state.liveCount(this.db, table, scope, ids), { stream: table, scope: scope.key });
  }

  /** Every current event (for the engine's event-scope rule). */
  events(): Promise<state.EventRow[]> {
    return this.afterMerge(() => state.currentEvents(this.db));
  }

  /** The size figures the current events carry (an estimate extrapolates over the events by them). */
  eventSizes(): Promise<state.EventSize[]> {
    return this.afterMerge(() => state.eventSizes(this.db));
  }

  /** Ids of the current rows of a stream table, ascending (parents of a parent-scoped stream). */
  ids(table: string): Promise<number[]> {
    return this.afterMerge(() => state.liveIds(this.db, table));
  }

  /** Current rows of a stream table as stored (custom-field definitions). */
  rows(table: string): Promise<ResultRow[]> {
    return this.afterMerge(() => state.currentRows(this.db, table));
  }

  /** Ids of rows changed at or after `from` (by `column`) in a scope: what a refresh through the parent re-reads. */
  changedIds(input: Parameters<typeof state.changedIds>[1]): Promise<number[]> {
    return this.afterMerge(() => state.changedIds(this.db, input));
  }
}
