import type { SimulatorSize } from '../types.js';

/**
 * Event lifecycle states the simulator uses for `events.status`:
 * - `draft`: not published; registration not open; no registrants.
 * - `live`: published, registration open, the event is running now (check-ins and session attendance exist).
 * - `closed`: registration closed, the event starts in a few days.
 * - `completed`: the event took place (attended / no_show registrants).
 * - `cancelled`: the event was called off; most registrants are cancelled.
 * - `archived`: long past and archived.
 */
export const EVENT_STATUSES = ['draft', 'live', 'closed', 'completed', 'cancelled', 'archived'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

export interface EventPlan {
  status: EventStatus;
  registrants: number;
  /** Apply to Attend: registrants start `pending` and are approved or denied. */
  applyToAttend?: boolean;
  free?: boolean;
  /** Registration questions (custom fields) of the event. Default 4. */
  questions?: number;
  /** Days further in the past than its status puts it (an account's history: past events over several years). */
  ageDays?: number;
}

export interface AccountPlan {
  name: string;
  events: EventPlan[];
  contacts: number;
  webhooks: number;
  dataLists: number;
  dataListItems: number;
}

const e = (status: EventStatus, registrants: number, extra: Partial<EventPlan> = {}): EventPlan => ({
  status,
  registrants,
  ...extra,
});

/**
 * `small`'s first account, the demo: six events in every lifecycle state, one with more than 1000 registrants,
 * 2100 contacts (11 pages of 200). A full sync of every stream fits one 2000-credit window.
 */
const SMALL_MAIN: AccountPlan = {
  name: 'Northwind Events',
  events: [
    e('live', 1150),
    e('closed', 180, { applyToAttend: true }),
    e('completed', 320),
    e('archived', 90, { free: true }),
    e('cancelled', 35),
    e('draft', 0),
  ],
  contacts: 2100,
  webhooks: 4,
  dataLists: 2,
  dataListItems: 12,
};

const SMALL_OTHER: AccountPlan = {
  name: 'Contoso Conferences',
  events: [
    e('live', 400),
    e('completed', 250, { applyToAttend: true }),
    e('closed', 120),
    e('archived', 60),
    e('cancelled', 20),
    e('draft', 0),
  ],
  contacts: 700,
  webhooks: 2,
  dataLists: 1,
  dataListItems: 8,
};

function spread(count: number, total: number, statuses: readonly EventStatus[]): EventPlan[] {
  // Uneven but deterministic sizes: event k gets a share proportional to (count - k / 2).
  const weights = Array.from({ length: count }, (_, k) => count - k / 2);
  const sum = weights.reduce((a, b) => a + b, 0);
  return weights.map((w, k) => {
    const status = statuses[k % statuses.length]!;
    return e(status, status === 'draft' ? 0 : Math.round((total * w) / sum), {
      applyToAttend: k % 7 === 1,
      free: k % 9 === 4,
    });
  });
}

const MIX: readonly EventStatus[] = [
  'live',
  'live',
  'closed',
  'completed',
  'completed',
  'archived',
  'cancelled',
  'draft',
];

/**
 * An account's whole history: 600 events over about four and a half years, 20-40 registration questions each, ~60k
 * registrants. Six events are current (live, closed, cancelled, draft); the rest took place, spread back in time
 * (completed within the last three years, archived before), 20-180 registrants each.
 */
function historyEvents(): EventPlan[] {
  const current: EventPlan[] = [
    e('live', 180, { questions: 24 }),
    e('live', 120, { questions: 31, applyToAttend: true }),
    e('closed', 90, { questions: 22 }),
    e('closed', 60, { questions: 37, free: true }),
    e('cancelled', 40, { questions: 20 }),
    e('draft', 0, { questions: 28 }),
  ];
  const past = Array.from({ length: 594 }, (_, k) =>
    e(k % 3 === 2 ? 'archived' : 'completed', 20 + ((k * 37) % 161), {
      questions: 20 + ((k * 7) % 21),
      ageDays: Math.floor((k * 1100) / 594),
      applyToAttend: k % 11 === 3,
      free: k % 13 === 5,
    }),
  );
  return [...current, ...past];
}

export function accountPlans(size: SimulatorSize): AccountPlan[] {
  switch (size) {
    case 'tiny':
      return [
        {
          name: 'Northwind Events',
          events: [e('live', 40, { applyToAttend: true }), e('completed', 30), e('draft', 0)],
          contacts: 60,
          webhooks: 2,
          dataLists: 1,
          dataListItems: 5,
        },
        {
          name: 'Contoso Conferences',
          events: [e('closed', 25), e('cancelled', 12), e('archived', 20, { free: true })],
          contacts: 40,
          webhooks: 1,
          dataLists: 1,
          dataListItems: 3,
        },
      ];
    case 'small':
      return [SMALL_MAIN, SMALL_OTHER];
    case 'medium':
      return [
        {
          name: 'Northwind Events',
          events: spread(20, 56_000, MIX),
          contacts: 20_000,
          webhooks: 8,
          dataLists: 3,
          dataListItems: 40,
        },
        { ...SMALL_OTHER, events: spread(8, 10_000, MIX), contacts: 5_000 },
      ];
    case 'large':
      return [
        {
          name: 'Northwind Events',
          events: spread(52, 1_200_000, MIX),
          contacts: 150_000,
          webhooks: 12,
          dataLists: 4,
          dataListItems: 200,
        },
        SMALL_OTHER,
      ];
    case 'history':
      return [
        {
          name: 'Northwind Events',
          events: historyEvents(),
          contacts: 8_000,
          webhooks: 4,
          dataLists: 2,
          dataListItems: 20,
        },
        SMALL_OTHER,
      ];
    case 'bigevent':
      // One live event of 400,000 registrants (a conference's whole registration): the one-event load benchmark.
      return [
        {
          name: 'Northwind Events',
          events: [e('live', 400_000)],
          contacts: 100,
          webhooks: 1,
          dataLists: 0,
          dataListItems: 0,
        },
        SMALL_OTHER,
      ];
    case 'xlarge':
      // `large` with over five million registrants (the load benchmark's largest size).
      return [
        {
          name: 'Northwind Events',
          events: spread(52, 5_200_000, MIX),
          contacts: 150_000,
          webhooks: 12,
          dataLists: 4,
          dataListItems: 200,
        },
        SMALL_OTHER,
      ];
  }
}

/** Per-event counts of the smaller streams, scaled with the registrant count. */
export function eventScale(registrants: number, questions = 4) {
  const clamp = (v: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, Math.round(v)));
  return {
    sessions: clamp(6 + registrants / 40, 6, 90),
    tracks: clamp(3 + registrants / 400, 3, 6),
    locations: clamp(3 + registrants / 300, 3, 8),
    speakers: clamp(4 + registrants / 60, 4, 120),
    sponsors: clamp(3 + registrants / 150, 3, 25),
    regTypes: clamp(3 + registrants / 500, 3, 7),
    packages: clamp(2 + registrants / 600, 2, 5),
    discounts: clamp(4 + registrants / 25, 4, 260),
    questions,
    websites: registrants > 500 ? 2 : 1,
    pages: clamp(4 + registrants / 300, 4, 14),
    badges: registrants > 300 ? 3 : 1,
    invitationLists: clamp(1 + registrants / 500, 1, 5),
    cfsContacts: clamp(registrants / 30, 0, 150),
  };
}
