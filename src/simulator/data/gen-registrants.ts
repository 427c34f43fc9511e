import { hash4, hex8, Rng, tag, unit } from '../core/random.js';
import { CUSTOM, type Rec } from '../core/record.js';
import { customValues } from './defs.js';
import { type Person, person, personFields } from './people.js';
import type { EventStatus } from './sizes.js';
import type { AccountInfo, EventInfo, World } from './world.js';

/**
 * Registrants and the streams derived from them, generated on demand from (seed, event, index): `large` holds over
 * a million registrants and several million derived rows without storing them. Every derived row maps to its
 * registrant arithmetically (transaction j belongs to registrant 4*floor(j/5)+..., line item j to floor(j/3), ...),
 * so the data is consistent without lookups.
 */

const REG = tag('registrant');
const money = (cents: number) => (cents / 100).toFixed(2);

export const REGISTRATION_STATUSES = [
  'confirmed',
  'pending',
  'approved',
  'denied',
  'cancelled',
  'attended',
  'no_show',
] as const;

/** A status -> weight table as the two lists `Rng.weighted` takes (statuses in the order written). */
function weights(table: Readonly<Record<string, number>>): [string[], number[]] {
  return [Object.keys(table), Object.values(table)];
}

const WEIGHTS: Record<EventStatus, [string[], number[]]> = {
  draft: weights({ confirmed: 1 }),
  live: weights({ confirmed: 80, cancelled: 12, no_show: 8 }),
  closed: weights({ confirmed: 88, cancelled: 12 }),
  completed: weights({ attended: 60, no_show: 25, cancelled: 15 }),
  archived: weights({ attended: 60, no_show: 25, cancelled: 15 }),
  cancelled: weights({ cancelled: 85, confirmed: 15 }),
};
const ATA_WEIGHTS = weights({ pending: 35, approved: 35, denied: 15, cancelled: 5, confirmed: 10 });
/** In Apply-to-Attend events the first registrants cover every status (positions not divisible by 3). */
const FORCED: Record<number, string> = {
  1: 'pending',
  2: 'approved',
  4: 'denied',
  5: 'cancelled',
  7: 'confirmed',
  8: 'no_show',
};

function secureId(seed: number, id: number): string {
  return (
    hex8(hash4(seed, REG + 7, id)) +
    hex8(hash4(seed, REG + 8, id)) +
    hex8(hash4(seed, REG + 9, id)) +
    hex8(hash4(seed, REG + 10, id))
  );
}

/** What several streams need to know about registrant i, computed once per record. */
export interface RegCore {
  i: number;
  id: number;
  personIndex: number;
  p: Person;
  status: string;
  created: number;
  updated: number;
  checkIn: number | null;
  regTypeId: number;
  packageId: number;
  discount: string;
  sessions: number[];
  waitlisted: number[];
  groupId: number | null;
  groupSize: number;
  netCents: number;
  taxCents: number;
  paid: boolean;
  refunded: boolean;
  paidSessionCents: number;
  paidSessionId: number | null;
}

export class RegistrantModel {
  readonly count: number;
  readonly attendanceCount: number;
  readonly transactionCount: number;
  readonly groupCount: number;
  readonly waitlistCount: number;
  readonly sponsorVisitCount: number;
  private readonly span: number;

  constructor(
    readonly world: World,
    readonly account: AccountInfo,
    readonly event: EventInfo,
  ) {
    const R = event.plan.registrants;
    this.count = R;
    this.span = event.t.regTo - event.t.regFrom;
    this.attendanceCount = event.t.attended ? Math.floor((R + 2) / 3) : 0;
    this.transactionCount = event.plan.free ? 0 : 5 * Math.floor(R / 4) + (R % 4 ? (R % 4) + 1 : 0);
    this.groupCount = Math.ceil(R / 10);
    this.waitlistCount = R > 1 ? Math.floor((R - 2) / 25) + 1 : 0;
    this.sponsorVisitCount = event.t.attended && R >= 4 ? Math.floor((R - 4) / 10) + 1 : 0;
  }

