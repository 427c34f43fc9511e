import { FIELD_DEFINITION_FIELDS, NAMED_RECORD, RECORD_TIMES } from './field-definitions.js';
import { defineStream } from './types.js';

/** Events and the event-level configuration around them (folders, questions, websites, pages, badges). */

export const events = defineStream({
  name: 'events',
  path: '/events',
  scope: 'account',
  cursor: 'updated_at',
  fields: {
    id: 'bigint',
    name: 'text',
    // Values such as `draft`, `live`: kept as text because the full set is undocumented.
    status: 'text',
    url: 'text',
    domain: 'text',
    hashtag: 'text',
    description: 'text',
    organizer_id: 'bigint',
    folder_id: 'bigint',
    type_id: 'bigint',
    start_date: 'date',
    end_date: 'date',
    start_time: 'time',
    end_time: 'time',
    close_date: 'date',
    close_time: 'time',
    timezone: 'text',
    capacity: 'integer',
    target_attendance: 'integer',
    free_event: 'boolean',
    webinar_url: 'text',
    created_at: 'timestamp',
    // `*_by` is a user reference of undocumented type: text holds an id as well as a name.
    created_by: 'text',
    updated_at: 'timestamp',
    updated_by: 'text',
  },
  expand: {
    folder: 'json',
    location: 'json',
    sessions: 'json',
    sponsors: 'json',
    speakers: 'json',
    translations: 'json',
  },
  webhook: { object: 'event' },
  verified: true,
  description: 'Events of the account (the scope of every event-level stream)',
});

export const eventFolders = defineStream({
  name: 'event_folders',
  path: '/event-folders',
  scope: 'account',
  cursor: null,
  fields: NAMED_RECORD,
  verified: false,
  description: 'Folders events are filed in (fields undocumented)',
});

export const eventFields = defineStream({
  name: 'event_fields',
  path: '/events/fields',
  scope: 'account',
  cursor: null,
  fields: FIELD_DEFINITION_FIELDS,
  verified: false,
  description: 'Custom field definitions of events (fields undocumented)',
});

export const eventQuestions = defineStream({
  name: 'event_questions',
  path: '/event-questions',
  scope: 'event',
  cursor: null,
  fields: {
    id: 'bigint',
    event_id: 'bigint',
    name: 'text',
    type: 'text',
    ...RECORD_TIMES,
  },
  verified: false,
  description: "Registration questions of an event: the definitions of registrants' c_<id> fields",
});

export const eventWebsites = defineStream({
  name: 'event_websites',
  path: '/websites',
  scope: 'event',
  cursor: null,
  fields: { id: 'bigint', name: 'text', url: 'text', created_at: 'timestamp', updated_at: 'timestamp' },
  verified: false,
  description: 'Websites of an event (fields undocumented)',
});

export const pages = defineStream({
  name: 'pages',
  path: '/pages',
  scope: 'event',
  cursor: null,
  fields: NAMED_RECORD,
  verified: false,
  description: 'Pages of the event websites (fields undocumented)',
});

export const eventBadges = defineStream({
  name: 'event_badges',
  path: '/badges',
  scope: 'event',
  cursor: null,
  fields: NAMED_RECORD,
  verified: false,
  description: 'Badge templates of an event (fields undocumented)',
});

export const invitationLists = defineStream({
  name: 'invitation_lists',
  path: '/invitation-lists',
  scope: 'event',
  cursor: null,
  fields: NAMED_RECORD,
  verified: false,
  description: 'Invitation lists of an event (fields undocumented)',
});
