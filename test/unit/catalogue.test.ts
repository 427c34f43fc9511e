import { describe, expect, it } from 'vitest';
import {
  catalogue,
  customFieldsFromDefinitions,
  EXPAND_PAGE_CAP,
  getStream,
  hasStream,
  resolveStream,
  STREAM_SETS,
  selectStreams,
} from '../../connectors/index.js';
import type { ScalarType } from '../../connectors/types.js';
import { physicalColumns, requestFields } from '../../schemas/columns.js';

// The facts page's endpoint table: stream -> [path, scope, cap, cursor].
const FACTS: Record<string, [string, string, number, string | null]> = {
  events: ['/events', 'account', 1000, 'updated_at'],
  contacts: ['/contacts', 'account', 200, 'updated_at'],
  webhooks: ['/webhooks', 'account', 1000, 'updated_at'],
  webhook_groups: ['/webhook-groups', 'account', 1000, 'updated_at'],
  event_folders: ['/event-folders', 'account', 1000, null],
  contact_fields: ['/contacts/fields', 'account', 1000, null],
  session_fields: ['/sessions/fields', 'account', 1000, null],
  sponsor_fields: ['/sponsors/fields', 'account', 1000, null],
  event_fields: ['/events/fields', 'account', 1000, null],
  data_lists: ['/data-lists', 'account', 1000, null],
  data_list_items: ['/data-lists/{data_list_id}/items', 'data_lists', 1000, null],
  invitation_lists: ['/invitation-lists', 'event', 1000, null],
  registrants: ['/registrants', 'event', 1000, 'updated_at'],
  sessions: ['/sessions', 'event', 1000, 'updated_at'],
  speakers: ['/speakers', 'event', 1000, 'updated_at'],
  sponsors: ['/sponsors', 'event', 1000, 'updated_at'],
  registrant_types: ['/reg-types', 'event', 200, 'updated_at'],
  packages: ['/packages', 'event', 1000, 'updated_at'],
  discount_codes: ['/discounts', 'event', 200, 'updated_at'],
  transactions: ['/transactions', 'event', 1000, 'updated_at'],
  registrant_line_items: ['/registrant-line-items', 'event', 1000, null],
  registrant_line_item_audits: ['/registrant-line-item-audits', 'event', 1000, null],
  registrant_groups: ['/registrant-groups', 'event', 1000, null],
  session_waitlists: ['/session-waitlists', 'event', 1000, null],
  session_attendance: ['/session-attendances', 'event', 1000, null],
  session_scans: ['/scans/sessions', 'event', 1000, 'created_at'],
  session_locations: ['/locations', 'event', 1000, null],
  tracks: ['/tracks', 'event', 1000, null],
  event_questions: ['/event-questions', 'event', 1000, null],
  event_websites: ['/websites', 'event', 1000, null],
  pages: ['/pages', 'event', 1000, null],
  event_badges: ['/badges', 'event', 1000, null],
  sponsor_attendance: ['/sponsor-attendances', 'event', 1000, null],
  cfs_contacts: ['/cfs-contacts', 'event', 1000, 'updated_at'],
  cfs_submissions: ['/cfs-submissions', 'event', 1000, 'updated_at'],
  cfs_reviews: ['/cfs-reviews', 'event', 1000, 'updated_at'],
  registration_audit: ['/registrations/audit/sessions', 'event', 1000, 'updated_at'],
};

// Rows the facts page marks "documented" (or "spec"); everything else is inferred.
const DOCUMENTED = [
  'events',
  'contacts',
  'webhooks',
  'session_fields',
  'registrants',
  'sessions',
  'speakers',
  'registrant_types',
  'packages',
  'discount_codes',
  'transactions',
  'registrant_line_items',
  'cfs_contacts',
  'registration_audit',
];

// Identifiers that are not ours: opaque tokens and a payment gateway's reference.
const OPAQUE_IDS = ['secure_id', 'gateway_transaction_id'];

