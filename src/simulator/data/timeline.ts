import { unit } from '../core/random.js';
import type { EventStatus } from './sizes.js';

const DAY = 86_400;
const HOUR = 3_600;

/**
 * When things happened around one event, in epoch seconds. Registrations happen in [regFrom, regTo), always before
 * the event starts, so audit rows generated in registration order and then in check-in order are chronological.
 * Everything in the base data lies before `anchor` (the start of the UTC day the simulator module was loaded),
 * hence in the past of the simulated clock.
 */
export interface Timeline {
  created: number;
  regFrom: number;
  regTo: number;
  start: number;
  end: number;
  /** Latest moment a base record of this event may have been touched. */
  touchTo: number;
  /** Check-ins and session attendance exist (the event has started). */
  attended: boolean;
  /** Check-ins happen in [start, attendTo). */
  attendTo: number;
}

const PLAN: Record<EventStatus, { created: number; regFrom: number; regTo: number; start: number; length: number }> = {
  draft: { created: -25, regFrom: -25, regTo: -25, start: 120, length: 2 },
  live: { created: -160, regFrom: -150, regTo: -1, start: -1, length: 2 },
  closed: { created: -200, regFrom: -190, regTo: -3, start: 7, length: 2 },
  completed: { created: -420, regFrom: -400, regTo: -60, start: -60, length: 2 },
  cancelled: { created: -210, regFrom: -200, regTo: -30, start: 25, length: 3 },
  archived: { created: -900, regFrom: -880, regTo: -500, start: -500, length: 1 },
};

/**
 * `ageDays` moves a past event (completed, archived) that many days further back: an account's history spreads its
 * past events over years. Current statuses keep their place (their dates are relative to today by definition).
 */
export function timeline(seed: number, eventId: number, status: EventStatus, anchor: number, ageDays = 0): Timeline {
  const past = status === 'completed' || status === 'archived';
  const base = PLAN[status];
  const age = past ? ageDays : 0;
  const p = {
    ...base,
    created: base.created - age,
    regFrom: base.regFrom - age,
    regTo: base.regTo - age,
    start: base.start - age,
  };
  // Jitter whole days so events of one status do not share dates; keep the order created < regFrom <= regTo <= start.
  const shift = Math.floor(unit(seed, eventId, 77) * 9) - 4;
  const startShift = status === 'live' ? 0 : shift;
  const start = anchor + (p.start + startShift) * DAY + 9 * HOUR;
  const end = start + p.length * DAY - 15 * HOUR;
  const created = anchor + (p.created + shift) * DAY + 10 * HOUR;
  const regFrom = Math.max(created + HOUR, anchor + (p.regFrom + shift) * DAY);
  const regTo = Math.max(regFrom, Math.min(start, anchor + (p.regTo + startShift) * DAY, anchor - 2 * HOUR));
  const attended = status === 'live' || status === 'completed' || status === 'archived';
  const attendTo = Math.min(end, anchor - HOUR);
  const touchTo = Math.min(anchor - 60, Math.max(regTo, end) + 20 * DAY);
  return { created, regFrom, regTo, start, end, touchTo, attended, attendTo };
}

export { DAY, HOUR };
