import { hash4, Rng, tag, unit } from '../core/random.js';
import type { Json, Rec } from '../core/record.js';
import type { SimClock } from '../core/time.js';
import { person } from '../data/people.js';
import type { World } from '../data/world.js';
import { STREAM_BY_NAME } from '../schema/streams.js';
import type { Partition } from '../store/partition.js';
import type { MutationSummary } from '../types.js';
import type { Initiator } from '../webhooks/types.js';
import { type ChangeSink, NO_CHANGES } from './changes.js';
import { type Found, findAny, updateRecord } from './lookup.js';

/**
 * Changes to the data while serving: inserts (ids above every existing id), updates (a field changes and
 * `updated_at` moves to the simulated now), deletes (the record vanishes; its id is reported by truth()), and audit
 * rows appended whenever a registrant's `session_ids` change. Streams without `updated_at` change by insert and
 * delete only; events are only updated (never inserted or deleted, which would orphan their scopes). Every change is
 * reported to the change sink (webhooks). Webhooks and groups created through the management API are left alone:
 * random changes of the service's other users must not rewire what a test or benchmark configured.
 */

/** Default share of random changes per stream: mostly registrants, contacts, transactions and sessions. */
const WEIGHTS: Record<string, number> = {
  registrants: 35,
  contacts: 14,
  transactions: 12,
  sessions: 8,
  registrant_line_items: 5,
  speakers: 3,
  session_attendance: 3,
  session_scans: 3,
  sponsors: 2,
  discount_codes: 2,
  events: 2,
  packages: 1,
  registrant_types: 1,
  webhooks: 1,
  session_waitlists: 1,
  sponsor_attendance: 1,
  registrant_line_item_audits: 1,
  registrant_groups: 0.5,
  webhook_groups: 0.5,
  cfs_contacts: 0.5,
  cfs_submissions: 0.5,
  cfs_reviews: 0.5,
  tracks: 0.3,
  session_locations: 0.3,
  invitation_lists: 0.3,
  pages: 0.3,
  data_list_items: 0.3,
  event_websites: 0.1,
  event_badges: 0.1,
  event_folders: 0.1,
};

/** Definition streams change only when asked for by name (a new or removed custom field reshapes records). */
const DEFINITIONS = new Set(['event_questions', 'contact_fields', 'session_fields', 'sponsor_fields', 'event_fields']);
const NEVER_DELETED = new Set(['events', 'data_lists']);

const TEXT_FIELDS = ['notes', 'description', 'job_title', 'company', 'comments', 'title', 'name', 'bio'];
const STATUS_MOVES: Record<string, string[]> = {
  confirmed: ['cancelled', 'attended'],
  pending: ['approved', 'denied'],
  approved: ['confirmed', 'cancelled'],
  denied: ['pending'],
  cancelled: ['confirmed'],
  attended: ['no_show'],
  no_show: ['attended'],
};

type Op = 'insert' | 'update' | 'delete';

export interface MutateOptions {
  account?: number;
  streams?: string[];
  /** Who the changes are made by, as webhooks see it. Default: see `initiator()`. */
  initiatedBy?: Initiator;
}

export class Mutator {
  private calls = 0;
  private changeCount = 0;
  /** `<stream>:<id>` of the webhooks and webhook groups created through the management API. */
  private readonly managed = new Set<string>();

  constructor(
    private readonly world: World,
    private readonly clock: SimClock,
    private readonly changes: ChangeSink = NO_CHANGES,
  ) {}

  /**
   * Who made a random change: new registrants register themselves on the public site (`public_user`), and a
   * registrant update is theirs half of the time; everything else is an administrator's (`admin_user`). Drawn from
   * a hash of its own, so the mutations themselves stay what they were before webhooks existed.
   */
  private initiator(stream: string, op: Op, fixed: Initiator | undefined): Initiator {
    if (fixed) return fixed;
    if (stream !== 'registrants' || op === 'delete') return 'admin_user';
    if (op === 'insert') return 'public_user';
    return unit(this.world.seed, tag('initiator'), this.changeCount) < 0.5 ? 'public_user' : 'admin_user';
  }

  /** Keeps random mutations off a record created through the API. */
  manage(stream: string, id: number): void {
    this.managed.add(`${stream}:${id}`);
  }

  private report(stream: string, op: Op, part: Partition, rec: Rec, by: Initiator): void {
    this.changeCount++;
    this.changes.record({ stream, action: op, part, rec, initiatedBy: by });
  }

  private now(): string {
    return this.world.ts(this.clock.nowMs() / 1000);
  }

