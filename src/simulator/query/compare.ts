/**
 * The simulator's query folder: list semantics as the spec states them (search conditions, sorting, paging,
 * projection of fields); this file compares values the way the service's database does.
 */
import type { Json } from '../core/record.js';
import type { FieldKind } from '../schema/kinds.js';

/**
 * Value comparison as the service's database would do it: numbers (and money strings) numerically, text
 * case-insensitively (a MySQL-style collation), timestamps as their fixed-width text (equivalent to chronological).
 */

export function isNumericKind(kind: FieldKind): boolean {
  return kind === 'int' || kind === 'num' || kind === 'money' || kind === 'bool01';
}

const NUMBER = /^-?\d+(\.\d+)?$/;

export function parseNumber(text: string): number | null {
  return NUMBER.test(text.trim()) ? Number(text) : null;
}

/** The scalar a value compares as: numbers for numeric kinds, lower-cased text otherwise. */
export function scalarOf(value: Json, kind: FieldKind): string | number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string') {
    if (kind === 'money' || kind === 'num' || kind === 'int') {
      const n = parseNumber(value);
      if (n !== null) return n;
    }
    return kind === 'str' ? value.toLowerCase() : value;
  }
  if (Array.isArray(value)) return value.map((v) => scalarOf(v, kind)).join(',');
  if (typeof value === 'object' && 'value' in value) return scalarOf(value.value ?? null, 'str');
  return JSON.stringify(value);
}

/** Total order for sort: nulls first, numbers before text, numbers numerically, text by code point. */
export function compareScalars(a: string | number | null, b: string | number | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'number') return -1;
  if (typeof b === 'number') return 1;
  return a < b ? -1 : 1;
}
