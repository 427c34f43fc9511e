import type { Json } from '../core/record.js';

/**
 * Form encoding of a nested value, as PHP's `http_build_query` writes it (the service is a PHP application; how it
 * form-encodes a nested record is not shown anywhere, so this is our choice): nested members in brackets
 * (`registrant[reg_type_id][id]=3`, `registrant[session_ids][0]=12`), `true`/`false` as `1`/`0`, and null members and
 * empty arrays left out. Names and values are `application/x-www-form-urlencoded` (space as `+`, brackets escaped).
 */
export function phpFormEncode(value: { [key: string]: Json }): string {
  const pairs: [string, string][] = [];
  const walk = (name: string, v: Json): void => {
    if (v === null) return;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) walk(`${name}[${i}]`, v[i]!);
    } else if (typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) walk(`${name}[${k}]`, item);
    } else if (typeof v === 'boolean') {
      pairs.push([name, v ? '1' : '0']);
    } else {
      pairs.push([name, String(v)]);
    }
  };
  for (const [k, v] of Object.entries(value)) walk(k, v);
  return new URLSearchParams(pairs).toString();
}
