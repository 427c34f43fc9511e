import { NAMED_RECORD } from './field-definitions.js';
import { defineStream } from './types.js';

/** Account-level plumbing: webhooks and their groups, data lists and their items. */

export const webhooks = defineStream({
  name: 'webhooks',
  path: '/webhooks',
  scope: 'account',
  cursor: 'updated_at',
  fields: {
    id: 'bigint',
    name: 'text',
    url: 'text',
    content_type: 'text',
    post_field_data: 'text',
    use_default_fields: 'boolean',
    custom_fields: 'json',
    notes: 'text',
    group_id: 'bigint',
    // `[{key, value}]`.
    headers: 'json',
    enabled: 'boolean',
    trigger_object: 'text',
    trigger_on_insert: 'boolean',
    trigger_on_update: 'boolean',
    trigger_on_delete: 'boolean',
    // What a delivery's record holds: everything, or the names in `fields`.
    all_fields: 'boolean',
    fields: 'json',
    // Which initiators fire the webhook.
    public_user: 'boolean',
    admin_user: 'boolean',
    api_call: 'boolean',
    any_event: 'boolean',
    event_ids: 'bigint[]',
    created_at: 'timestamp',
    created_by: 'text',
    updated_at: 'timestamp',
    updated_by: 'text',
  },
  secretValues: ['headers'],
  verified: true,
  description: 'Webhooks configured on the account',
});

export const webhookGroups = defineStream({
  name: 'webhook_groups',
  path: '/webhook-groups',
  scope: 'account',
  cursor: 'updated_at',
  fields: {
    id: 'bigint',
    name: 'text',
    headers: 'json',
    // A list of addresses whose wire shape is undocumented (array or string): JSON keeps either.
    notification_emails: 'json',
    created_at: 'timestamp',
    created_by: 'text',
    updated_at: 'timestamp',
    updated_by: 'text',
  },
  secretValues: ['headers'],
  verified: false,
  description: 'Webhook groups: shared headers and failure notification addresses (path unverified)',
});

export const dataLists = defineStream({
  name: 'data_lists',
  path: '/data-lists',
  scope: 'account',
  cursor: null,
  fields: NAMED_RECORD,
  verified: false,
  description: 'Data lists (option lists reused by questions; fields undocumented)',
});

export const dataListItems = defineStream({
  name: 'data_list_items',
  path: '/data-lists/{data_list_id}/items',
  scope: { parent: 'data_lists', param: 'data_list_id', column: 'data_list_id' },
  cursor: null,
  fields: { id: 'bigint', name: 'text', value: 'text', created_at: 'timestamp', updated_at: 'timestamp' },
  verified: false,
  description: 'Items of each data list (listed per list; fields undocumented)',
});
