import { RECORD_TIMES } from './field-definitions.js';
import { defineStream } from './types.js';

/** Call for speakers: the contacts who answer it, their submissions and the reviews of those. */

export const cfsContacts = defineStream({
  name: 'cfs_contacts',
  path: '/cfs-contacts',
  scope: 'event',
  cursor: 'updated_at',
  fields: {
    id: 'bigint',
    email: 'text',
    first_name: 'text',
    last_name: 'text',
    ...RECORD_TIMES,
  },
  verified: true,
  description: 'Call-for-speakers contacts of an event (record fields undocumented)',
});

export const cfsSubmissions = defineStream({
  name: 'cfs_submissions',
  path: '/cfs-submissions',
  scope: 'event',
  cursor: 'updated_at',
  // A submission is a talk proposal: its name may come as `title` instead of `name`, so both are requested.
  fields: { id: 'bigint', name: 'text', title: 'text', created_at: 'timestamp', updated_at: 'timestamp' },
  verified: false,
  description: 'Call-for-speakers submissions (fields undocumented)',
});

export const cfsReviews = defineStream({
  name: 'cfs_reviews',
  path: '/cfs-reviews',
  scope: 'event',
  cursor: 'updated_at',
  fields: { id: 'bigint', created_at: 'timestamp', updated_at: 'timestamp' },
  verified: false,
  description: 'Reviews of call-for-speakers submissions (fields undocumented)',
});
