import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { catalogue, getStream, resolveStream } from '../../connectors/index.js';
import { createNormalizer } from '../../normalizer/normalize.js';
import { catalogueRecordSchemas, recordSchema } from '../../normalizer/records.js';
import { realisticRegistrant, registrantsForBench } from './normalize-throughput.js';

describe('zod record schemas', () => {
  it('exist for every catalogue stream', () => {
    const schemas = catalogueRecordSchemas();
    expect([...schemas.keys()]).toEqual(catalogue.map((s) => s.name));
  });

  it('parse a realistic registrant into the same row as the normalizer', () => {
    const stream = registrantsForBench();
    const raw = JSON.parse(JSON.stringify(realisticRegistrant(3)));
    const parsed = recordSchema(stream).safeParse(raw);
    expect(parsed.success).toBe(true);
    const normalized = createNormalizer(stream).normalize(raw);
    expect(normalized.ok && normalized.row).toEqual(parsed.data);
  });

  it('reject with the field named, tolerate unknown fields, require the key', () => {
    const schema = recordSchema(resolveStream(getStream('transactions')));
    expect(schema.safeParse({ id: 1, amount: '-5.5', whatever: { deep: true } }).data).toMatchObject({
      id: 1,
      amount: '-5.50',
    });
    const bad = schema.safeParse({ id: 1, amount: '12abc' });
    expect(bad.error?.issues[0]?.message).toMatch(/field "amount".*decimal/);
    expect(bad.error?.issues[0]?.path).toEqual(['amount']);
    expect(schema.safeParse({ amount: '1.00' }).error?.issues[0]?.message).toMatch(/key field "id"/);
    expect(schema.safeParse([]).success).toBe(false);
  });

  it('agree with the normalizer on arbitrary records (same acceptance, same row)', () => {
    for (const def of [getStream('registrants'), getStream('sponsors'), getStream('registration_audit')]) {
      const stream = resolveStream(def, { overrides: { expand: Object.keys(def.expand ?? {}) } });
      const schema = recordSchema(stream);
      const normalizer = createNormalizer(stream);
      const columns = normalizer.columns.map((c) => c.name);
      const sources = [...new Set(normalizer.columns.map((c) => c.source))];
      const value = fc.oneof(
        fc.jsonValue({ maxDepth: 2 }),
        fc.constantFrom('', '12', '1,2', '2024-01-02 03:04:05', '12.5', { id: 1, value: 'A' }, { city: 'X' }),
      );
      fc.assert(
        fc.property(fc.dictionary(fc.constantFrom(...sources, 'unknown_field'), value), fc.boolean(), (raw, key) => {
          const record = key ? { ...raw, id: 1, registrant_id: 1, type: 't', updated_at: '2024-01-01 00:00:00' } : raw;
          const a = normalizer.normalize(record);
          const b = schema.safeParse(record);
          expect(a.ok).toBe(b.success);
          if (a.ok && b.success) {
            expect(Object.fromEntries(columns.map((c) => [c, a.row[c]]))).toEqual(b.data);
          }
        }),
        { numRuns: 300 },
      );
    }
  });
});
