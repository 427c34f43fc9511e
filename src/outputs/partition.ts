/**
 * What changes touched, collected until an output is written: per table, the events touched, or the whole table.
 * A touched partition is the warehouse's `Partition` (an event of an event-scoped table; `eventId` null for the whole
 * table: an account scope, or a parent's scope whose rows may span events), the one shape from a merge to the
 * readers: `sync --parquet-out` collects what its run wrote, the daemon's publisher what merges, deliveries and the
 * owed records say, and both write the export's selection this set makes.
 */
import type { Partition, PartitionSelection } from '../warehouse/index.js';

export type { Partition };

/** A run's progress as far as it says what was written (the engine's `page` and `item-done` events). */
interface WriteProgress {
  type: string;
  stream?: string;
  eventId?: number | null;
  rows?: number;
  deleted?: number;
}

export class TouchedPartitions {
  /** Per table, the events touched; `null` among them stands for the whole table. */
  readonly byStream = new Map<string, Set<number | null>>();

  add(p: Partition): void {
    const set = this.byStream.get(p.table) ?? new Set<number | null>();
    set.add(p.eventId);
    this.byStream.set(p.table, set);
  }

  /** These events of `table`, or all of it. */
  touch(table: string, eventIds: Iterable<number> | 'all'): void {
    if (eventIds === 'all') this.add({ table, eventId: null });
    else for (const eventId of eventIds) this.add({ table, eventId });
  }

  addAll(other: TouchedPartitions): void {
    for (const [table, ids] of other.byStream) for (const eventId of ids) this.add({ table, eventId });
  }

  /** What a run wrote: a page with rows, an item done that loaded or marked rows deleted. */
  onProgress(e: WriteProgress): void {
    const wrote =
      (e.type === 'page' && (e.rows ?? 0) > 0) ||
      (e.type === 'item-done' && ((e.rows ?? 0) > 0 || (e.deleted ?? 0) > 0));
    if (wrote && e.stream !== undefined) this.add({ table: e.stream, eventId: e.eventId ?? null });
  }

  /** Tables touched. */
  get size(): number {
    return this.byStream.size;
  }

  tables(): string[] {
    return [...this.byStream.keys()];
  }

  delete(table: string): void {
    this.byStream.delete(table);
  }

  /** Partitions to write: a table touched whole counts once. */
  count(): number {
    let n = 0;
    for (const ids of this.byStream.values()) n += ids.has(null) ? 1 : Math.max(1, ids.size);
    return n;
  }

  /** The export's selection: tables touched whole are listed without partitions (written whole). */
  selection(): { tables: string[]; partitions: PartitionSelection[] } {
    const tables = this.tables().sort();
    const partitions: PartitionSelection[] = [];
    for (const [table, ids] of this.byStream) {
      if (ids.has(null)) continue;
      partitions.push({ table, eventIds: [...ids].filter((id) => id !== null).sort((a, b) => a - b) });
    }
    return { tables, partitions };
  }
}
