/**
 * Custom-field labels as the columns of the per-event views (`analytics.registrants_event_<id>`), and views built
 * one by one:
 * - a NUL (or any control character) in a label no longer removes every analytics view;
 * - colliding labels get suffixes that never name another field (the `Dup (c_90010112)` mislabel);
 * - a view that cannot be built costs only itself, and is reported.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defineStream } from '../../connectors/types.js';
import { AnalyticsViewsError } from '../../src/warehouse/index.js';
import { labelAliases, viewLabel } from '../../src/warehouse/views/labels.js';
import { VIEWS } from '../../src/warehouse/views/views.js';
import {
  customFields,
  eventQuestions,
  eventScope,
  openTemp,
  page,
  registrants,
  resolve,
  rows,
  sessionAttendance,
  type TempWarehouse,
} from './helpers.js';

describe('viewLabel', () => {
  it('removes control characters (NUL included), collapses whitespace, keeps other text', () => {
    expect(viewLabel('Diet\u0000 choice')).toBe('Diet choice');
    expect(viewLabel('\u0001\t a\r\nb \u007f\u0085')).toBe('a b');
    expect(viewLabel('Größe 😀 "x"')).toBe('Größe 😀 "x"');
    expect(viewLabel('\u0000\u0000')).toBe('');
    expect(viewLabel('a\ud800b')).toBe('a\ufffdb');
  });
});

describe('labelAliases', () => {
  it('never gives a suffixed alias that is another field’s label (the Dup mislabel)', () => {
    const columns = ['id', 'c_1', 'c_90010112', 'c_3'];
    const labels = new Map([
      ['c_1', 'Dup (c_90010112)'],
      ['c_90010112', 'Dup'],
      ['c_3', 'Dup'],
    ]);
    const aliases = labelAliases(columns, labels);
    // The field labelled "Dup (c_90010112)" keeps that name; the two "Dup" fields both get suffixes.
    expect(aliases.get('c_1')).toBe('Dup (c_90010112)');
    expect(aliases.get('c_90010112')).toBe('Dup (c_90010112, 2)');
    expect(aliases.get('c_3')).toBe('Dup (c_3)');
  });

  it('compares names without case, as DuckDB does', () => {
    const aliases = labelAliases(
      ['id', 'email', 'c_1', 'c_2'],
      new Map([
        ['c_1', 'EMAIL'],
        ['c_2', 'Diet'],
      ]),
    );
    expect(aliases.get('c_1')).toBe('EMAIL (c_1)');
    expect(aliases.get('c_2')).toBe('Diet');
    const twins = labelAliases(
      ['c_1', 'c_2'],
      new Map([
        ['c_1', 'Size'],
        ['c_2', 'SIZE'],
      ]),
    );
    expect([...twins.values()]).toEqual(['Size (c_1)', 'SIZE (c_2)']);
  });

  it('gives no alias to a label that is empty once cleaned', () => {
    expect(labelAliases(['c_1'], new Map([['c_1', '\u0000 \u0001']])).size).toBe(0);
  });

  it('property: aliases are distinct from each other, from every other column, and from every other field’s label', () => {
    // A tiny alphabet forces collisions, including with the suffix form.
    const name = fc.constantFrom('a', 'A', 'b', 'c_1', 'C_2', 'a (c_1)', 'a (c_2)', 'a (c_1, 2)', '\u0000a', ' b ');
    fc.assert(
      fc.property(fc.array(fc.option(name, { nil: undefined }), { minLength: 1, maxLength: 6 }), (picked) => {
        const columns = ['a', ...picked.map((_, i) => `c_${i + 1}`)];
        const labels = new Map<string, string>();
        picked.forEach((label, i) => {
          if (label !== undefined) labels.set(`c_${i + 1}`, label);
        });
        const aliases = labelAliases(columns, labels);
        const finalNames = columns.map((c) => (aliases.get(c) ?? c).toLowerCase());
        expect(new Set(finalNames).size).toBe(columns.length);
        for (const [column, alias] of aliases) {
          const others = columns.filter((c) => c !== column);
          for (const other of others) {
            expect(alias.toLowerCase()).not.toBe(other.toLowerCase());
            const label = labels.get(other);
            if (label !== undefined) expect(alias.toLowerCase()).not.toBe(viewLabel(label).toLowerCase());
          }
          expect(alias).not.toMatch(/[\u0000-\u001f]/);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('views in a warehouse', () => {
  let t: TempWarehouse;
  const reg = (id: number, c1: string, c2: string, c3: string) => ({
    id,
    event_id: 10,
    registration_status: 'confirmed',
    registered_at: '2024-03-01 10:00:00',
    custom_fields: customFields({ c_1: c1, c_3: c3, c_90010112: c2 }),
    updated_at: '2024-03-10 00:00:00',
  });
  /** The event's question definitions, as the definitions stream stores them. */
  const setLabels = (labels: Record<number, string>) =>
    page(
      t.w,
      eventQuestions,
      eventScope(10),
      Object.entries(labels).map(([id, name]) => ({ id: Number(id), event_id: 10, name, type: 'text' })),
    );

  beforeEach(async () => {
    t = await openTemp();
    await page(t.w, registrants, eventScope(10), [reg(1, 'first', 'second', 'third')]);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('a NUL in a label leaves every view in place, the label cleaned', async () => {
    await setLabels({ 1: 'Diet\u0000 choice' });
    const report = await t.w.buildAnalyticsViews();
    expect(report.warnings).toEqual([]);
    const registrantViews = VIEWS.filter((v) => v.requires.length > 0 && v.requires.every((r) => r === 'registrants'));
    for (const v of registrantViews) expect(report.created).toContain(v.name);
    expect(report.created).toContain('registrants_event_10');
    expect(await rows(t.w, `SELECT "Diet choice" AS v FROM analytics.registrants_event_10`)).toEqual([{ v: 'first' }]);
  });

  it('keeps a generated view whose SQL is unchanged, and rebuilds one changed by anything else', async () => {
    await setLabels({ 1: 'Diet', 3: 'Size' });
    expect((await t.w.buildAnalyticsViews()).created).toContain('registrants_event_10');
    const mark = async () =>
      (await rows(t.w, `SELECT comment FROM duckdb_views() WHERE view_name = 'registrants_event_10'`))[0]?.comment;
    const first = await mark();
    expect(String(first)).toMatch(/^evsync:[0-9a-f]{16}$/);
    // Someone replaced the view: its mark is gone, so the next build restores it.
    await t.w.query(`CREATE OR REPLACE VIEW analytics.registrants_event_10 AS SELECT 1 AS x`);
    expect((await t.w.buildAnalyticsViews()).created).toContain('registrants_event_10');
    expect(await mark()).toBe(first);
    expect(await rows(t.w, `SELECT "Diet", "Size" FROM analytics.registrants_event_10`)).toEqual([
      { Diet: 'first', Size: 'third' },
    ]);
    // A label changed: new SQL, a new mark.
    await setLabels({ 1: 'Diet', 3: 'Shirt size' });
    await t.w.buildAnalyticsViews();
    expect(await mark()).not.toBe(first);
    expect(await rows(t.w, `SELECT "Shirt size" AS v FROM analytics.registrants_event_10`)).toEqual([{ v: 'third' }]);
  });

  it('the column named like a field’s label holds that field’s answers', async () => {
    await setLabels({ 1: 'Dup (c_90010112)', 90010112: 'Dup', 3: 'dup' });
    const report = await t.w.buildAnalyticsViews();
    expect(report.warnings).toEqual([]);
    const [row] = await rows(t.w, `SELECT * FROM analytics.registrants_event_10`);
    expect(row?.['Dup (c_90010112)']).toBe('first');
    expect(row?.['Dup (c_90010112, 2)']).toBe('second');
    expect(row?.['dup (c_3)']).toBe('third');
  });

  it('a view that cannot be built costs only itself and is reported; the older call throws after building the rest', async () => {
    // A sessions table of an unexpected shape (no capacity column): session_fill cannot be built on it.
    const oddSessions = resolve(
      defineStream({
        name: 'sessions',
        path: '/sessions',
        scope: 'event',
        kind: 'list',
        key: ['id'],
        cursor: null,
        maxPerPage: 1000,
        fields: { id: 'bigint', event_id: 'bigint', name: 'text' },
        verified: true,
        description: 'sessions without capacity',
      }),
    );
    await page(t.w, oddSessions, eventScope(10), [{ id: 501, event_id: 10, name: 'Keynote' }]);
    await t.w.ensureTable(sessionAttendance);
    await setLabels({ 1: 'Diet' });

    const report = await t.w.buildAnalyticsViews();
    expect(report.warnings).toHaveLength(1);
    expect(report.warnings[0]).toMatch(/^analytics view session_fill not created \(dropped\): .*capacity/);
    expect(report.created).not.toContain('session_fill');
    expect(report.created).toEqual(
      expect.arrayContaining(['checkin_by_session', 'registrations_daily', 'registrants_event_10']),
    );
    const present = await rows(t.w, `SELECT view_name FROM duckdb_views() WHERE schema_name = 'analytics'`);
    expect(present.map((r) => r.view_name)).not.toContain('session_fill');
    expect(present.map((r) => r.view_name)).toContain('registrants_event_10');

    const thrown = await t.w.createAnalyticsViews().catch((err: unknown) => err);
    expect(thrown).toBeInstanceOf(AnalyticsViewsError);
    expect((thrown as AnalyticsViewsError).report.created).toContain('registrants_event_10');
    expect((thrown as AnalyticsViewsError).message).toContain('session_fill');
  });
});