describe('catalogue', () => {
  it('holds the 37 streams of the facts page with their paths, scopes, caps and cursors', () => {
    expect(catalogue.map((s) => s.name)).toEqual(Object.keys(FACTS));
    for (const s of catalogue) {
      const scope = typeof s.scope === 'object' ? s.scope.parent : s.scope;
      expect([s.name, s.path, scope, s.maxPerPage, s.cursor]).toEqual([s.name, ...FACTS[s.name]!]);
    }
  });

  it('marks verified exactly the documented rows', () => {
    expect(catalogue.filter((s) => s.verified).map((s) => s.name)).toEqual(DOCUMENTED);
  });

  it('declares key and cursor fields, types ids as integers and money as decimals', () => {
    for (const s of catalogue) {
      for (const k of s.key) expect(s.fields[k], `${s.name}.${k}`).toBeDefined();
      if (s.cursor) expect(s.fields[s.cursor], `${s.name}.${s.cursor}`).toBe('timestamp');
      for (const [field, type] of Object.entries(s.fields)) {
        if ((field === 'id' || field.endsWith('_id')) && !OPAQUE_IDS.includes(field))
          expect(['bigint', 'integer'], `${s.name}.${field}`).toContain(type);
        if (field.endsWith('_at')) expect(type, `${s.name}.${field}`).toBe('timestamp');
        if (/^(individual|group)_/.test(field) && field !== 'group_id') expect(type).toBe('decimal(12,2)');
        expect(field in Object.prototype, field).toBe(false);
      }
      expect(s.description.length).toBeGreaterThan(10);
    }
    expect(getStream('registrants').fields).toMatchObject({
      gender: 'choice',
      reg_type_id: 'bigint',
      session_ids: 'bigint[]',
      waitlisted_session_ids: 'bigint[]',
      birth_date: 'date',
      group_balance_due: 'decimal(12,2)',
    });
    expect(getStream('sponsors').fields.level).toBe('choice');
    expect(getStream('transactions').fields.amount).toBe('decimal(12,2)');
    expect(getStream('discount_codes').fields).toMatchObject({
      absolute_discount: 'decimal(12,2)',
      percentage_discount: 'decimal(7,4)',
      apply_to_all: 'boolean',
    });
    expect(getStream('webhooks').fields).toMatchObject({ headers: 'json', event_ids: 'bigint[]' });
    expect(getStream('events').fields).toMatchObject({ status: 'text', start_date: 'date', start_time: 'time' });
  });

  it('declares expansions and custom field sources', () => {
    for (const name of ['registrants', 'contacts']) {
      expect(getStream(name).expand).toMatchObject({
        homeAddress: 'address',
        workAddress: 'address',
        billingAddress: 'address',
      });
    }
    expect(Object.keys(getStream('events').expand ?? {})).toEqual([
      'folder',
      'location',
      'sessions',
      'sponsors',
      'speakers',
      'translations',
    ]);
    expect(getStream('registrants').customFields).toEqual({ definitions: 'event_questions' });
    expect(getStream('sessions').customFields).toEqual({ definitions: 'session_fields' });
    expect(getStream('contacts').customFields).toEqual({ definitions: 'contact_fields' });
    expect(getStream('sponsors').customFields).toEqual({ definitions: 'sponsor_fields' });
    for (const s of catalogue) if (s.customFields) expect(hasStream(s.customFields.definitions)).toBe(true);
  });

  it('describes the registration audit and the parent-scoped data list items', () => {
    expect(getStream('registration_audit')).toMatchObject({
      kind: 'audit',
      key: ['registrant_id', 'type', 'updated_at'],
      cursor: 'updated_at',
      scope: 'event',
    });
    const items = getStream('data_list_items');
    expect(items.scope).toEqual({ parent: 'data_lists', param: 'data_list_id', column: 'data_list_id' });
    expect(hasStream('data_lists')).toBe(true);
    expect(physicalColumns(resolveStream(items)).map((c) => c.name)).toContain('data_list_id');
    for (const s of catalogue.filter((d) => d.name !== 'registration_audit')) expect(s.kind).toBe('list');
  });
});

describe('stream sets and selection', () => {
  it('core is the documented list, in order; all is the catalogue', () => {
    expect(STREAM_SETS.core).toEqual([
      'events',
      'registrants',
      'sessions',
      'speakers',
      'sponsors',
      'contacts',
      'registrant_types',
      'packages',
      'discount_codes',
      'transactions',
      'registrant_line_items',
      'registration_audit',
    ]);
    expect(STREAM_SETS.all).toHaveLength(37);
    expect(selectStreams('core').map((s) => s.name)).toEqual(STREAM_SETS.core);
    expect(selectStreams('all')).toHaveLength(37);
  });

  it('takes comma lists, mixes sets and names, drops duplicates', () => {
    expect(selectStreams(' webhooks, events ,webhooks').map((s) => s.name)).toEqual(['webhooks', 'events']);
    expect(selectStreams('core,tracks').map((s) => s.name)).toEqual([...STREAM_SETS.core, 'tracks']);
  });

  it('rejects unknown and empty selections with the valid names', () => {
    expect(() => selectStreams('events,nope,zap')).toThrow(
      /Unknown streams "nope", "zap"; valid: core, all .*registrants/,
    );
    expect(() => selectStreams(' , ')).toThrow(/No streams selected/);
    expect(() => getStream('nope')).toThrow(/Unknown stream "nope"/);
  });
});

