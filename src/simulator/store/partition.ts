/**
 * The simulator's store folder: the records of each scope, seeded lazily and changed in place, as tables a list
 * reads; this file is one scope's partition.
 */
import type { Rec } from '../core/record.js';
import { parseTimestamp } from '../core/time.js';
import type { StreamSpec } from '../schema/streams.js';

/**
 * The records a scope starts with. Ids are contiguous (`idStart + i`), so a base row needs no storage: large
 * streams generate record i on demand from seed and index, small ones return a stored array element.
 */
export interface BaseSource {
  readonly count: number;
  readonly idStart: number;
  /** The full record at index i. Lazily generated records are fresh objects; stored ones are shared (read-only). */
  record(i: number): Rec;
  /**
   * Wall seconds of `created_at` / `updated_at` of base row i without building the record (keeps `updated_at`
   * window scans cheap on million-row streams). Optional: without it the record's text is parsed.
   */
  time?(i: number, field: string): number | null;
}

export function storedSource(idStart: number, records: Rec[]): BaseSource {
  return { count: records.length, idStart, record: (i) => records[i]! };
}

/**
 * One scope of one stream (an account, an event, or a data list): the base rows plus an overlay of changes.
 * Positions 0..count-1 are base rows, then inserted rows in insertion order. Ids grow with position (inserts always
 * take ids above every existing id), so a keyset `id > N` is a binary search and lists never need re-sorting by id.
 */
export class Partition {
  private readonly overlay = new Map<number, Rec>();
  private readonly deleted = new Set<number>();
  private readonly inserted: Rec[] = [];
  private readonly deletedIdList: number[] = [];
  private readonly timeColumns = new Map<string, Float64Array>();
  /** Bumped on every change; caches derived from this partition compare it. */
  version = 0;

  constructor(
    readonly spec: StreamSpec,
    /** Index of the owning account. */
    readonly account: number,
    /** Event id, data list id, or 0 for account scope. */
    readonly scopeId: number,
    readonly base: BaseSource,
  ) {}

  get size(): number {
    return this.base.count + this.inserted.length;
  }

  get liveCount(): number {
    return this.size - this.deleted.size;
  }

  isLive(pos: number): boolean {
    return this.deleted.size === 0 || !this.deleted.has(pos);
  }

  idAt(pos: number): number {
    if (pos < this.base.count) return this.base.idStart + pos;
    return this.inserted[pos - this.base.count]!.id as number;
  }

  record(pos: number): Rec {
    const changed = this.overlay.get(pos);
    if (changed) return changed;
    if (pos < this.base.count) return this.base.record(pos);
    return this.inserted[pos - this.base.count]!;
  }

  /**
   * Wall seconds of a timestamp field at a position. Untouched base rows read a column computed once per field (NaN
   * for null), so an `updated_at` window over a 30k-row scope is a pass over a Float64Array.
   */
  timeAt(pos: number, field: string): number | null {
    const b = this.base;
    if (pos < b.count && b.time && (this.overlay.size === 0 || !this.overlay.has(pos))) {
      let column = this.timeColumns.get(field);
      if (!column) {
        column = new Float64Array(b.count);
        for (let i = 0; i < b.count; i++) column[i] = b.time(i, field) ?? Number.NaN;
        this.timeColumns.set(field, column);
      }
      const v = column[pos]!;
      return Number.isNaN(v) ? null : v;
    }
    const value = this.record(pos)[field];
    return typeof value === 'string' ? parseTimestamp(value) : null;
  }

  /** First position whose id is >= id (size when none). */
  lowerBound(id: number): number {
    const b = this.base;
    if (id <= b.idStart) return 0;
    if (id < b.idStart + b.count) return id - b.idStart;
    let lo = 0;
    let hi = this.inserted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.inserted[mid]!.id as number) < id) lo = mid + 1;
      else hi = mid;
    }
    return b.count + lo;
  }

  /** Position of a live record with this id, or -1. */
  find(id: number): number {
    const pos = this.lowerBound(id);
    if (pos >= this.size || this.idAt(pos) !== id || this.deleted.has(pos)) return -1;
    return pos;
  }

  /** Whether the id was ever in this partition (deleted ones included): decides 404 versus 403. */
  owns(id: number): boolean {
    const pos = this.lowerBound(id);
    return pos < this.size && this.idAt(pos) === id;
  }

  update(pos: number, rec: Rec): void {
    this.overlay.set(pos, rec);
    this.version++;
  }

  insert(rec: Rec): number {
    this.inserted.push(rec);
    this.version++;
    return this.size - 1;
  }

  remove(pos: number): void {
    if (this.deleted.has(pos)) return;
    if (this.spec.hasId) this.deletedIdList.push(this.idAt(pos));
    this.deleted.add(pos);
    this.overlay.delete(pos);
    this.version++;
  }

  deletedIds(): number[] {
    return [...this.deletedIdList];
  }

  /** Live positions in id order. */
  *positions(from = 0, to = this.size): Generator<number> {
    for (let pos = from; pos < to; pos++) if (!this.deleted.has(pos)) yield pos;
  }
}
