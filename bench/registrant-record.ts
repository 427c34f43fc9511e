/**
 * A registrant record as the API sends it (every documented field, a choice, lists in both of their wire forms,
 * money as strings and a number, four custom fields), varied by `i`; `version` changes what an update changes.
 * For benchmarks that need many distinct records without a simulator (warehouse-load.ts).
 */
import { getStream, resolveStream } from '../connectors/index.js';
import type { ResolvedStream } from '../connectors/types.js';

export function registrantsStream(): ResolvedStream {
  return resolveStream(getStream('registrants'), {
    customFields: [
      { name: 'c_101', label: 'Company size', type: 'text' },
      { name: 'c_102', label: 'Diet', type: 'json' },
      { name: 'c_103', label: 'Notes', type: 'text' },
      { name: 'c_104', label: 'Newsletter', type: 'text' },
    ],
  });
}

const pad = (n: number) => String(n).padStart(2, '0');
const ts = (d: number) =>
  `2024-${pad(1 + (d % 12))}-${pad(1 + (d % 28))} ${pad(d % 24)}:${pad(d % 60)}:${pad((d * 7) % 60)}`;
const money = (n: number) => (n / 100).toFixed(2);

export function registrantRecord(i: number, version = 0): Record<string, unknown> {
  return {
    id: i,
    event_id: 100 + (i % 20),
    contact_id: 5_000_000 + i,
    group_id: i % 3 === 0 ? 900_000 + i : null,
    reg_type_id: 10 + (i % 4),
    package_id: i % 2 === 0 ? 20 + (i % 3) : '',
    discount_code: i % 10 === 0 ? 'EARLY' : '',
    email: `person${i}@example.org`,
    prefix: 'Dr.',
    first_name: `First${i}`,
    middle_name: '',
    last_name: `Last${i}`,
    suffix: '',
    company: `Company ${i % 1000}`,
    job_title: 'Engineer',
    work_phone: '+1 555 0100',
    mobile_phone: '',
    profile_picture: '',
    twitter_handle: `@p${i}`,
    gender: i % 2 === 0 ? { id: 1, value: 'Female' } : { id: 2, value: 'Male' },
    birth_date: `19${50 + (i % 50)}-0${1 + (i % 9)}-1${i % 9}`,
    cc_email: '',
    bio: 'A short bio of a few words that is not very long at all.',
    vat_number: '',
    session_ids: i % 2 === 0 ? `${i % 100},${(i + 1) % 100},${(i + 2) % 100}` : [i % 100, (i + 5) % 100],
    waitlisted_session_ids: '',
    notes: version ? `updated ${version}` : '',
    reference: `REF-${i}`,
    ip_address: '192.0.2.1',
    individual_net: money(10000 + i + version),
    individual_tax: money(1900),
    individual_tax_2: '0.00',
    individual_gross: money(11900 + i + version),
    group_net: money(10000 + i),
    group_tax: money(1900),
    group_tax_2: '0.00',
    group_gross: money(11900 + i),
    group_paid: i % 7 === 0 ? '-166.00' : money(11900 + i),
    group_balance_due: i % 7 === 0 ? 166 : 0,
    payment_method: 'card',
    payment_status: 'paid',
    po_number: '',
    registration_status: i % 9 === 0 ? 'cancelled' : 'confirmed',
    language: 'en',
    timezone: 'Europe/Berlin',
    ext_token: `tok${i}`,
    secure_id: `sec${i}`,
    registered_at: ts(i),
    cancelled_at: i % 9 === 0 ? ts(i + 3) : null,
    checked_in_at: i % 4 === 0 ? ts(i + 5) : '',
    created_at: ts(i),
    updated_at: ts(i + 1 + version * 86_400),
    c_101: `answer ${i}`,
    c_102: [{ id: 7, value: 'Vegan' }],
    c_103: '',
    c_104: i % 2 === 0 ? 'yes' : 'no',
  };
}
