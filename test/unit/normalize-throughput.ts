/**
 * Throughput of record normalization on realistic registrants (every documented field, three expanded addresses
 * off, four custom fields). Not a test: run `npx tsx test/unit/normalize-throughput.ts [count]`.
 * Compares the compiled normalizer with a zod parse of the generated record schema, per record.
 */
import { z } from 'zod';
import { registrantRecord, registrantsStream } from '../../bench/registrant-record.js';
import { createNormalizer } from '../../normalizer/normalize.js';
import { recordSchema } from '../../normalizer/records.js';
import { makeSecretScrubber } from '../../normalizer/secrets.js';

/**
 * The bench's registrant (bench/registrant-record.ts) with ids from 1,000,000 and five events, as these tests
 * and the numbers in normalizer/normalize.ts have always used.
 */
export function realisticRegistrant(i: number): Record<string, unknown> {
  return { ...registrantRecord(i), id: 1_000_000 + i, event_id: 100 + (i % 5) };
}

export function registrantsForBench() {
  return registrantsStream();
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
