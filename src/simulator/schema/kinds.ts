/**
 * Value kinds of record fields. They decide how `search` compares and how `sort` orders a field, the way the
 * service's SQL would: numbers and money numerically, timestamps as their fixed-width text, text case-insensitively.
 */
export type FieldKind =
  | 'int' // integer or null
  | 'num' // number or null (e.g. group_balance_due, duration)
  | 'money' // decimal string, "-166.00"
  | 'str' // text, "" when empty
  | 'ts' // "YYYY-MM-DD HH:MM:SS" or null
  | 'date' // "YYYY-MM-DD" or null
  | 'time' // "HH:MM:SS" or null
  | 'bool' // true/false
  | 'bool01' // 0/1
  | 'choice' // {id, value} or null
  | 'ints' // array of integers
  | 'choices' // array of {id, value} (choice custom fields)
  | 'json'; // any other structure (headers, lists)

/** Parses `"id:int name status:str created_at:ts"` (kind defaults to str) into an ordered field map. */
export function fieldList(spec: string): Readonly<Record<string, FieldKind>> {
  const out: Record<string, FieldKind> = {};
  for (const token of spec.trim().split(/\s+/)) {
    const [name, kind] = token.split(':');
    out[name!] = (kind ?? 'str') as FieldKind;
  }
  return out;
}
