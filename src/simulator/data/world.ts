import type { CustomDef, Rec } from '../core/record.js';
import { formatTimestamp, type RecordZone } from '../core/time.js';
import { STREAMS } from '../schema/streams.js';
import { type BaseSource, Partition, storedSource } from '../store/partition.js';
import { Table } from '../store/table.js';
import type { RegistrantModel } from './gen-registrants.js';
import type { AccountPlan, EventPlan } from './sizes.js';
import type { Timeline } from './timeline.js';

/** Where each stream's ids begin. Different digit counts per stream catch clients that compare ids as text. */
const ID_START: Record<string, number> = {
  events: 101,
  registrants: 990,
  contacts: 5001,
  sessions: 301,
  speakers: 401,
  sponsors: 501,
  transactions: 70_001,
  registrant_line_items: 800_001,
};

export interface AccountInfo {
  index: number;
  /** `account_id` on contacts. */
  accountId: number;
  plan: AccountPlan;
  created: number;
  contactCount: number;
  contactIdStart: number;
  events: EventInfo[];
}

export interface PriceItem {
  id: number;
  name: string;
  /** Price in cents. */
  cents: number;
}

export interface EventInfo {
  id: number;
  account: number;
  index: number;
  plan: EventPlan;
  timezone: string;
  currency: string;
  taxRate: number;
  t: Timeline;
  sessionIds: number[];
  sessionCents: Map<number, number>;
  regTypes: PriceItem[];
  packages: PriceItem[];
  discountCodes: string[];
  questions: CustomDef[];
  sponsorIds: number[];
  groupIdStart: number;
  registrantIdStart: number;
}

/** Everything the simulator serves: tables of partitions plus the facts generators and operations share. */
export class World {
  readonly tables = new Map<string, Table>();
  readonly accounts: AccountInfo[] = [];
  readonly events = new Map<number, EventInfo>();
  /** speaker id -> session id -> association timestamps. */
  readonly speakerSessions = new Map<number, Map<number, { created_at: string; updated_at: string }>>();
  /** Registrant generators per event id (derived streams and inserts use them). */
  readonly models = new Map<number, RegistrantModel>();

  constructor(
    readonly seed: number,
    readonly zone: RecordZone,
    /** Epoch seconds: every base timestamp lies before it. */
    readonly anchor: number,
  ) {
    for (const s of STREAMS) {
      const table = new Table(s);
      table.nextId = ID_START[s.name] ?? 1 + STREAMS.indexOf(s) * 1000;
      this.tables.set(s.name, table);
    }
  }

  table(name: string): Table {
    const t = this.tables.get(name);
    if (!t) throw new Error(`unknown stream: ${name}`);
    return t;
  }

  /** An epoch instant as record text in the record zone. */
  ts(epochSeconds: number): string {
    return formatTimestamp(this.zone.wall(epochSeconds));
  }

  /** Adds a partition of stored records; `build(id, i)` makes record i, whose id is given. */
  addStored(stream: string, account: number, scopeId: number, count: number, build: (id: number, i: number) => Rec) {
    const table = this.table(stream);
    const idStart = table.nextId;
    const records: Rec[] = [];
    for (let i = 0; i < count; i++) records.push(build(idStart + i, i));
    const partition = new Partition(table.spec, account, scopeId, storedSource(idStart, records));
    table.add(partition);
    return partition;
  }

  /** Adds a partition whose records are generated on demand. */
  addLazy(stream: string, account: number, scopeId: number, make: (idStart: number) => BaseSource): Partition {
    const table = this.table(stream);
    const partition = new Partition(table.spec, account, scopeId, make(table.nextId));
    table.add(partition);
    return partition;
  }

  /** The account owning an event, or undefined for an unknown id. */
  eventAccount(eventId: number): number | undefined {
    return this.events.get(eventId)?.account;
  }
}
