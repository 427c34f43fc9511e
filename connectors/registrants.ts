import { ADDRESS_EXPANSIONS, NAMED_RECORD, PERSON, RECORD_TIMES } from './field-definitions.js';
import { defineStream } from './types.js';

/** Registrants and what they buy: types, packages, discount codes, transactions, line items, groups, audit log. */

const MONEY = 'decimal(12,2)';
const RATE = 'decimal(7,4)';

export const registrants = defineStream({
  name: 'registrants',
  path: '/registrants',
  scope: 'event',
  cursor: 'updated_at',
  fields: {
    id: 'bigint',
    event_id: 'bigint',
    contact_id: 'bigint',
    group_id: 'bigint',
    // A plain id on lists; single records send `{id, value}`, which the bigint converter also accepts.
    reg_type_id: 'bigint',
    package_id: 'bigint',
    discount_code: 'text',
    ...PERSON,
    work_phone: 'text',
    mobile_phone: 'text',
    profile_picture: 'text',
    twitter_handle: 'text',
    gender: 'choice',
    birth_date: 'date',
    cc_email: 'text',
    bio: 'text',
    vat_number: 'text',
    session_ids: 'bigint[]',
    waitlisted_session_ids: 'bigint[]',
    notes: 'text',
    reference: 'text',
    ip_address: 'text',
    individual_net: MONEY,
    individual_tax: MONEY,
    individual_tax_2: MONEY,
    individual_gross: MONEY,
    group_net: MONEY,
    group_tax: MONEY,
    group_tax_2: MONEY,
    group_gross: MONEY,
    group_paid: MONEY,
    // Sent as a number, unlike the other amounts: the decimal converter formats it without float noise.
    group_balance_due: MONEY,
    payment_method: 'text',
    payment_status: 'text',
    po_number: 'text',
    registration_status: 'text',
    language: 'text',
    timezone: 'text',
    ext_token: 'text',
    secure_id: 'text',
    registered_at: 'timestamp',
    cancelled_at: 'timestamp',
    checked_in_at: 'timestamp',
    ...RECORD_TIMES,
  },
  expand: { ...ADDRESS_EXPANSIONS, emailHistory: 'json' },
  customFields: { definitions: 'event_questions' },
  webhook: { object: 'registrant' },
  verified: true,
  description: 'Registrants of an event: status, selections, money, check-in, plus c_<id> answers',
});

export const registrantTypes = defineStream({
  name: 'registrant_types',
  path: '/reg-types',
  scope: 'event',
  cursor: 'updated_at',
  maxPerPage: 200,
  fields: {
    id: 'bigint',
    name: 'text',
    public_short_name: 'text',
    admin_short_name: 'text',
    description: 'text',
    capacity: 'integer',
    sold_out_message: 'text',
    min_group_size: 'integer',
    max_group_size: 'integer',
    ...RECORD_TIMES,
  },
  verified: true,
  description: 'Registrant types of an event (sparse default fields: always requested explicitly)',
});

export const packages = defineStream({
  name: 'packages',
  path: '/packages',
  scope: 'event',
  cursor: 'updated_at',
  // Only the default set (id, name, capacity) is documented; the rest is the minimum the cursor needs.
  fields: {
    id: 'bigint',
    name: 'text',
    capacity: 'integer',
    description: 'text',
    ...RECORD_TIMES,
  },
  verified: true,
  description: 'Packages of an event (soft-deleted ones are excluded by the API)',
});

export const discountCodes = defineStream({
  name: 'discount_codes',
  path: '/discounts',
  scope: 'event',
  cursor: 'updated_at',
  maxPerPage: 200,
  fields: {
    id: 'bigint',
    event_id: 'bigint',
    parent_id: 'bigint',
    code: 'text',
    type: 'text',
    absolute_discount: MONEY,
    percentage_discount: RATE,
    // Shapes undocumented (lists of items and fees): kept whole as JSON.
    applicable_line_items: 'json',
    custom_fees: 'json',
    apply_to_all: 'boolean',
    capacity: 'integer',
    min_group_size: 'integer',
    registrants_per_use: 'integer',
    all_registrants_in_group: 'boolean',
    visibility_id: 'bigint',
    is_sold_out: 'boolean',
    sold_out_message: 'text',
    notes: 'text',
    ...RECORD_TIMES,
  },
  expand: { alternates: 'json', autopopulate: 'json', registrantCount: 'json', reservedCount: 'json' },
  verified: true,
  description: 'Discount codes of an event (percentage or absolute, with capacity limits)',
});

export const transactions = defineStream({
  name: 'transactions',
  path: '/transactions',
  scope: 'event',
  cursor: 'updated_at',
  fields: {
    id: 'bigint',
    registrant_id: 'bigint',
    type: 'text',
    datetime: 'timestamp',
    status: 'text',
    // Negative for refunds.
    amount: MONEY,
    currency: 'text',
    card_type: 'text',
    // Text, not a number: leading zeros matter.
    card_number_last_4: 'text',
    name_on_card: 'text',
    notes: 'text',
    gateway_id: 'bigint',
    // The gateway's own reference, not one of our ids.
    gateway_transaction_id: 'text',
    order_number: 'text',
    payment_method_fee: MONEY,
    created_at: 'timestamp',
    created_by: 'text',
    updated_at: 'timestamp',
    updated_by: 'text',
  },
  verified: true,
  description: 'Payments and refunds of registrants (amount negative for refunds)',
});

export const registrantLineItems = defineStream({
  name: 'registrant_line_items',
  path: '/registrant-line-items',
  scope: 'event',
  cursor: null,
  fields: {
    id: 'bigint',
    registrant_id: 'bigint',
    group_id: 'bigint',
    // `reg_type`, `package`, `session` or `c_<questionId>`.
    object: 'text',
    object_id: 'bigint',
    question_id: 'bigint',
    quantity: 'integer',
    status: 'text',
    net: MONEY,
    tax: MONEY,
    tax_rate: RATE,
    gross: MONEY,
    full_price_net: MONEY,
    full_price_gross: MONEY,
    datetime: 'timestamp',
  },
  refreshByParent: { stream: 'registrants', key: 'registrant_id' },
  webhook: { object: 'registrant_line_item' },
  verified: true,
  description: 'What each registrant bought, line by line (no timestamps: snapshotted)',
});

export const registrantLineItemAudits = defineStream({
  name: 'registrant_line_item_audits',
  path: '/registrant-line-item-audits',
  scope: 'event',
  cursor: null,
  fields: { id: 'bigint', registrant_id: 'bigint', created_at: 'timestamp' },
  verified: false,
  description: 'Change history of registrant line items (fields undocumented)',
});

export const registrantGroups = defineStream({
  name: 'registrant_groups',
  path: '/registrant-groups',
  scope: 'event',
  cursor: null,
  fields: NAMED_RECORD,
  verified: false,
  description: 'Registrant groups of an event (fields undocumented)',
});

export const registrationAudit = defineStream({
  name: 'registration_audit',
  path: '/registrations/audit/sessions',
  scope: 'event',
  kind: 'audit',
  // Audit records have no id: a change is identified by who, what kind, and when.
  key: ['registrant_id', 'type', 'updated_at'],
  cursor: 'updated_at',
  fields: {
    registrant_id: 'bigint',
    group_id: 'bigint',
    full_name: 'text',
    email: 'text',
    // `session_ids` or `session_attendance`.
    type: 'text',
    // Comma-separated on the wire.
    session_ids: 'bigint[]',
    updated_at: 'timestamp',
  },
  verified: true,
  description: "Append-only log of changes to registrants' session selections and attendance (time windows)",
});