  mutate(n: number, opts: MutateOptions = {}): MutationSummary {
    const account = opts.account ?? 0;
    if (!this.world.accounts[account]) throw new RangeError(`no account ${account}`);
    const summary: MutationSummary = { inserted: {}, updated: {}, deleted: {} };
    const names = opts.streams && opts.streams.length > 0 ? opts.streams : Object.keys(WEIGHTS);
    for (const name of names) if (!STREAM_BY_NAME.has(name)) throw new RangeError(`unknown stream: ${name}`);
    const weights = names.map((s) => WEIGHTS[s] ?? 1);
    const r = new Rng(hash4(this.world.seed, tag('mutations'), this.calls++, account));
    let done = 0;
    for (let attempt = 0; done < n && attempt < n * 20 + 20; attempt++) {
      const stream = r.weighted(names, weights);
      if (this.applyOne(stream, account, r, summary, opts.initiatedBy)) done++;
    }
    return summary;
  }

  private chooseOp(stream: string, r: Rng): Op {
    if (stream === 'events') return 'update';
    if (stream === 'registration_audit') return 'update'; // an audit row comes from a registrant's session change
    if (DEFINITIONS.has(stream)) return r.chance(0.6) ? 'insert' : 'delete';
    const spec = STREAM_BY_NAME.get(stream)!;
    if (spec.updatable) return r.weighted<Op>(['update', 'insert', 'delete'], [65, 25, 10]);
    return r.chance(0.65) ? 'insert' : 'delete';
  }

  private choosePartition(stream: string, account: number, r: Rng): Partition | undefined {
    const parts = this.world
      .table(stream)
      .accountPartitions(account)
      .filter((p) => p.liveCount > 0);
    if (parts.length === 0) return undefined;
    return r.weighted(
      parts,
      parts.map((p) => Math.sqrt(p.liveCount)),
    );
  }

  private randomLive(part: Partition, r: Rng): number {
    for (let i = 0; i < 50; i++) {
      const pos = r.int(0, part.size - 1);
      if (part.isLive(pos)) return pos;
    }
    for (const pos of part.positions()) return pos;
    return -1;
  }

  private applyOne(
    stream: string,
    account: number,
    r: Rng,
    summary: MutationSummary,
    initiatedBy: Initiator | undefined,
  ): boolean {
    const target = stream === 'registration_audit' ? 'registrants' : stream;
    const part = this.choosePartition(target, account, r);
    if (!part) return false;
    const pos = this.randomLive(part, r);
    if (pos < 0) return false;
    const found: Found = { part, pos, rec: part.record(pos) };
    if (this.managed.size > 0 && this.managed.has(`${stream}:${String(found.rec.id)}`)) return false;
    const op = this.chooseOp(stream, r);
    const by = this.initiator(target, stream === 'registration_audit' ? 'update' : op, initiatedBy);
    const count = (kind: keyof MutationSummary, name: string) => {
      summary[kind][name] = (summary[kind][name] ?? 0) + 1;
    };
    if (stream === 'registration_audit') {
      this.changeSessions(found, r, by);
      count('updated', 'registrants');
      count('inserted', 'registration_audit');
      return true;
    }
    if (op === 'delete') {
      if (NEVER_DELETED.has(stream)) return false;
      const last = found.rec;
      part.remove(pos);
      this.report(stream, 'delete', part, last, by);
      count('deleted', stream);
      return true;
    }
    if (op === 'insert') {
      this.insertLike(found, r, by);
      count('inserted', stream);
      if (stream === 'registrants') count('inserted', 'registration_audit');
      return true;
    }
    if (stream === 'registrants') {
      const audit = this.updateRegistrant(found, r, by);
      count('updated', stream);
      if (audit) count('inserted', 'registration_audit');
      return true;
    }
    this.updateGeneric(found, r);
    this.report(stream, 'update', part, found.rec, by);
    count('updated', stream);
    return true;
  }

  /** Appends an audit row describing a registrant's current session selection. */
  appendAudit(
    registrant: Rec,
    type: 'session_ids' | 'session_attendance' = 'session_ids',
    by: Initiator = 'admin_user',
  ): void {
    const part = this.world.table('registration_audit').scope(registrant.event_id as number);
    if (!part) return;
    const row: Rec = {
      registrant_id: registrant.id!,
      group_id: registrant.group_id ?? null,
      full_name: `${String(registrant.first_name)} ${String(registrant.last_name)}`,
      email: registrant.email ?? '',
      type,
      session_ids: ((registrant.session_ids as number[] | null) ?? []).join(','),
      updated_at: this.now(),
    };
    part.insert(row);
    this.report('registration_audit', 'insert', part, row, by);
  }

