import type { Json } from '../core/record.js';
import { parseTimestamp } from '../core/time.js';
import { badRequest } from '../http/errors.js';
import type { FieldKind } from '../schema/kinds.js';
import { isNumericKind, parseNumber } from './compare.js';

export type Operator = '=' | '!=' | '>' | '<' | '>=' | '<=' | 'contains' | 'beginswith' | 'endswith' | 'in';

export interface Condition {
  field: string;
  op: Operator;
  /** The raw value text (for `in`, the `|`-separated list). */
  value: string;
  kind: FieldKind;
  /** The value as a number when it reads as one. */
  num: number | null;
  /** The value as wall seconds when it is a full `YYYY-MM-DD HH:MM:SS` timestamp. */
  seconds: number | null;
  /** Lower-cased values for text matching (`in` has several). */
  texts: string[];
  /** Set by the query runner when an id bound already enforces this condition. */
  bound?: boolean;
  /** Whether it compares wall seconds (a full timestamp against created_at / updated_at). */
  fast?: boolean;
}

const CONDITION = /^([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=|!=|=|>|<)(.*)$/s;
const WORD_OPS = ['contains', 'beginswith', 'endswith', 'in'] as const;

/**
 * Parses `search`: conditions joined by `&` (URL-encoded by the client, decoded by the time we see them), each
 * `field<op>value`; word operators are written as `field=*contains*text`, `status=*in*a|b`.
 * `kindOf` returns the kind of a searchable field or undefined for an unknown one (a 400).
 */
export function parseSearch(text: string, kindOf: (field: string) => FieldKind | undefined): Condition[] {
  const out: Condition[] = [];
  for (const part of text.split('&')) {
    if (part.trim() === '') continue;
    const m = CONDITION.exec(part.trim());
    if (!m) throw badRequest(`Invalid search condition "${part}".`);
    const field = m[1]!;
    let op = m[2] as Operator;
    let value = m[3]!;
    const kind = kindOf(field);
    if (!kind) throw badRequest(`Unknown search field "${field}".`);
    if (op === '=') {
      for (const word of WORD_OPS) {
        const marker = `*${word}*`;
        if (value.toLowerCase().startsWith(marker)) {
          op = word;
          value = value.slice(marker.length);
          break;
        }
      }
    }
    const values = op === 'in' ? value.split('|') : [value];
    out.push({
      field,
      op,
      value,
      kind,
      num: op === 'in' ? null : parseNumber(value),
      seconds: parseTimestamp(value),
      texts: values.map((v) => v.toLowerCase()),
    });
  }
  return out;
}

function cmp(op: Operator, diff: number): boolean {
  switch (op) {
    case '=':
      return diff === 0;
    case '!=':
      return diff !== 0;
    case '>':
      return diff > 0;
    case '<':
      return diff < 0;
    case '>=':
      return diff >= 0;
    case '<=':
      return diff <= 0;
    default:
      return false;
  }
}

function textTest(c: Condition, text: string): boolean {
  const t = text.toLowerCase();
  const v = c.texts[0]!;
  switch (c.op) {
    case 'contains':
      return t.includes(v);
    case 'beginswith':
      return t.startsWith(v);
    case 'endswith':
      return t.endsWith(v);
    case 'in':
      return c.texts.includes(t);
    default:
      return cmp(c.op, t < v ? -1 : t > v ? 1 : 0);
  }
}

function scalarTest(c: Condition, value: string | number | boolean, numeric: boolean): boolean {
  const n =
    typeof value === 'boolean'
      ? value
        ? 1
        : 0
      : typeof value === 'number'
        ? value
        : numeric
          ? parseNumber(value)
          : null;
  if (c.op === 'in') {
    if (n !== null) return c.texts.some((t) => parseNumber(t) === n) || c.texts.includes(String(value).toLowerCase());
    return c.texts.includes(String(value).toLowerCase());
  }
  if (n !== null && c.num !== null && c.op !== 'contains' && c.op !== 'beginswith' && c.op !== 'endswith') {
    return cmp(c.op, n - c.num);
  }
  if (typeof value === 'boolean') {
    const v = c.texts[0];
    const truthy = v === 'true' || v === '1';
    const falsy = v === 'false' || v === '0';
    if (c.op === '=' && (truthy || falsy)) return value === truthy;
    if (c.op === '!=' && (truthy || falsy)) return value !== truthy;
  }
  return textTest(c, String(value));
}

/** Whether a record value satisfies a condition. Null never matches (SQL semantics). */
export function testValue(c: Condition, value: Json | undefined): boolean {
  if (value === null || value === undefined) return false;
  if (Array.isArray(value)) {
    // Arrays (session_ids, choice answers) match when any element does; `!=` when none equals.
    if (c.op === '!=') return !value.some((v) => testValue({ ...c, op: '=' }, v));
    return value.some((v) => testValue(c, v));
  }
  if (typeof value === 'object') {
    const choice = value as { id?: Json; value?: Json };
    if (c.num !== null && typeof choice.id === 'number') return scalarTest(c, choice.id, true);
    return typeof choice.value === 'string' ? scalarTest(c, choice.value, false) : false;
  }
  return scalarTest(c, value, isNumericKind(c.kind));
}

/** Numeric test on wall seconds (fast path for created_at / updated_at). */
export function testSeconds(c: Condition, seconds: number | null): boolean {
  if (seconds === null) return false;
  return cmp(c.op, seconds - c.seconds!);
}

/** Whether the fast numeric timestamp path applies to this condition. */
export function usesSeconds(c: Condition): boolean {
  return c.kind === 'ts' && c.seconds !== null && c.op !== 'in' && WORD_OPS.indexOf(c.op as never) < 0;
}