  created(i: number): number {
    const t = this.event.t;
    return t.regFrom + Math.floor((this.span * (i + 0.5 * unit(this.world.seed, REG, this.event.id, i))) / this.count);
  }

  /** Check-in moment of attendance row k (registrant 3k); increasing in k. */
  attendTime(k: number): number {
    const t = this.event.t;
    return t.start + Math.floor(((t.attendTo - t.start) * (k + 0.5)) / Math.max(1, this.attendanceCount));
  }

  status(i: number): string {
    const e = this.event;
    if (e.t.attended && i % 3 === 0) return 'attended';
    if (e.plan.applyToAttend) {
      const forced = FORCED[i];
      if (forced && (forced !== 'no_show' || e.t.attended)) return forced;
      const r = new Rng(hash4(this.world.seed, REG + 1, e.id, i));
      return r.weighted(ATA_WEIGHTS[0], ATA_WEIGHTS[1]);
    }
    const [items, weights] = WEIGHTS[e.plan.status];
    return new Rng(hash4(this.world.seed, REG + 1, e.id, i)).weighted(items, weights);
  }

  updated(i: number): number {
    const c = this.created(i);
    const to = this.event.t.touchTo;
    const x = unit(this.world.seed, REG + 2, this.event.id, i);
    let u = c + Math.floor(x * x * x * x * Math.max(0, to - c));
    if (this.event.t.attended && i % 3 === 0) u = Math.max(u, this.attendTime(i / 3));
    return u;
  }

  core(i: number): RegCore {
    const { world, event: e } = this;
    const seed = world.seed;
    const r = new Rng(hash4(seed, REG + 3, e.id, i));
    const personIndex = hash4(seed, 13, e.id, i) % this.account.contactCount;
    const status = this.status(i);
    const created = this.created(i);
    const regType = e.regTypes[r.int(0, e.regTypes.length - 1)]!;
    const pkg = e.packages[r.int(0, e.packages.length - 1)]!;
    const sessions = r.sample(e.sessionIds, r.int(0, Math.min(4, e.sessionIds.length)));
    let paidSessionCents = 0;
    let paidSessionId: number | null = null;
    for (const s of sessions) {
      const c = e.sessionCents.get(s);
      if (c) {
        paidSessionCents += c;
        paidSessionId ??= s;
      }
    }
    const discount = r.chance(0.15) ? r.pick(e.discountCodes) : '';
    let netCents = regType.cents + pkg.cents + paidSessionCents;
    if (discount) netCents = Math.round(netCents * 0.9);
    const block = Math.floor(i / 10);
    const inGroup = i % 10 < 3;
    return {
      i,
      id: e.registrantIdStart + i,
      personIndex,
      p: person(seed, this.account.index, personIndex),
      status,
      created,
      updated: this.updated(i),
      checkIn: e.t.attended && i % 3 === 0 ? this.attendTime(i / 3) : null,
      regTypeId: regType.id,
      packageId: pkg.id,
      discount,
      sessions,
      waitlisted: i % 25 === 1 ? [e.sessionIds[hash4(seed, 14, e.id, i) % e.sessionIds.length]!] : [],
      groupId: inGroup ? e.groupIdStart + block : null,
      groupSize: inGroup ? Math.min(3, this.count - block * 10) : 1,
      netCents,
      taxCents: Math.round(netCents * e.taxRate),
      paid: netCents > 0 && i % 11 !== 5,
      refunded: netCents > 0 && i % 4 === 0 && !e.plan.free,
      paidSessionCents,
      paidSessionId,
    };
  }