  private changeSessions(found: Found, r: Rng, by: Initiator): void {
    const event = this.world.events.get(found.part.scopeId);
    const all = event ? event.sessionIds.filter((id) => findAny(this.world, 'sessions', id)) : [];
    const current = (found.rec.session_ids as number[] | null) ?? [];
    let next = r.sample(all, r.int(0, Math.min(4, all.length)));
    if (next.join(',') === current.join(',')) next = current.length > 0 ? current.slice(1) : all.slice(0, 1);
    const rec = updateRecord(found, { session_ids: next }, this.now());
    this.report('registrants', 'update', found.part, rec, by);
    this.appendAudit(rec, 'session_ids', by);
  }

  /** Returns whether an audit row was appended. */
  private updateRegistrant(found: Found, r: Rng, by: Initiator): boolean {
    const roll = r.next();
    if (roll < 0.4) {
      this.changeSessions(found, r, by);
      return true;
    }
    const now = this.now();
    if (roll < 0.7) {
      const status = String(found.rec.registration_status);
      const next = r.pick(STATUS_MOVES[status] ?? ['confirmed']);
      updateRecord(
        found,
        {
          registration_status: next,
          cancelled_at:
            next === 'cancelled' ? now : found.rec.cancelled_at === undefined ? null : found.rec.cancelled_at,
          checked_in_at: next === 'attended' ? now : (found.rec.checked_in_at ?? null),
        },
        now,
      );
      this.report('registrants', 'update', found.part, found.rec, by);
      return false;
    }
    const field = r.pick(['company', 'job_title', 'notes', 'mobile_phone']);
    const value = field === 'mobile_phone' ? `+1-555-010-${r.int(1000, 9999)}` : `Updated ${now}`;
    updateRecord(found, { [field]: value }, now);
    this.report('registrants', 'update', found.part, found.rec, by);
    return false;
  }

  private updateGeneric(found: Found, r: Rng): void {
    const now = this.now();
    const rec = found.rec;
    const texts = TEXT_FIELDS.filter((f) => typeof rec[f] === 'string');
    if (texts.length > 0) {
      const field = r.pick(texts);
      const base = String(rec[field]).replace(/ \(rev \d+\)$/, '');
      updateRecord(
        found,
        { [field]: field === 'name' || field === 'title' ? `${base} (rev ${r.int(2, 99)})` : `Updated ${now}` },
        now,
      );
      return;
    }
    const numbers = ['capacity', 'score', 'quantity', 'event_sort'].filter((f) => typeof rec[f] === 'number');
    if (numbers.length > 0) {
      const field = r.pick(numbers);
      updateRecord(found, { [field]: (rec[field] as number) + r.int(1, 10) }, now);
      return;
    }
    updateRecord(found, {}, now);
  }

  /** Inserts a new record shaped like an existing one of the same scope. */
  private insertLike(found: Found, r: Rng, by: Initiator): void {
    const { part } = found;
    const spec = part.spec;
    const now = this.now();
    const rec: Rec = { ...found.rec };
    if (spec.hasId) rec.id = this.world.table(spec.name).allocateId(part);
    for (const f of ['created_at', 'updated_at', 'datetime', 'registered_at'] as const) {
      if (f in spec.fields) rec[f] = now;
    }
    if (spec.name === 'registrants' || spec.name === 'contacts') {
      const account = this.world.accounts[part.account]!;
      const p = person(this.world.seed, part.account, account.contactCount + r.int(0, 1_000_000));
      Object.assign(rec, {
        first_name: p.first,
        last_name: p.last,
        email: p.email.replace('@', `.${String(rec.id)}@`),
        company: p.company,
        job_title: p.job,
      });
    }
    if (spec.name === 'registrants') {
      const event = this.world.events.get(part.scopeId);
      const eventRec = findAny(this.world, 'events', part.scopeId)?.rec;
      const sessions = event ? r.sample(event.sessionIds, r.int(0, Math.min(3, event.sessionIds.length))) : [];
      Object.assign(rec, {
        registration_status: eventRec?.apply_to_attend === true ? 'pending' : 'confirmed',
        session_ids: sessions,
        waitlisted_session_ids: [],
        reference: `REF-${part.scopeId}-N${String(rec.id)}`,
        cancelled_at: null,
        checked_in_at: null,
        group_id: null,
      });
    } else if (typeof rec.name === 'string' && spec.name !== 'sponsors') {
      rec.name = `${rec.name.replace(/ \(new( \d+)?\)$/, '')} (new ${String(rec.id ?? '')})`.replace(' ()', '');
    } else if (spec.name === 'transactions') {
      rec.type = 'payment';
      rec.status = 'approved';
    }
    part.insert(rec as Record<string, Json>);
    this.report(spec.name, 'insert', part, rec, by);
    if (spec.name === 'registrants') this.appendAudit(rec, 'session_ids', by);
    // A new data list needs its (empty) item scope, or listing its items would find no partition.
    if (spec.name === 'data_lists')
      this.world.addStored('data_list_items', part.account, rec.id as number, 0, () => ({}));
  }
}
