/**
 * Form bodies (`post` deliveries) as PHP's http_build_query writes them: `registrant[reg_type_id][id]=3`,
 * `registrant[session_ids][0]=12`. Decoded into nested objects of texts; members whose keys are 0..n-1 become
 * arrays. Values stay texts (the format loses types, nulls and empty lists), which is why a `post` record is not
 * loaded as it is (see payload.ts).
 */

type FormValue = string | FormValue[] | { [key: string]: FormValue };

/** Keys that would reach an object's prototype, and bounds that keep a hostile body from costing much. */
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
const MAX_DEPTH = 8;

export class FormError extends Error {
  override name = 'FormError';
}

function splitName(name: string): string[] {
  const open = name.indexOf('[');
  if (open <= 0) return [name];
  const head = name.slice(0, open);
  const rest = name.slice(open);
  const parts = [head];
  const re = /\[([^\]]*)\]/gy;
  let m: RegExpExecArray | null;
  let end = 0;
  re.lastIndex = 0;
  // biome-ignore lint/suspicious/noAssignInExpressions: the sticky regexp walks the brackets one by one
  while ((m = re.exec(rest)) !== null) {
    parts.push(m[1]!);
    end = re.lastIndex;
  }
  if (end !== rest.length) throw new FormError('a field name has unbalanced brackets');
  return parts;
}

function toArrays(value: FormValue): FormValue {
  if (typeof value === 'string' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  for (const k of keys) value[k] = toArrays(value[k]!);
  const isList = keys.length > 0 && keys.every((k, i) => k === String(i));
  return isList ? keys.map((k) => value[k]!) : value;
}

/** Decodes a form body into nested objects; throws FormError for names it cannot place. */
export function decodeForm(body: string): Record<string, FormValue> {
  const root: Record<string, FormValue> = {};
  for (const [name, value] of new URLSearchParams(body)) {
    const path = splitName(name);
    if (path.length > MAX_DEPTH) throw new FormError('a field is nested too deeply');
    let node: Record<string, FormValue> = root;
    for (let i = 0; i < path.length; i++) {
      let key = path[i]!;
      if (FORBIDDEN.has(key)) throw new FormError('a field name is not allowed');
      // `a[]=x` appends, as PHP does.
      if (key === '') key = String(Object.keys(node).length);
      if (i === path.length - 1) {
        node[key] = value;
        break;
      }
      const next = node[key];
      if (next === undefined) {
        const child: Record<string, FormValue> = {};
        node[key] = child;
        node = child;
      } else if (typeof next === 'string' || Array.isArray(next)) {
        throw new FormError('a field is both a value and a group');
      } else node = next;
    }
  }
  return toArrays(root) as Record<string, FormValue>;
}
