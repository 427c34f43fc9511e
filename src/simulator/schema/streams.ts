import { type FieldKind, fieldList } from './kinds.js';

/**
 * The simulator's own route table for list streams, written from the spec and the facts page (never imported from
 * connectors/: tests of the client against the simulator must not check the client's assumptions against
 * themselves).
 */

export type ScopeKind = 'account' | 'event' | 'dataList';

/** Where a stream's custom field (`c_<id>`) definitions live. */
export type CustomSource = 'event_questions' | 'session_fields' | 'contact_fields' | 'sponsor_fields';

export interface StreamSpec {
  readonly name: string;
  /** Path under /v1; `{data_list_id}` for the data-list scope. */
  readonly path: string;
  readonly scope: ScopeKind;
  /** Page maximum without expand (with expand the cap is min(cap, 200)). */
  readonly cap: number;
  readonly cursor: string | null;
  /** False only for the audit log, whose records have no id. */
  readonly hasId: boolean;
  /** All fields in the order records carry them. */
  readonly fields: Readonly<Record<string, FieldKind>>;
  /** Returned when `fields` is absent. Sparse on purpose (facts page): clients must ask for what they need. */
  readonly defaults: readonly string[];
  /** Allowed `expand` values. Anything else is a 400. */
  readonly expand: readonly string[];
  readonly custom?: CustomSource;
  /** Whether `GET <path>/{id}` answers a single record. */
  readonly single: boolean;
  /** Whether background mutations update records (streams without updated_at change by insert/delete only). */
  readonly updatable: boolean;
}

const DEF_FIELDS = fieldList('id:int name type choices:json required:bool sort_order:int');

function spec(s: Omit<StreamSpec, 'hasId' | 'single' | 'updatable' | 'expand'> & Partial<StreamSpec>): StreamSpec {
  return {
    hasId: true,
    single: false,
    expand: [],
    updatable: 'updated_at' in s.fields,
    ...s,
  };
}

/** A list of custom field definitions: account-wide, no cursor, id, name and type by default. */
function definitionsSpec(name: string, path: string): StreamSpec {
  return spec({
    name,
    path,
    scope: 'account',
    cap: 1000,
    cursor: null,
    fields: DEF_FIELDS,
    defaults: ['id', 'name', 'type'],
  });
}

