import { describe, expect, it } from 'vitest';
import type { NormalizedValue, ScalarType } from '../../connectors/types.js';
import { conversionSql, fits, isWidening, scalarTypeOf, widen } from '../../src/warehouse/load/widen.js';

describe('fits', () => {
  describe('accepts values a column holds exactly, and null everywhere', () => {
    it.each<[ScalarType, NormalizedValue, boolean]>([
      ['bigint', 9007199254740991, true],
      ['bigint', 1.5, false],
      ['bigint', '12', false],
      ['integer', 2147483648, false],
      ['double', 1.5, true],
      ['decimal(12,2)', '-166.00', true],
      ['decimal(12,2)', '1.005', false],
      ['decimal(4,2)', '123.4', false],
      ['timestamp', '2024-01-01 10:00:00', true],
      ['timestamp', '2024-01-01', true],
      ['date', '2024-01-01 10:00:00', false],
      ['time', '10:00:00', true],
      ['boolean', 0, false],
      ['bigint[]', [1, 2], true],
      ['bigint[]', [1, 'a'], false],
      ['text[]', ['a', 1], true],
      ['json', '{"a":1}', true],
      ['json', 'plain', false],
      ['text', [1, 2], true],
    ])('fits(%s, %j) is %s', (type, value, want) => {
      expect(fits(type, value)).toBe(want);
    });

    it('null', () => {
      for (const t of ['bigint', 'json', 'date', 'bigint[]'] as const) expect(fits(t, null)).toBe(true);
    });
  });
});

describe('widen', () => {
  it.each<[ScalarType, NormalizedValue, ScalarType]>([
    ['integer', 2147483648, 'bigint'],
    ['bigint', 1.5, 'double'],
    ['integer', 0.5, 'double'],
    ['bigint', 'abc', 'text'],
    ['double', true, 'text'],
    ['decimal(12,2)', '1.005', 'decimal(13,3)'],
    ['decimal(12,2)', '1234567890123456789012345678901234567.5', 'text'],
    ['date', '2024-01-01 10:00:00', 'timestamp'],
    ['timestamp', 'soon', 'text'],
    ['bigint[]', [1, 'a'], 'text[]'],
    ['bigint[]', 5, 'json'],
    ['text[]', 'scalar', 'json'],
    ['boolean', [1], 'text'],
    ['json', 'not json', 'text'],
    ['bigint', 5, 'bigint'],
  ])('follows the documented rule and never narrows: widen(%s, %j) is %s', (type, value, want) => {
    expect(widen(type, value)).toBe(want);
  });

  it('ends: text holds everything', () => {
    for (const v of [1, 1.5, 'x', true, [1], ['a'], '{"a":1}']) expect(fits('text', v)).toBe(true);
  });
});

describe('isWidening and conversions', () => {
  describe('allows only lossless changes', () => {
    it.each<[ScalarType, ScalarType]>([
      ['integer', 'bigint'],
      ['json', 'text'],
      ['decimal(12,2)', 'decimal(14,4)'],
      ['bigint[]', 'json'],
    ])('%s to %s is a widening', (from, to) => {
      expect(isWidening(from, to)).toBe(true);
    });

    it.each<[ScalarType, ScalarType]>([
      ['bigint', 'integer'],
      ['text', 'json'],
      ['decimal(12,2)', 'decimal(12,4)'],
    ])('%s to %s is not', (from, to) => {
      expect(isWidening(from, to)).toBe(false);
    });
  });

  it('converts lists to JSON text, other types by cast', () => {
    expect(conversionSql('"c"', 'bigint[]', 'text')).toBe('CAST(to_json("c") AS VARCHAR)');
    expect(conversionSql('"c"', 'bigint', 'text')).toBe('CAST("c" AS VARCHAR)');
  });

  it('maps DuckDB type names back', () => {
    expect(scalarTypeOf('DECIMAL(12,2)')).toBe('decimal(12,2)');
    expect(scalarTypeOf('BIGINT[]')).toBe('bigint[]');
    expect(scalarTypeOf('JSON')).toBe('json');
    expect(scalarTypeOf('STRUCT(a INTEGER)')).toBeNull();
  });
});
