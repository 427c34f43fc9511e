/**
 * Throughput of record normalization on realistic registrants (every documented field, three expanded addresses
 * off, four custom fields). Not a test: run `npx tsx test/unit/normalize-throughput.ts [count]`.
 * Compares the compiled normalizer with a zod parse of the generated record schema, per record.
 */
import { z } from 'zod';
import { getStream, resolveStream } from '../../connectors/index.js';
import { createNormalizer } from '../../schemas/normalize.js';
import { recordSchema } from '../../schemas/records.js';
import { makeSecretScrubber } from '../../schemas/secrets.js';

export function realisticRegistrant(i: number): Record<string, unknown> {
  const pad = (n: number) => String(n).padStart(2, '0');
  const ts = (d: number) =>
    `2024-${pad(1 + (d % 12))}-${pad(1 + (d % 28))} ${pad(d % 24)}:${pad(d % 60)}:${pad((d * 7) % 60)}`;
  const money = (n: number) => (n / 100).toFixed(2);
  return {
    id: 1_000_000 + i,
    event_id: 100 + (i % 5),
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
    twitter_handle: '@p' + i,
    gender: i % 2 === 0 ? { id: 1, value: 'Female' } : { id: 2, value: 'Male' },
    birth_date: `19${50 + (i % 50)}-0${1 + (i % 9)}-1${i % 9}`,
    cc_email: '',
    bio: 'A short bio of a few words that is not very long at all.',
    vat_number: '',
    session_ids: i % 2 === 0 ? `${i % 100},${(i + 1) % 100},${(i + 2) % 100}` : [i % 100, (i + 5) % 100],
    waitlisted_session_ids: '',
    notes: '',
    reference: `REF-${i}`,
    ip_address: '192.0.2.1',
    individual_net: money(10000 + i),
    individual_tax: money(1900),
    individual_tax_2: '0.00',
    individual_gross: money(11900 + i),
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
    updated_at: ts(i + 1),
    c_101: `answer ${i}`,
    c_102: [{ id: 7, value: 'Vegan' }],
    c_103: '',
    c_104: i % 2 === 0 ? 'yes' : 'no',
  };
}

export function registrantsForBench() {
  return resolveStream(getStream('registrants'), {
    customFields: [
      { name: 'c_101', label: 'Company size', type: 'text' },
      { name: 'c_102', label: 'Diet', type: 'json' },
      { name: 'c_103', label: 'Notes', type: 'text' },
      { name: 'c_104', label: 'Newsletter', type: 'text' },
    ],
  });
}

function measure(label: string, records: readonly unknown[], fn: (r: unknown) => boolean): number {
  // Warm up the JIT on a slice first so the timed loop measures steady state.
  for (let i = 0; i < Math.min(records.length, 20_000); i++) fn(records[i]);
  const t0 = process.hrtime.bigint();
  let ok = 0;
  for (const r of records) if (fn(r)) ok++;
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const rate = records.length / seconds;
  console.log(`${label.padEnd(44)} ${Math.round(rate).toLocaleString('en-US').padStart(11)} records/s (${ok} ok)`);
  return rate;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const count = Number(process.argv[2] ?? 100_000);
  const stream = registrantsForBench();
  // Records as a page parse delivers them.
  const records = JSON.parse(JSON.stringify(Array.from({ length: count }, (_, i) => realisticRegistrant(i))));
  const normalizer = createNormalizer(stream);
  const schema = recordSchema(stream);
  const structure = z.looseObject({ id: z.union([z.number(), z.string()]) });
  console.log(`${count} registrants, ${normalizer.columns.length} columns, Node ${process.version}`);
  measure('compiled normalizer (createNormalizer)', records, (r) => normalizer.normalize(r).ok);
  // What a run holds: a client secret, its two encodings, the Basic string, the current and a previous token.
  const secret = 'Zk3q9TqL0vX2mB7nR4sW8yC1dF6gH5jA';
  const held = [secret, `${secret}%2F`, `${secret}+`, Buffer.from(`key:${secret}`).toString('base64')];
  held.push('4f9a0c1e7b3d2a6f8e5c9b1a0d3f7e2c4b6a8d0e1f3a5c7b', '0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7');
  const scrubbing = createNormalizer(stream, { scrub: makeSecretScrubber(() => held) });
  measure('  with the secret scrubber (6 secrets)', records, (r) => scrubbing.normalize(r).ok);
  // The real service adds `_links` to items: every record then takes the undeclared-field scan.
  const linked = JSON.parse(
    JSON.stringify(records.map((r: object) => ({ ...r, _links: { self: { href: '/v1/x' } } }))),
  );
  measure('  records with _links (undeclared-field scan)', linked, (r) => normalizer.normalize(r).ok);
  measure('zod record schema (recordSchema.safeParse)', records, (r) => schema.safeParse(r).success);
  measure('zod structure only (looseObject{id})', records, (r) => structure.safeParse(r).success);
  // Reference: what parsing the API's pages costs per record (1000 records per page).
  const page = JSON.stringify(records.slice(0, 1000));
  const pages = Array.from({ length: Math.max(1, Math.floor(count / 10_000)) });
  const pageRate = measure('JSON.parse of 1000-record pages (pages/s)', pages, () => JSON.parse(page) !== null);
  console.log(
    `${'  = records/s delivered by parsing alone'.padEnd(44)} ${Math.round(pageRate * 1000)
      .toLocaleString('en-US')
      .padStart(11)}`,
  );
}