  record(i: number): Rec {
    const c = this.core(i);
    const e = this.event;
    const world = this.world;
    const p = c.p;
    const r = new Rng(hash4(world.seed, REG + 4, e.id, i));
    const gross = c.netCents + c.taxCents;
    const groupGross = gross * c.groupSize;
    const groupPaid = c.paid ? groupGross : 0;
    const free = c.netCents === 0;
    const rec: Rec = {
      id: c.id,
      event_id: e.id,
      contact_id: this.account.contactIdStart + c.personIndex,
      group_id: c.groupId,
      reg_type_id: c.regTypeId,
      package_id: c.packageId,
      discount_code: c.discount,
      ...personFields(p),
      work_phone: p.workPhone,
      mobile_phone: p.mobile,
      profile_picture: p.picture,
      twitter_handle: p.twitter,
      gender: p.gender,
      birth_date: p.birthDate,
      cc_email: p.ccEmail,
      bio: p.bio,
      vat_number: p.vat,
      session_ids: c.sessions,
      waitlisted_session_ids: c.waitlisted,
      notes: r.chance(0.05) ? 'Requested aisle seat; arrives late.' : '',
      reference: `REF-${e.id}-${i + 1}`,
      ip_address: `203.0.113.${(i % 254) + 1}`,
      individual_net: money(c.netCents),
      individual_tax: money(c.taxCents),
      individual_tax_2: '0.00',
      individual_gross: money(gross),
      group_net: money(c.netCents * c.groupSize),
      group_tax: money(c.taxCents * c.groupSize),
      group_tax_2: '0.00',
      group_gross: money(groupGross),
      group_paid: money(groupPaid),
      group_balance_due: (groupGross - groupPaid) / 100,
      payment_method: free ? 'free' : c.paid ? r.pick(['credit_card', 'credit_card', 'paypal']) : 'invoice',
      payment_status: free ? 'free' : !c.paid ? 'unpaid' : c.refunded ? 'partially_refunded' : 'paid',
      po_number: !free && !c.paid ? `PO-${10000 + i}` : '',
      registration_status: c.status,
      language: p.language,
      timezone: e.timezone,
      ext_token: hex8(hash4(world.seed, REG + 5, c.id)) + hex8(hash4(world.seed, REG + 6, c.id)),
      secure_id: secureId(world.seed, c.id),
      registered_at: world.ts(c.created),
      cancelled_at: c.status === 'cancelled' ? world.ts(Math.max(c.created, c.updated)) : null,
      checked_in_at: c.checkIn === null ? null : world.ts(c.checkIn),
      created_at: world.ts(c.created),
      updated_at: world.ts(c.updated),
    };
    rec[CUSTOM] = customValues(e.questions, r);
    return rec;
  }
}

