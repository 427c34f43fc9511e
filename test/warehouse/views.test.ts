/**
 * The analytics views' figures on a small known dataset, loaded through loadPage. Expected figures are worked out
 * by hand in the comments.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Warehouse } from '../../src/warehouse/index.js';
import {
  accountScope,
  customFields,
  discountCodes,
  eventQuestions,
  eventScope,
  events,
  openTemp,
  packages,
  page,
  registrants,
  registrantTypes,
  rows,
  sessionAttendance,
  sessions,
  speakers,
  sponsors,
  type TempWarehouse,
  transactions,
} from './helpers.js';

let t: TempWarehouse;
let w: Warehouse;
let created: string[];

const reg = (
  id: number,
  status: string,
  day: string,
  o: { type?: number; pkg?: number; code?: string; checkedIn?: boolean; sessions?: number[]; event?: number } = {},
) => ({
  id,
  event_id: o.event ?? 10,
  registration_status: status,
  registered_at: `${day} 10:00:00`,
  created_at: `${day} 09:00:00`,
  checked_in_at: o.checkedIn ? `${day} 12:00:00` : null,
  reg_type_id: o.type ?? 1,
  package_id: o.pkg ?? null,
  discount_code: o.code ?? null,
  session_ids: o.sessions ?? [],
  // Odd registrants answer the diet question (c_7); registrant 1 also picks two topics (c_8).
  custom_fields: customFields({
    ...(id % 2 ? { c_7: 'vegan' } : {}),
    ...(id === 1
      ? {
          c_8: [
            { id: 81, value: 'AI' },
            { id: 82, value: 'Data' },
          ],
        }
      : {}),
  }),
  updated_at: '2024-03-10 00:00:00',
});

beforeAll(async () => {
  t = await openTemp();
  w = t.w;
  await page(w, events, accountScope, [
    { id: 10, name: 'Conf A', status: 'live' },
    { id: 20, name: 'Conf B', status: 'live' },
  ]);
  await page(w, registrants, eventScope(10), [
    reg(1, 'confirmed', '2024-03-01', { pkg: 100, code: 'EARLY', checkedIn: true, sessions: [501, 502] }),
    reg(2, 'pending', '2024-03-01', { pkg: 100, sessions: [501] }),
    reg(3, 'approved', '2024-03-02', { type: 2, pkg: 101, checkedIn: true, sessions: [502] }),
    reg(4, 'denied', '2024-03-02', { type: 2, sessions: [501] }),
    reg(5, 'cancelled', '2024-03-03', { sessions: [501] }),
    reg(6, 'attended', '2024-03-03', { type: 2, pkg: 101, code: 'EARLY', sessions: [501, 502] }),
    reg(7, 'no_show', '2024-03-03'),
    reg(8, 'confirmed', '2024-03-01', { sessions: [501, 502], checkedIn: true }),
  ]);
  await page(w, registrants, eventScope(20), [
    reg(9, 'confirmed', '2024-04-01', { event: 20, checkedIn: true }),
    reg(10, 'pending', '2024-04-01', { event: 20 }),
  ]);
  // Registrant 8 vanished from the source: a snapshot of event 10 that did not see it.
  await page(w, registrants, eventScope(10), [], {
    upsert: false,
    seen: { walkId: 'snap', ids: [1, 2, 3, 4, 5, 6, 7] },
  });
  await w.markMissing({ stream: registrants, scope: eventScope(10), walkId: 'snap', runId: 'r', at: '2024-03-11' });

  await page(w, sessions, eventScope(10), [
    { id: 501, name: 'Keynote', capacity: 4 },
    { id: 502, name: 'Workshop', capacity: 2 },
  ]);
  await page(w, sessions, eventScope(20), [{ id: 503, name: 'Intro', capacity: null }]);
  await page(w, sessionAttendance, eventScope(10), [
    { id: 1, session_id: 501, registrant_id: 1, check_in_date: '2024-03-05 09:00:00' },
    { id: 2, session_id: 501, registrant_id: 6, check_in_date: '2024-03-05 09:01:00' },
    { id: 3, session_id: 502, registrant_id: 3, check_in_date: '2024-03-05 10:00:00' },
    { id: 4, session_id: 501, registrant_id: 2, check_in_date: null },
    { id: 5, session_id: 502, registrant_id: 1, check_in_date: '2024-03-05 10:05:00' },
    { id: 6, session_id: 501, registrant_id: 7, check_in_date: '2024-03-05 09:02:00' },
    { id: 7, session_id: 501, registrant_id: 1, check_in_date: '2024-03-05 15:00:00' },
  ]);
  await page(w, transactions, eventScope(10), [
    { id: 1, registrant_id: 1, type: 'payment', status: 'approved', amount: '120.00' },
    { id: 2, registrant_id: 1, type: 'refund', status: 'approved', amount: '-60.00' },
    { id: 3, registrant_id: 3, type: 'payment', status: 'approved', amount: '80.00' },
    { id: 4, registrant_id: 6, type: 'payment', status: 'approved', amount: '100.00' },
    { id: 5, registrant_id: 2, type: 'payment', status: 'pending', amount: '50.00' },
  ]);
  await page(w, transactions, eventScope(20), [
    { id: 6, registrant_id: 9, type: 'payment', status: 'approved', amount: '200.00' },
  ]);
  await page(w, registrantTypes, eventScope(10), [
    { id: 1, name: 'Attendee' },
    { id: 2, name: 'VIP' },
  ]);
  await page(w, packages, eventScope(10), [
    { id: 100, name: 'Basic' },
    { id: 101, name: 'Premium' },
  ]);
  await page(w, discountCodes, eventScope(10), [{ id: 900, code: 'EARLY' }]);
  await page(w, speakers, eventScope(10), [
    { id: 1, first_name: 'Ada' },
    { id: 2, first_name: 'Bo' },
    { id: 3, first_name: 'Cy' },
  ]);
  await page(w, speakers, eventScope(20), [{ id: 4, first_name: 'Di' }]);
  await page(w, sponsors, eventScope(10), [
    { id: 1, name: 'Acme' },
    { id: 2, name: 'Globex' },
  ]);
  // Event 10 asks for a diet and topics; event 20 only a shirt size (its registrant 9's diet answer has no label).
  await page(w, eventQuestions, eventScope(10), [
    { id: 7, event_id: 10, name: 'Diet', type: 'text' },
    { id: 8, event_id: 10, name: 'Topics', type: 'checkbox' },
  ]);
  await page(w, eventQuestions, eventScope(20), [{ id: 9, event_id: 20, name: 'Shirt', type: 'dropdown' }]);
  created = await w.createAnalyticsViews();
});

afterAll(async () => {
  await t.cleanup();
});

describe('analytics views', () => {
  it('creates every view whose tables exist', () => {
    expect(created.sort()).toEqual(
      [
        'approval_conversion',
        'checkin_by_event',
        'checkin_by_session',
        'event_speakers_sponsors',
        'registration_status_by_event',
        'registrations_daily',
        'registrants_event_10',
        'registrants_event_20',
        'custom_field_values',
        'revenue_by_discount_code',
        'revenue_by_event',
        'revenue_by_package',
        'revenue_by_registrant_type',
        'session_fill',
      ].sort(),
    );
  });

  it('registrations per day and status per event (deleted registrant 8 left out)', async () => {
    expect(
      await rows(
        w,
        `SELECT event_id, event_name, CAST(day AS VARCHAR) AS day, status, registrations FROM analytics.registrations_daily`,
      ),
    ).toEqual([
      { event_id: '10', event_name: 'Conf A', day: '2024-03-01', status: 'confirmed', registrations: '1' },
      { event_id: '10', event_name: 'Conf A', day: '2024-03-01', status: 'pending', registrations: '1' },
      { event_id: '10', event_name: 'Conf A', day: '2024-03-02', status: 'approved', registrations: '1' },
      { event_id: '10', event_name: 'Conf A', day: '2024-03-02', status: 'denied', registrations: '1' },
      { event_id: '10', event_name: 'Conf A', day: '2024-03-03', status: 'attended', registrations: '1' },
      { event_id: '10', event_name: 'Conf A', day: '2024-03-03', status: 'cancelled', registrations: '1' },
      { event_id: '10', event_name: 'Conf A', day: '2024-03-03', status: 'no_show', registrations: '1' },
      { event_id: '20', event_name: 'Conf B', day: '2024-04-01', status: 'confirmed', registrations: '1' },
      { event_id: '20', event_name: 'Conf B', day: '2024-04-01', status: 'pending', registrations: '1' },
    ]);
    expect(await rows(w, `SELECT * FROM analytics.registration_status_by_event`)).toEqual([
      {
        event_id: '10',
        event_name: 'Conf A',
        registrants: '7',
        confirmed: '1',
        pending: '1',
        approved: '1',
        denied: '1',
        cancelled: '1',
        attended: '1',
        no_show: '1',
        other: '0',
      },
      {
        event_id: '20',
        event_name: 'Conf B',
        registrants: '2',
        confirmed: '1',
        pending: '1',
        approved: '0',
        denied: '0',
        cancelled: '0',
        attended: '0',
        no_show: '0',
        other: '0',
      },
    ]);
  });

  it('conversion from pending to approved/denied', async () => {
    // Event 10: pending 1, approved 1, denied 1 -> decided 2 of 3 requests, half approved.
    expect(await rows(w, `SELECT * FROM analytics.approval_conversion`)).toEqual([
      {
        event_id: '10',
        event_name: 'Conf A',
        pending: '1',
        approved: '1',
        denied: '1',
        decided: '2',
        requests: '3',
        approval_rate: 0.5,
        denial_rate: 0.5,
        decision_rate: 0.6667,
      },
      {
        event_id: '20',
        event_name: 'Conf B',
        pending: '1',
        approved: '0',
        denied: '0',
        decided: '0',
        requests: '1',
        approval_rate: null,
        denial_rate: null,
        decision_rate: 0,
      },
    ]);
  });

  it('check-in rate per event', async () => {
    // Event 10 expected: 1 confirmed, 3 approved, 6 attended, 7 no_show = 4; checked in: 1, 3 (checked_in_at), 6.
    expect(await rows(w, `SELECT * FROM analytics.checkin_by_event`)).toEqual([
      { event_id: '10', event_name: 'Conf A', expected: '4', checked_in: '3', checkin_rate: 0.75 },
      { event_id: '20', event_name: 'Conf B', expected: '1', checked_in: '1', checkin_rate: 1 },
    ]);
  });

  it('check-in rate and fill rate per session', async () => {
    // Selections (not cancelled/denied): 501 <- 1, 2, 6; 502 <- 1, 3, 6. Attendance with check-in: 501 <- 1, 6, 7
    // (7 did not select it; 2 never checked in); 502 <- 3, 1.
    expect(await rows(w, `SELECT * FROM analytics.checkin_by_session`)).toEqual([
      {
        event_id: '10',
        event_name: 'Conf A',
        session_id: '501',
        session_name: 'Keynote',
        selections: '3',
        checked_in: '2',
        checkin_rate: 0.6667,
        attendees: '3',
      },
      {
        event_id: '10',
        event_name: 'Conf A',
        session_id: '502',
        session_name: 'Workshop',
        selections: '3',
        checked_in: '2',
        checkin_rate: 0.6667,
        attendees: '2',
      },
      {
        event_id: '20',
        event_name: 'Conf B',
        session_id: '503',
        session_name: 'Intro',
        selections: '0',
        checked_in: '0',
        checkin_rate: null,
        attendees: '0',
      },
    ]);
    expect(await rows(w, `SELECT * FROM analytics.session_fill`)).toEqual([
      {
        event_id: '10',
        event_name: 'Conf A',
        session_id: '501',
        session_name: 'Keynote',
        capacity: 4,
        selections: '3',
        attendees: '3',
        selection_fill_rate: 0.75,
        attendance_fill_rate: 0.75,
        seats_left: '1',
      },
      {
        event_id: '10',
        event_name: 'Conf A',
        session_id: '502',
        session_name: 'Workshop',
        capacity: 2,
        selections: '3',
        attendees: '2',
        selection_fill_rate: 1.5,
        attendance_fill_rate: 1,
        seats_left: '-1',
      },
      {
        event_id: '20',
        event_name: 'Conf B',
        session_id: '503',
        session_name: 'Intro',
        capacity: null,
        selections: '0',
        attendees: '0',
        selection_fill_rate: null,
        attendance_fill_rate: null,
        seats_left: null,
      },
    ]);
  });

  it('revenue by registrant type, package and discount code, net of refunds (pending left out)', async () => {
    expect(await rows(w, `SELECT * FROM analytics.revenue_by_registrant_type`)).toEqual([
      {
        event_id: '10',
        event_name: 'Conf A',
        reg_type_id: '1',
        reg_type_name: 'Attendee',
        registrants: '1',
        transactions: '2',
        payments: '120.00',
        refunds: '60.00',
        net_revenue: '60.00',
      },
      {
        event_id: '10',
        event_name: 'Conf A',
        reg_type_id: '2',
        reg_type_name: 'VIP',
        registrants: '2',
        transactions: '2',
        payments: '180.00',
        refunds: '0.00',
        net_revenue: '180.00',
      },
      {
        event_id: '20',
        event_name: 'Conf B',
        reg_type_id: '1',
        reg_type_name: null,
        registrants: '1',
        transactions: '1',
        payments: '200.00',
        refunds: '0.00',
        net_revenue: '200.00',
      },
    ]);
    expect(
      await rows(w, `SELECT event_id, package_id, package_name, net_revenue FROM analytics.revenue_by_package`),
    ).toEqual([
      { event_id: '10', package_id: '100', package_name: 'Basic', net_revenue: '60.00' },
      { event_id: '10', package_id: '101', package_name: 'Premium', net_revenue: '180.00' },
      { event_id: '20', package_id: null, package_name: null, net_revenue: '200.00' },
    ]);
    expect(
      await rows(
        w,
        `SELECT event_id, discount_code, discount_code_id, payments, refunds, net_revenue
           FROM analytics.revenue_by_discount_code`,
      ),
    ).toEqual([
      {
        event_id: '10',
        discount_code: 'EARLY',
        discount_code_id: '900',
        payments: '220.00',
        refunds: '60.00',
        net_revenue: '160.00',
      },
      {
        event_id: '10',
        discount_code: null,
        discount_code_id: null,
        payments: '80.00',
        refunds: '0.00',
        net_revenue: '80.00',
      },
      {
        event_id: '20',
        discount_code: null,
        discount_code_id: null,
        payments: '200.00',
        refunds: '0.00',
        net_revenue: '200.00',
      },
    ]);
    expect(
      await rows(
        w,
        `SELECT event_id, paying_registrants, payments, refunds, net_revenue FROM analytics.revenue_by_event`,
      ),
    ).toEqual([
      { event_id: '10', paying_registrants: '3', payments: '300.00', refunds: '60.00', net_revenue: '240.00' },
      { event_id: '20', paying_registrants: '1', payments: '200.00', refunds: '0.00', net_revenue: '200.00' },
    ]);
  });

  it('speaker and sponsor counts per event', async () => {
    expect(await rows(w, `SELECT * FROM analytics.event_speakers_sponsors`)).toEqual([
      { event_id: '10', event_name: 'Conf A', speakers: '3', sponsors: '2' },
      { event_id: '20', event_name: 'Conf B', speakers: '1', sponsors: '0' },
    ]);
  });

  it('gives one event its own questions as labelled, typed columns, over current rows', async () => {
    const r = await w.query(`SELECT id, "Diet", "Topics" FROM analytics.registrants_event_10 ORDER BY id`);
    expect(r.columns).toEqual(['id', 'Diet', 'Topics']);
    expect(r.rows.map((x) => x.Diet)).toEqual(['vegan', null, 'vegan', null, 'vegan', null, 'vegan']);
    // Lists come back from query() as their JSON text; the column is a VARCHAR[] of the chosen values.
    expect(r.rows.map((x) => x.Topics)).toEqual(['["AI","Data"]', null, null, null, null, null, null]);
    expect(await rows(w, `SELECT DISTINCT typeof("Topics") AS t FROM analytics.registrants_event_10`)).toEqual([
      { t: 'VARCHAR[]' },
    ]);
    const all = (await w.query(`SELECT * FROM analytics.registrants_event_10 LIMIT 0`)).columns;
    expect(all).not.toContain('custom_fields');
    expect(all).not.toContain('Shirt');
    expect((await w.query(`SELECT id, "Shirt" FROM analytics.registrants_event_20`)).rows).toEqual([
      { id: '9', Shirt: null },
      { id: '10', Shirt: null },
    ]);
  });

  it('lists every answer once in the long view, labelled by its own event', async () => {
    expect(
      await rows(
        w,
        `SELECT stream, event_id, record_id, field_id, label, value FROM analytics.custom_field_values
          ORDER BY event_id, record_id, field_id`,
      ),
    ).toEqual([
      { stream: 'registrants', event_id: '10', record_id: '1', field_id: '7', label: 'Diet', value: 'vegan' },
      { stream: 'registrants', event_id: '10', record_id: '1', field_id: '8', label: 'Topics', value: 'AI, Data' },
      { stream: 'registrants', event_id: '10', record_id: '3', field_id: '7', label: 'Diet', value: 'vegan' },
      { stream: 'registrants', event_id: '10', record_id: '5', field_id: '7', label: 'Diet', value: 'vegan' },
      { stream: 'registrants', event_id: '10', record_id: '7', field_id: '7', label: 'Diet', value: 'vegan' },
      { stream: 'registrants', event_id: '20', record_id: '9', field_id: '7', label: null, value: 'vegan' },
    ]);
  });

  it('names a label that collides with a column apart, and drops the views of questions gone', async () => {
    await page(w, eventQuestions, eventScope(10), [{ id: 7, event_id: 10, name: 'email', type: 'text' }]);
    await page(w, eventQuestions, eventScope(20), [], { upsert: false, seen: { walkId: 'q', ids: [] } });
    await w.markMissing({ stream: eventQuestions, scope: eventScope(20), walkId: 'q', runId: 'r', at: '2024-03-12' });
    const again = await w.createAnalyticsViews();
    const cols = (await w.query(`SELECT * FROM analytics.registrants_event_10 LIMIT 0`)).columns;
    expect(cols).toContain('email (c_7)');
    expect(again).not.toContain('registrants_event_20');
    const views = await rows(w, `SELECT view_name FROM duckdb_views() WHERE schema_name = 'analytics'`);
    expect(views.map((v) => v.view_name)).not.toContain('registrants_event_20');
  });
});

describe('views when tables are missing', () => {
  it('skips views whose tables do not exist', async () => {
    const other = await openTemp();
    try {
      await page(other.w, registrants, eventScope(1), [reg(1, 'pending', '2024-01-01')]);
      const names = await other.w.createAnalyticsViews();
      expect(names).toContain('approval_conversion');
      expect(names).not.toContain('session_fill');
      expect(names).not.toContain('revenue_by_event');
      expect(names).not.toContain('event_speakers_sponsors');
      // Without the events table, event names are null.
      expect(await rows(other.w, `SELECT event_name FROM analytics.checkin_by_event`)).toEqual([{ event_name: null }]);
    } finally {
      await other.cleanup();
    }
  });
});
