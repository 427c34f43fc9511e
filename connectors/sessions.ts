import { FIELD_DEFINITION_FIELDS, NAMED_RECORD, RECORD_TIMES } from './field-definitions.js';
import { defineStream } from './types.js';

/** Sessions and what hangs off them: custom field definitions, waitlists, attendance, scans, locations, tracks. */

export const sessions = defineStream({
  name: 'sessions',
  path: '/sessions',
  scope: 'event',
  cursor: 'updated_at',
  fields: {
    id: 'bigint',
    event_id: 'bigint',
    name: 'text',
    admin_short_name: 'text',
    badge_name: 'text',
    description: 'text',
    date: 'date',
    start_time: 'time',
    end_time: 'time',
    timezone: 'text',
    use_event_timezone: 'boolean',
    capacity: 'integer',
    notes: 'text',
    location_id: 'bigint',
    track_id: 'bigint',
    type_id: 'bigint',
    session_status: 'text',
    session_included: 'boolean',
    webinar_url: 'text',
    direct_link: 'text',
    virtual_link: 'text',
    ...RECORD_TIMES,
  },
  expand: { speakers: 'json', location: 'json', track: 'json' },
  customFields: { definitions: 'session_fields' },
  webhook: { object: 'session' },
  verified: true,
  description: 'Sessions of an event: schedule, capacity, location, track, plus c_<id> fields',
});

export const sessionFields = defineStream({
  name: 'session_fields',
  path: '/sessions/fields',
  scope: 'account',
  cursor: null,
  fields: FIELD_DEFINITION_FIELDS,
  verified: true,
  description: "Custom field definitions of sessions (sessions' c_<id> columns)",
});

export const sessionWaitlists = defineStream({
  name: 'session_waitlists',
  path: '/session-waitlists',
  scope: 'event',
  cursor: null,
  fields: { id: 'bigint', session_id: 'bigint', registrant_id: 'bigint', created_at: 'timestamp' },
  verified: false,
  description: 'Registrants waiting for a place in a session (fields undocumented)',
});

export const sessionAttendance = defineStream({
  name: 'session_attendance',
  path: '/session-attendances',
  scope: 'event',
  cursor: null,
  fields: {
    id: 'bigint',
    session_id: 'bigint',
    registrant_id: 'bigint',
    // Named `*_date` but they record moments (a duration is derived from them): timestamps, which also accept a
    // bare date.
    waiting_room_date: 'timestamp',
    check_in_date: 'timestamp',
    check_out_date: 'timestamp',
    // Unit undocumented and possibly fractional.
    duration: 'double',
    on_demand_date: 'timestamp',
  },
  webhook: { object: 'session_attendance' },
  verified: false,
  description: 'Session check-in/check-out records (list path inferred from the create call)',
});

export const sessionScans = defineStream({
  name: 'session_scans',
  path: '/scans/sessions',
  scope: 'event',
  cursor: 'created_at',
  fields: {
    id: 'bigint',
    event_id: 'bigint',
    registrant_id: 'bigint',
    // Always `session`.
    type: 'text',
    // The scanned session's id.
    scan_id: 'bigint',
    created_by: 'text',
    created_at: 'timestamp',
  },
  verified: false,
  description: 'Badge scans at session doors (path from client code; append-only, cursor created_at)',
});

export const sessionLocations = defineStream({
  name: 'session_locations',
  path: '/locations',
  scope: 'event',
  cursor: null,
  fields: NAMED_RECORD,
  verified: false,
  description: 'Rooms and places sessions are held in (fields undocumented)',
});

export const tracks = defineStream({
  name: 'tracks',
  path: '/tracks',
  scope: 'event',
  cursor: null,
  fields: NAMED_RECORD,
  verified: false,
  description: 'Session tracks of an event (fields undocumented)',
});
