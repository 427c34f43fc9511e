/**
 * Which deliveries the sync covers: the engine's one event-scope rule (event-scope.ts) over the stored events. Without
 * filters every event is in scope, known or not yet (a new event's registrants may arrive before the event itself).
 */
import type { Warehouse } from '../../warehouse/index.js';
import { type EventFilters, eventsInScope, hasEventFilters } from '../event-scope.js';

export class EventScope {
  private ids: Set<number> | null = null;
  private stale = true;

  constructor(private readonly filters: EventFilters) {}

  /** Re-read the stored events before the next question (after an event changed, or a reconciliation). */
  invalidate(): void {
    this.stale = true;
  }

  async covers(warehouse: Warehouse, eventId: number): Promise<boolean> {
    if (!hasEventFilters(this.filters)) return true;
    if (this.stale || this.ids === null) {
      this.ids = new Set(eventsInScope(await warehouse.current.events(), this.filters).map((e) => e.id));
      this.stale = false;
    }
    return this.ids.has(eventId);
  }
}
