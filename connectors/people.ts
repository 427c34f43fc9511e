import { ADDRESS_EXPANSIONS, FIELD_DEFINITION_FIELDS, PERSON, RECORD_TIMES } from './field-definitions.js';
import { defineStream } from './types.js';

/** People and organisations around events: speakers, sponsors, CRM contacts, and their custom field definitions. */

export const speakers = defineStream({
  name: 'speakers',
  path: '/speakers',
  scope: 'event',
  cursor: 'updated_at',
  fields: {
    id: 'bigint',
    event_id: 'bigint',
    contact_id: 'bigint',
    ...PERSON,
    bio: 'text',
    gender: 'choice',
    profile_picture: 'text',
    twitter_handle: 'text',
    cfs_speaker: 'boolean',
    event_sort: 'integer',
    direct_link: 'text',
    ...RECORD_TIMES,
  },
  // The speaker-session links come from this expansion (there is no list of them).
  expand: { sessions: 'json' },
  webhook: { object: 'speaker' },
  verified: true,
  description: 'Speakers of an event (sparse default fields: always requested explicitly)',
});

export const sponsors = defineStream({
  name: 'sponsors',
  path: '/sponsors',
  scope: 'event',
  cursor: 'updated_at',
  fields: {
    id: 'bigint',
    event_id: 'bigint',
    name: 'text',
    website: 'text',
    description: 'text',
    logo_id: 'bigint',
    level: 'choice',
    webinar_url: 'text',
    video_url: 'text',
    notes: 'text',
    direct_link: 'text',
    ...RECORD_TIMES,
  },
  customFields: { definitions: 'sponsor_fields' },
  webhook: { object: 'sponsor' },
  verified: false,
  description: 'Sponsors of an event with their level (list path inferred from the single GET)',
});

export const sponsorFields = defineStream({
  name: 'sponsor_fields',
  path: '/sponsors/fields',
  scope: 'account',
  cursor: null,
  fields: FIELD_DEFINITION_FIELDS,
  verified: false,
  description: "Custom field definitions of sponsors (sponsors' c_<id> columns; path unverified)",
});

export const sponsorAttendance = defineStream({
  name: 'sponsor_attendance',
  path: '/sponsor-attendances',
  scope: 'event',
  cursor: null,
  fields: { id: 'bigint', sponsor_id: 'bigint', registrant_id: 'bigint', created_at: 'timestamp' },
  verified: false,
  description: 'Registrants met at sponsor booths (fields undocumented)',
});

export const contacts = defineStream({
  name: 'contacts',
  path: '/contacts',
  scope: 'account',
  cursor: 'updated_at',
  maxPerPage: 200,
  fields: {
    id: 'bigint',
    account_id: 'bigint',
    ...PERSON,
    work_phone: 'text',
    mobile_phone: 'text',
    cc_email: 'text',
    gender: 'choice',
    birth_date: 'date',
    bio: 'text',
    language: 'text',
    notes: 'text',
    profile_picture: 'text',
    twitter_handle: 'text',
    vat_number: 'text',
    subscribe_status: 'text',
    ...RECORD_TIMES,
  },
  expand: ADDRESS_EXPANSIONS,
  customFields: { definitions: 'contact_fields' },
  webhook: { object: 'contact' },
  verified: true,
  description: 'CRM contacts across all events of the account, plus c_<id> fields',
});

export const contactFields = defineStream({
  name: 'contact_fields',
  path: '/contacts/fields',
  scope: 'account',
  cursor: null,
  fields: FIELD_DEFINITION_FIELDS,
  verified: false,
  description: "Custom field definitions of contacts (contacts' c_<id> columns; path from client code)",
});