/** Adds the registrant partition and every derived lazy partition of one event. */
export function buildRegistrantStreams(world: World, account: AccountInfo, event: EventInfo): RegistrantModel {
  const m = new RegistrantModel(world, account, event);
  const a = account.index;
  const eid = event.id;
  const seed = world.seed;
  const wall = (s: number) => world.zone.wall(s);
  const R = m.count;

  world.addLazy('registrants', a, eid, (idStart) => {
    event.registrantIdStart = idStart;
    return {
      count: R,
      idStart,
      record: (i) => m.record(i),
      time: (i, f) => (f === 'updated_at' ? wall(m.updated(i)) : f === 'created_at' ? wall(m.created(i)) : null),
    };
  });

  world.addLazy('registrant_groups', a, eid, (idStart) => {
    event.groupIdStart = idStart;
    return {
      count: m.groupCount,
      idStart,
      record(b) {
        const c = m.core(b * 10);
        const gross = (c.netCents + c.taxCents) * c.groupSize;
        return {
          id: idStart + b,
          event_id: eid,
          name: c.groupSize > 1 ? `${c.p.last} party` : `${c.p.first} ${c.p.last}`,
          primary_registrant_id: c.id,
          group_size: c.groupSize,
          group_gross: money(gross),
          group_paid: money(c.paid ? gross : 0),
        };
      },
    };
  });

  // Transactions come in blocks of five per four registrants: four payments, then a refund of the first one.
  const txOf = (j: number) => {
    const block = Math.floor(j / 5);
    const k = j % 5;
    const inBlock = Math.min(4, R - block * 4);
    return k < inBlock ? { reg: block * 4 + k, refund: false } : { reg: block * 4, refund: true };
  };
  const txTimes = (j: number) => {
    const { reg, refund } = txOf(j);
    // Clamped below the anchor: base data never lies in the simulated clock's future.
    const last = world.anchor - 1;
    const created = Math.min(
      last,
      m.created(reg) + 60 + (refund ? Math.floor((m.updated(reg) - m.created(reg)) / 2) + 30 : 0),
    );
    return { created, updated: Math.min(last, created + (j % 7 === 3 ? 3600 : 0)) };
  };
  world.addLazy('transactions', a, eid, (idStart) => ({
    count: m.transactionCount,
    idStart,
    time: (j, f) =>
      f === 'updated_at' ? wall(txTimes(j).updated) : f === 'created_at' ? wall(txTimes(j).created) : null,
    record(j) {
      const { reg, refund } = txOf(j);
      const c = m.core(reg);
      const r = new Rng(hash4(seed, tag('tx'), eid, j));
      const times = txTimes(j);
      const gross = c.netCents + c.taxCents;
      const amount = refund ? -Math.max(1, Math.round(gross * 0.5)) : gross;
      const card = c.paid ? r.pick(['visa', 'mastercard', 'amex']) : '';
      return {
        id: idStart + j,
        registrant_id: c.id,
        type: refund ? 'refund' : 'payment',
        datetime: world.ts(times.created),
        status: c.paid || refund ? 'approved' : 'pending',
        amount: money(amount),
        currency: event.currency,
        card_type: card,
        card_number_last_4: card ? String(1000 + r.int(0, 8999)) : '',
        name_on_card: card ? `${c.p.first} ${c.p.last}` : '',
        notes: refund ? 'Partial refund: cancelled workshop' : '',
        gateway_id: card ? 3 : null,
        gateway_transaction_id: card ? `ch_${r.hex(24)}` : '',
        order_number: `ORD-${eid}-${reg + 1}`,
        payment_method_fee: card ? money(Math.round(Math.abs(amount) * 0.029)) : '0.00',
        created_at: world.ts(times.created),
        created_by: refund ? 9001 : null,
        updated_at: world.ts(times.updated),
        updated_by: refund ? 9001 : null,
      };
    },
  }));

  // Three line items per registrant: registrant type, package, then a paid session or a question.
  const lineItem = (idStart: number, j: number): Rec => {
    const c = m.core(Math.floor(j / 3));
    const k = j % 3;
    const e = event;
    let object: string;
    let objectId: number | null;
    let questionId: number | null = null;
    let net: number;
    if (k === 0) {
      object = 'reg_type';
      objectId = c.regTypeId;
      net = e.regTypes.find((t) => t.id === c.regTypeId)?.cents ?? 0;
    } else if (k === 1) {
      object = 'package';
      objectId = c.packageId;
      net = e.packages.find((p) => p.id === c.packageId)?.cents ?? 0;
    } else if (c.paidSessionId !== null) {
      object = 'session';
      objectId = c.paidSessionId;
      net = c.paidSessionCents;
    } else {
      const q = e.questions[0];
      object = q ? `c_${q.id}` : 'question';
      objectId = null;
      questionId = q?.id ?? null;
      net = 0;
    }
    const tax = Math.round(net * e.taxRate);
    const full = net;
    const discounted = c.discount ? Math.round(net * 0.9) : net;
    const dTax = Math.round(discounted * e.taxRate);
    return {
      id: idStart + j,
      registrant_id: c.id,
      group_id: c.groupId,
      object,
      object_id: objectId,
      question_id: questionId,
      quantity: 1,
      status: c.status === 'cancelled' ? 'cancelled' : 'active',
      net: money(discounted),
      tax: money(dTax),
      tax_rate: (e.taxRate * 100).toFixed(2),
      gross: money(discounted + dTax),
      full_price_net: money(full),
      full_price_gross: money(full + tax),
      datetime: world.ts(c.created),
    };
  };
  let lineItemStart = 0;
  world.addLazy('registrant_line_items', a, eid, (idStart) => {
    lineItemStart = idStart;
    return { count: 3 * R, idStart, record: (j) => lineItem(idStart, j) };
  });
  world.addLazy('registrant_line_item_audits', a, eid, (idStart) => ({
    count: Math.floor((3 * R) / 5),
    idStart,
    record(j) {
      const item = lineItem(lineItemStart, 5 * j);
      const update = j % 4 === 3;
      return {
        id: idStart + j,
        registrant_line_item_id: item.id as number,
        registrant_id: item.registrant_id as number,
        action: update ? 'update' : 'insert',
        quantity: 1,
        status: item.status as string,
        net: item.net as string,
        gross: item.gross as string,
        user_id: update ? 9001 : null,
        datetime: item.datetime as string,
      };
    },
  }));

  const attendSession = (c: RegCore) => c.sessions[0] ?? event.sessionIds[c.i % event.sessionIds.length]!;
  world.addLazy('session_attendance', a, eid, (idStart) => ({
    count: m.attendanceCount,
    idStart,
    record(k) {
      const c = m.core(3 * k);
      const checkIn = m.attendTime(k);
      const minutes = 20 + (hash4(seed, 15, eid, k) % 36);
      const virtual = k % 5 === 0;
      return {
        id: idStart + k,
        session_id: attendSession(c),
        registrant_id: c.id,
        waiting_room_date: virtual ? world.ts(checkIn - 300) : null,
        check_in_date: world.ts(checkIn),
        check_out_date: world.ts(checkIn + minutes * 60),
        duration: minutes,
        on_demand_date: null,
      };
    },
  }));
  world.addLazy('session_scans', a, eid, (idStart) => ({
    count: m.attendanceCount,
    idStart,
    time: (k, f) => (f === 'created_at' ? wall(m.attendTime(k)) : null),
    record(k) {
      const c = m.core(3 * k);
      return {
        id: idStart + k,
        event_id: eid,
        registrant_id: c.id,
        type: 'session',
        scan_id: attendSession(c),
        created_by: 9100 + (k % 4),
        created_at: world.ts(m.attendTime(k)),
      };
    },
  }));
  world.addLazy('session_waitlists', a, eid, (idStart) => ({
    count: m.waitlistCount,
    idStart,
    record(k) {
      const c = m.core(25 * k + 1);
      return {
        id: idStart + k,
        session_id: c.waitlisted[0]!,
        registrant_id: c.id,
        position: (k % 10) + 1,
        created_at: world.ts(c.created + 120),
      };
    },
  }));
  world.addLazy('sponsor_attendance', a, eid, (idStart) => ({
    count: m.sponsorVisitCount,
    idStart,
    record(k) {
      const c = m.core(10 * k + 3);
      return {
        id: idStart + k,
        sponsor_id: event.sponsorIds[k % event.sponsorIds.length]!,
        registrant_id: c.id,
        scanned_at: world.ts(event.t.start + 3600 + ((k * 97) % Math.max(1, event.t.attendTo - event.t.start - 3600))),
        notes: k % 6 === 0 ? 'Asked for a demo' : '',
      };
    },
  }));

  // The audit log: one `session_ids` row per registration (at registration time, in id order, hence chronological),
  // then one `session_attendance` row per check-in (after the event started, also chronological).
  const auditTime = (j: number) => (j < R ? m.created(j) : m.attendTime(j - R));
  world.addLazy('registration_audit', a, eid, (idStart) => ({
    count: R + m.attendanceCount,
    idStart,
    time: (j, f) => (f === 'updated_at' ? wall(auditTime(j)) : null),
    record(j) {
      const attendance = j >= R;
      const c = m.core(attendance ? 3 * (j - R) : j);
      return {
        registrant_id: c.id,
        group_id: c.groupId,
        full_name: `${c.p.first} ${c.p.last}`,
        email: c.p.email,
        type: attendance ? 'session_attendance' : 'session_ids',
        session_ids: attendance ? String(attendSession(c)) : c.sessions.join(','),
        updated_at: world.ts(auditTime(j)),
      };
    },
  }));
  return m;
}
