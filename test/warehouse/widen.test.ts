import { describe, expect, it } from 'vitest';
import { conversionSql, fits, isWidening, scalarTypeOf, widen } from '../../src/warehouse/widen.js';

describe('fits', () => {
  it('accepts values a column holds exactly, and null everywhere', () => {
    expect(fits('bigint', 9007199254740991)).toBe(true);
    expect(fits('bigint', 1.5)).toBe(false);
    expect(fits('bigint', '12')).toBe(false);
    expect(fits('integer', 2147483648)).toBe(false);
    expect(fits('double', 1.5)).toBe(true);
    expect(fits('decimal(12,2)', '-166.00')).toBe(true);
    expect(fits('decimal(12,2)', '1.005')).toBe(false);
    expect(fits('decimal(4,2)', '123.4')).toBe(false);
    expect(fits('timestamp', '2024-01-01 10:00:00')).toBe(true);
    expect(fits('timestamp', '2024-01-01')).toBe(true);
    expect(fits('date', '2024-01-01 10:00:00')).toBe(false);
    expect(fits('time', '10:00:00')).toBe(true);
    expect(fits('boolean', 0)).toBe(false);
    expect(fits('bigint[]', [1, 2])).toBe(true);
    expect(fits('bigint[]', [1, 'a'])).toBe(false);
    expect(fits('text[]', ['a', 1])).toBe(true);
    expect(fits('json', '{"a":1}')).toBe(true);
    expect(fits('json', 'plain')).toBe(false);
    expect(fits('text', [1, 2])).toBe(true);
    for (const t of ['bigint', 'json', 'date', 'bigint[]'] as const) expect(fits(t, null)).toBe(true);
  });
});

describe('widen', () => {
  it('follows the documented rule and never narrows', () => {
    expect(widen('integer', 2147483648)).toBe('bigint');
    expect(widen('bigint', 1.5)).toBe('double');
    expect(widen('integer', 0.5)).toBe('double');
    expect(widen('bigint', 'abc')).toBe('text');
    expect(widen('double', true)).toBe('text');
    expect(widen('decimal(12,2)', '1.005')).toBe('decimal(13,3)');
    expect(widen('decimal(12,2)', '1234567890123456789012345678901234567.5')).toBe('text');
    expect(widen('date', '2024-01-01 10:00:00')).toBe('timestamp');
    expect(widen('timestamp', 'soon')).toBe('text');
    expect(widen('bigint[]', [1, 'a'])).toBe('text[]');
    expect(widen('bigint[]', 5)).toBe('json');
    expect(widen('text[]', 'scalar')).toBe('json');
    expect(widen('boolean', [1])).toBe('text');
    expect(widen('json', 'not json')).toBe('text');
    expect(widen('bigint', 5)).toBe('bigint');
  });

  it('ends: text holds everything', () => {
    for (const v of [1, 1.5, 'x', true, [1], ['a'], '{"a":1}']) expect(fits('text', v)).toBe(true);
  });
});

describe('isWidening and conversions', () => {
  it('allows only lossless changes', () => {
    expect(isWidening('integer', 'bigint')).toBe(true);
    expect(isWidening('bigint', 'integer')).toBe(false);
    expect(isWidening('json', 'text')).toBe(true);
    expect(isWidening('text', 'json')).toBe(false);
    expect(isWidening('decimal(12,2)', 'decimal(14,4)')).toBe(true);
    expect(isWidening('decimal(12,2)', 'decimal(12,4)')).toBe(false);
    expect(isWidening('bigint[]', 'json')).toBe(true);
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