describe('resolveStream', () => {
  it('applies path, page size and expand overrides; expand caps pages at 200', () => {
    const r = resolveStream(getStream('registrants'), {
      overrides: { path: '/registrants.json', maxPerPage: 500, expand: ['homeAddress', 'homeAddress'] },
    });
    expect(r.path).toBe('/registrants.json');
    expect(r.maxPerPage).toBe(EXPAND_PAGE_CAP);
    expect(r.expandSelected).toEqual(['homeAddress']);
    expect(resolveStream(getStream('registrants'), { overrides: { maxPerPage: 500 } }).maxPerPage).toBe(500);
    const plain = resolveStream(getStream('events'));
    expect(plain).toMatchObject({ path: '/events', maxPerPage: 1000, expandSelected: [], customFieldList: [] });
    expect(plain).not.toHaveProperty('extraFields');
  });

  it('rejects expansions the definition does not allow, and bad overrides', () => {
    expect(() => resolveStream(getStream('registrants'), { overrides: { expand: ['sessions'] } })).toThrow(
      /stream "registrants": unknown expand "sessions"; allowed: homeAddress, workAddress, billingAddress, emailHistory/,
    );
    expect(() => resolveStream(getStream('tracks'), { overrides: { expand: ['x'] } })).toThrow(/accepts no expand/);
    expect(() => resolveStream(getStream('events'), { overrides: { maxPerPage: 0 } })).toThrow(/positive integer/);
    expect(() => resolveStream(getStream('events'), { overrides: { path: 'events' } })).toThrow(/start with "\/"/);
    expect(() => resolveStream(getStream('data_list_items'), { overrides: { path: '/data-lists/items' } })).toThrow(
      /\{data_list_id\}/,
    );
  });

  it('keeps custom fields in one JSON column, adds extra fields as columns, requests custom fields', () => {
    const r = resolveStream(getStream('registrants'), {
      customFields: [
        { name: 'c_1', label: 'Diet', type: 'json' },
        { name: 'c_1', label: 'Diet', type: 'json' },
      ],
      extraFields: { badge_printed: 'boolean' },
    });
    expect(r.customFieldList).toHaveLength(1);
    const columns = physicalColumns(r).map((c) => `${c.name}:${c.type}`);
    expect(columns.slice(-2)).toEqual(['custom_fields:json', 'badge_printed:boolean']);
    expect(columns.filter((c) => c.startsWith('c_'))).toEqual([]);
    expect(requestFields(r)).toContain('c_1');
    expect(requestFields(r)).toContain('updated_at');
    expect(() =>
      resolveStream(getStream('tracks'), { customFields: [{ name: 'c_1', label: 'x', type: 'text' }] }),
    ).toThrow(/no custom fields/);
    expect(() => resolveStream(getStream('tracks'), { extraFields: { _x: 'text' } })).toThrow(/invalid extra field/);
    // A name every object inherits would read as a field on records that lack it.
    const inherited: Record<string, ScalarType> = Object.fromEntries([['constructor', 'text']]);
    expect(() => resolveStream(getStream('tracks'), { extraFields: inherited })).toThrow(/invalid/);
  });
});

describe('customFieldsFromDefinitions', () => {
  it('names fields c_<id>, labels them, and stores choice-like types as JSON', () => {
    expect(
      customFieldsFromDefinitions([
        { id: 4392417, name: 'Dietary needs', type: 'dropdown' },
        { id: '12', name: 'Workshops', type: 'multiselect' },
        { id: 13, name: 'Agree', type: 'Checkbox' },
        { id: 14, name: 'Shirt', type: 'radio' },
        { id: 15, name: 'Comments', type: 'textarea' },
        { id: 16, type: 'text' },
        { id: 15, name: 'duplicate', type: 'text' },
        { name: 'no id', type: 'text' },
        { id: 1.5, name: 'bad id', type: 'text' },
      ]),
    ).toEqual([
      { name: 'c_4392417', label: 'Dietary needs', type: 'json' },
      { name: 'c_12', label: 'Workshops', type: 'json' },
      { name: 'c_13', label: 'Agree', type: 'json' },
      { name: 'c_14', label: 'Shirt', type: 'json' },
      { name: 'c_15', label: 'Comments', type: 'text' },
      { name: 'c_16', label: 'c_16', type: 'text' },
    ]);
  });
});
