import type { FieldType } from './types.js';

/** A named group of fields that stream definitions spread (in the group's order: it is the column order). */
function fieldGroup<const T extends Record<string, FieldType>>(fields: T): T {
  return fields;
}

/** When a record was created and last changed: the last two fields of most streams (`updated_at` is the cursor). */
export const RECORD_TIMES = fieldGroup({ created_at: 'timestamp', updated_at: 'timestamp' });

/**
 * The fields of a custom-field definition record (event, session, sponsor and contact fields): what
 * `customFieldsFromDefinitions` reads to name `c_<id>` columns and choose their type.
 */
export const FIELD_DEFINITION_FIELDS = fieldGroup({ id: 'bigint', name: 'text', type: 'text', ...RECORD_TIMES });

/** A record known only by its name (the facts page documents no more of it): its id, name and record times. */
export const NAMED_RECORD = fieldGroup({ id: 'bigint', name: 'text', ...RECORD_TIMES });

/** Who a person is, in the order the person streams (speakers, contacts, registrants) list it. */
export const PERSON = fieldGroup({
  email: 'text',
  prefix: 'text',
  first_name: 'text',
  middle_name: 'text',
  last_name: 'text',
  suffix: 'text',
  company: 'text',
  job_title: 'text',
});

/** The address objects a person stream can expand (each lands in prefixed columns, see `FieldType`). */
export const ADDRESS_EXPANSIONS = fieldGroup({
  homeAddress: 'address',
  workAddress: 'address',
  billingAddress: 'address',
});