export const STREAMS: readonly StreamSpec[] = [
  spec({
    name: 'events',
    path: '/events',
    scope: 'account',
    cap: 1000,
    cursor: 'updated_at',
    single: true,
    fields: fieldList(
      'id:int name status url domain hashtag description organizer_id:int folder_id:int type_id:int ' +
        'start_date:date end_date:date start_time:time end_time:time close_date:date close_time:time timezone ' +
        'capacity:int target_attendance:int free_event:bool apply_to_attend:bool webinar_url ' +
        'created_at:ts created_by:int updated_at:ts updated_by:int',
    ),
    defaults: ['id', 'name', 'status', 'start_date', 'end_date', 'timezone'],
    expand: ['folder', 'location', 'sessions', 'sponsors', 'speakers', 'translations'],
  }),
  spec({
    name: 'contacts',
    path: '/contacts',
    scope: 'account',
    cap: 200,
    cursor: 'updated_at',
    single: true,
    fields: fieldList(
      'id:int account_id:int prefix first_name middle_name last_name suffix email cc_email company job_title ' +
        'work_phone mobile_phone gender:choice birth_date:date language bio notes profile_picture ' +
        'twitter_handle vat_number subscribe_status created_at:ts updated_at:ts',
    ),
    defaults: ['id', 'first_name', 'last_name'],
    expand: ['homeAddress', 'workAddress', 'billingAddress'],
    custom: 'contact_fields',
  }),
  spec({
    name: 'webhooks',
    path: '/webhooks',
    scope: 'account',
    cap: 1000,
    cursor: 'updated_at',
    single: true,
    // The real webhook object's fields (GET /webhooks); what each one does is in webhooks/service.ts.
    fields: fieldList(
      'id:int name url content_type post_field_data use_default_fields:bool custom_fields:json notes ' +
        'trigger_object trigger_on_insert:bool trigger_on_update:bool trigger_on_delete:bool all_fields:bool ' +
        'fields:json public_user:bool admin_user:bool api_call:bool any_event:bool event_ids:ints group_id:int ' +
        'headers:json enabled:bool created_at:ts created_by:int updated_at:ts updated_by:int',
    ),
    defaults: ['id', 'name', 'url', 'trigger_object', 'enabled'],
  }),
  spec({
    name: 'webhook_groups',
    path: '/webhook-groups',
    scope: 'account',
    cap: 1000,
    cursor: 'updated_at',
    single: true,
    fields: fieldList(
      'id:int name headers:json notification_emails:json created_at:ts created_by:int updated_at:ts updated_by:int',
    ),
    defaults: ['id', 'name'],
  }),
  spec({
    name: 'event_folders',
    path: '/event-folders',
    scope: 'account',
    cap: 1000,
    cursor: null,
    fields: fieldList('id:int name parent_id:int sort_order:int'),
    defaults: ['id', 'name'],
  }),
  definitionsSpec('contact_fields', '/contacts/fields'),
  definitionsSpec('session_fields', '/sessions/fields'),
  definitionsSpec('sponsor_fields', '/sponsors/fields'),
  definitionsSpec('event_fields', '/events/fields'),
  spec({
    name: 'data_lists',
    path: '/data-lists',
    scope: 'account',
    cap: 1000,
    cursor: null,
    fields: fieldList('id:int name description'),
    defaults: ['id', 'name'],
  }),
  spec({
    name: 'data_list_items',
    path: '/data-lists/{data_list_id}/items',
    scope: 'dataList',
    cap: 1000,
    cursor: null,
    fields: fieldList('id:int data_list_id:int value sort_order:int'),
    defaults: ['id', 'value'],
  }),
  spec({
    name: 'invitation_lists',
    path: '/invitation-lists',
    scope: 'event',
    cap: 1000,
    cursor: null,
    fields: fieldList('id:int event_id:int name invitee_count:int'),
    defaults: ['id', 'name'],
  }),
  spec({
    name: 'registrants',
    path: '/registrants',
    scope: 'event',
    cap: 1000,
    cursor: 'updated_at',
    single: true,
    fields: fieldList(
      'id:int event_id:int contact_id:int group_id:int reg_type_id:int package_id:int discount_code email prefix ' +
        'first_name middle_name last_name suffix company job_title work_phone mobile_phone profile_picture ' +
        'twitter_handle gender:choice birth_date:date cc_email bio vat_number session_ids:ints ' +
        'waitlisted_session_ids:ints notes reference ip_address individual_net:money individual_tax:money ' +
        'individual_tax_2:money individual_gross:money group_net:money group_tax:money group_tax_2:money ' +
        'group_gross:money group_paid:money group_balance_due:num payment_method payment_status po_number ' +
        'registration_status language timezone ext_token secure_id registered_at:ts cancelled_at:ts ' +
        'checked_in_at:ts created_at:ts updated_at:ts',
    ),
    defaults: ['id', 'first_name', 'last_name', 'email', 'registration_status'],
    expand: ['homeAddress', 'workAddress', 'billingAddress', 'emailHistory'],
    custom: 'event_questions',
  }),
  spec({
    name: 'sessions',
    path: '/sessions',
    scope: 'event',
    cap: 1000,
    cursor: 'updated_at',
    single: true,
    fields: fieldList(
      'id:int event_id:int name admin_short_name badge_name description date:date start_time:time end_time:time ' +
        'timezone use_event_timezone:bool capacity:int notes location_id:int track_id:int type_id:int ' +
        'session_status session_included:bool webinar_url direct_link virtual_link created_at:ts updated_at:ts',
    ),
    defaults: ['id', 'name', 'date', 'start_time', 'end_time'],
    expand: ['speakers', 'location', 'track'],
    custom: 'session_fields',
  }),
  spec({
    name: 'speakers',
    path: '/speakers',
    scope: 'event',
    cap: 1000,
    cursor: 'updated_at',
    single: true,
    fields: fieldList(
      'id:int event_id:int contact_id:int email prefix first_name middle_name last_name suffix company job_title ' +
        'bio gender:choice profile_picture twitter_handle cfs_speaker:bool event_sort:int direct_link ' +
        'created_at:ts updated_at:ts',
    ),
    defaults: ['id', 'first_name', 'last_name'],
    expand: ['sessions'],
  }),
  spec({
    name: 'sponsors',
    path: '/sponsors',
    scope: 'event',
    cap: 1000,
    cursor: 'updated_at',
    single: true,
    fields: fieldList(
      'id:int event_id:int name website description logo_id:int level:choice webinar_url video_url notes ' +
        'direct_link created_at:ts updated_at:ts',
    ),
    defaults: ['id', 'name', 'level'],
    custom: 'sponsor_fields',
  }),
  spec({
    name: 'registrant_types',
    path: '/reg-types',
    scope: 'event',
    cap: 200,
    cursor: 'updated_at',
    fields: fieldList(
      'id:int name public_short_name admin_short_name description capacity:int sold_out_message ' +
        'min_group_size:int max_group_size:int created_at:ts updated_at:ts',
    ),
    defaults: ['id', 'name'],
  }),
  spec({
    name: 'packages',
    path: '/packages',
    scope: 'event',
    cap: 1000,
    cursor: 'updated_at',
    fields: fieldList(
      'id:int event_id:int name description capacity:int price:money sold_out_message sort_order:int ' +
        'created_at:ts updated_at:ts',
    ),
    defaults: ['id', 'name', 'capacity'],
  }),
  spec({
    name: 'discount_codes',
    path: '/discounts',
    scope: 'event',
    cap: 200,
    cursor: 'updated_at',
    fields: fieldList(
      'id:int event_id:int parent_id:int code type notes absolute_discount:money percentage_discount:money ' +
        'apply_to_all:bool01 applicable_line_items:json custom_fees:json capacity:int sold_out_message ' +
        'min_group_size:int registrants_per_use:int all_registrants_in_group:bool01 visibility_id:int ' +
        'is_sold_out:bool01 created_at:ts updated_at:ts',
    ),
    defaults: ['id', 'code', 'type'],
    expand: ['alternates', 'autopopulate', 'registrantCount', 'reservedCount'],
  }),
  spec({
    name: 'transactions',
    path: '/transactions',
    scope: 'event',
    cap: 1000,
    cursor: 'updated_at',
    fields: fieldList(
      'id:int registrant_id:int type datetime:ts status amount:money currency card_type card_number_last_4 ' +
        'name_on_card notes gateway_id:int gateway_transaction_id order_number payment_method_fee:money ' +
        'created_at:ts created_by:int updated_at:ts updated_by:int',
    ),
    defaults: ['id', 'registrant_id', 'type', 'amount'],
  }),
  spec({
    name: 'registrant_line_items',
    path: '/registrant-line-items',
    scope: 'event',
    cap: 1000,
    cursor: null,
    fields: fieldList(
      'id:int registrant_id:int group_id:int object object_id:int question_id:int quantity:int status ' +
        'net:money tax:money tax_rate:money gross:money full_price_net:money full_price_gross:money datetime:ts',
    ),
    defaults: ['id', 'registrant_id', 'object', 'gross'],
  }),
  spec({
    name: 'registrant_line_item_audits',
    path: '/registrant-line-item-audits',
    scope: 'event',
    cap: 1000,
    cursor: null,
    fields: fieldList(
      'id:int registrant_line_item_id:int registrant_id:int action quantity:int status net:money gross:money ' +
        'user_id:int datetime:ts',
    ),
    defaults: ['id', 'registrant_line_item_id', 'action'],
  }),
  spec({
    name: 'registrant_groups',
    path: '/registrant-groups',
    scope: 'event',
    cap: 1000,
    cursor: null,
    fields: fieldList(
      'id:int event_id:int name primary_registrant_id:int group_size:int group_gross:money group_paid:money',
    ),
    defaults: ['id', 'name'],
  }),
  spec({
    name: 'session_waitlists',
    path: '/session-waitlists',
    scope: 'event',
    cap: 1000,
    cursor: null,
    fields: fieldList('id:int session_id:int registrant_id:int position:int created_at:ts'),
    defaults: ['id', 'session_id', 'registrant_id'],
  }),
  spec({
    name: 'session_attendance',
    path: '/session-attendances',
    scope: 'event',
    cap: 1000,
    cursor: null,
    fields: fieldList(
      'id:int session_id:int registrant_id:int waiting_room_date:ts check_in_date:ts check_out_date:ts ' +
        'duration:int on_demand_date:ts',
    ),
    defaults: ['id', 'session_id', 'registrant_id'],
  }),
  spec({
    name: 'session_scans',
    path: '/scans/sessions',
    scope: 'event',
    cap: 1000,
    cursor: 'created_at',
    fields: fieldList('id:int event_id:int registrant_id:int type scan_id:int created_by:int created_at:ts'),
    defaults: ['id', 'registrant_id', 'scan_id'],
  }),
  spec({
    name: 'session_locations',
    path: '/locations',
    scope: 'event',
    cap: 1000,
    cursor: null,
    fields: fieldList('id:int event_id:int name building floor capacity:int description'),
    defaults: ['id', 'name'],
  }),
  spec({
    name: 'tracks',
    path: '/tracks',
    scope: 'event',
    cap: 1000,
    cursor: null,
    fields: fieldList('id:int event_id:int name color description sort_order:int'),
    defaults: ['id', 'name'],
  }),
  spec({
    name: 'event_questions',
    path: '/event-questions',
    scope: 'event',
    cap: 1000,
    cursor: null,
    fields: fieldList('id:int event_id:int name type choices:json required:bool sort_order:int'),
    defaults: ['id', 'name', 'type'],
  }),
  spec({
    name: 'event_websites',
    path: '/websites',
    scope: 'event',
    cap: 1000,
    cursor: null,
    fields: fieldList('id:int event_id:int name url status is_default:bool'),
    defaults: ['id', 'name'],
  }),
  spec({
    name: 'pages',
    path: '/pages',
    scope: 'event',
    cap: 1000,
    cursor: null,
    fields: fieldList('id:int event_id:int website_id:int name slug type status sort_order:int'),
    defaults: ['id', 'name'],
  }),
  spec({
    name: 'event_badges',
    path: '/badges',
    scope: 'event',
    cap: 1000,
    cursor: null,
    fields: fieldList('id:int event_id:int name type width:num height:num'),
    defaults: ['id', 'name'],
  }),
  spec({
    name: 'sponsor_attendance',
    path: '/sponsor-attendances',
    scope: 'event',
    cap: 1000,
    cursor: null,
    fields: fieldList('id:int sponsor_id:int registrant_id:int scanned_at:ts notes'),
    defaults: ['id', 'sponsor_id', 'registrant_id'],
  }),
  spec({
    name: 'cfs_contacts',
    path: '/cfs-contacts',
    scope: 'event',
    cap: 1000,
    cursor: 'updated_at',
    fields: fieldList('id:int event_id:int email first_name last_name company job_title created_at:ts updated_at:ts'),
    defaults: ['id', 'first_name', 'last_name'],
  }),
  spec({
    name: 'cfs_submissions',
    path: '/cfs-submissions',
    scope: 'event',
    cap: 1000,
    cursor: 'updated_at',
    fields: fieldList(
      'id:int event_id:int cfs_contact_id:int title abstract status track_id:int created_at:ts updated_at:ts',
    ),
    defaults: ['id', 'title', 'status'],
  }),
  spec({
    name: 'cfs_reviews',
    path: '/cfs-reviews',
    scope: 'event',
    cap: 1000,
    cursor: 'updated_at',
    fields: fieldList(
      'id:int event_id:int cfs_submission_id:int reviewer_email score:int comments created_at:ts updated_at:ts',
    ),
    defaults: ['id', 'cfs_submission_id', 'score'],
  }),
  spec({
    name: 'registration_audit',
    path: '/registrations/audit/sessions',
    scope: 'event',
    cap: 1000,
    cursor: null,
    hasId: false,
    updatable: false,
    fields: fieldList('registrant_id:int group_id:int full_name email type session_ids updated_at:ts'),
    defaults: ['registrant_id', 'type', 'session_ids'],
  }),
];

export const STREAM_BY_NAME: ReadonlyMap<string, StreamSpec> = new Map(STREAMS.map((s) => [s.name, s]));

export function streamSpec(name: string): StreamSpec {
  const s = STREAM_BY_NAME.get(name);
  if (!s) throw new Error(`unknown stream: ${name}`);
  return s;
}
