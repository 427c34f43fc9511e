import type { FieldType } from './types.js';

/**
 * The fields of a custom-field definition record (event, session, sponsor and contact fields): what
 * `customFieldsFromDefinitions` reads to name `c_<id>` columns and choose their type.
 */
export const FIELD_DEFINITION_FIELDS = {
  id: 'bigint',
  name: 'text',
  type: 'text',
  created_at: 'timestamp',
  updated_at: 'timestamp',
} as const satisfies Record<string, FieldType>;

/** When a record was created and last changed: the last two fields of most streams (`updated_at` is the cursor). */
export const RECORD_TIMES = {
  created_at: 'timestamp',
  updated_at: 'timestamp',
} as const satisfies Record<string, FieldType>;
