import type { StreamSpec } from '../schema/streams.js';
import type { Partition } from './partition.js';

/**
 * All partitions of one stream across accounts, with id lookup. Ids are unique per stream across accounts: base
 * ranges are allocated one partition after another, inserts take `nextId`.
 */
export class Table {
  readonly partitions: Partition[] = [];
  private readonly byScope = new Map<number, Partition>();
  private readonly insertedOwner = new Map<number, Partition>();
  nextId = 1;

  constructor(readonly spec: StreamSpec) {}

  add(partition: Partition): void {
    this.partitions.push(partition);
    this.byScope.set(this.scopeKey(partition.account, partition.scopeId), partition);
    const end = partition.base.idStart + partition.base.count;
    if (end > this.nextId) this.nextId = end;
  }

  private scopeKey(account: number, scopeId: number): number {
    return this.spec.scope === 'account' ? account : scopeId;
  }

  /** The partition of an account (account scope) or of an event / data list id. */
  scope(accountOrScopeId: number): Partition | undefined {
    return this.byScope.get(accountOrScopeId);
  }

  accountPartitions(account: number): Partition[] {
    return this.partitions.filter((p) => p.account === account);
  }

  allocateId(partition: Partition): number {
    const id = this.nextId++;
    this.insertedOwner.set(id, partition);
    return id;
  }

  /** The partition an id belongs (or belonged) to, whichever account owns it. */
  ownerOf(id: number): Partition | undefined {
    const inserted = this.insertedOwner.get(id);
    if (inserted) return inserted;
    // Base ranges are contiguous and partitions were added in id order: binary search them.
    let lo = 0;
    let hi = this.partitions.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const p = this.partitions[mid]!;
      if (id < p.base.idStart) hi = mid - 1;
      else if (id >= p.base.idStart + p.base.count) lo = mid + 1;
      else return p;
    }
    return undefined;
  }
}
