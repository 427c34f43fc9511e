import { CUSTOM, type CustomDef, type Json, type Rec } from '../core/record.js';
import { emptyCustomValue } from '../data/defs.js';
import type { StreamSpec } from '../schema/streams.js';

/**
 * Which fields a response carries. Unknown names in `fields` are ignored; `c_*` fields only appear when named (or
 * with `fields=*`, which the facts page reports client code using for "everything"); the audit log always carries
 * registrant_id. Output follows the record's own field order, whatever order `fields` named them in.
 */
export interface Projection {
  keys: string[];
  customs: CustomDef[];
  /** The record already is the answer (every base field, nothing else): serialize it as-is. */
  identity: boolean;
}

export function projection(spec: StreamSpec, fields: string[] | null, defs: readonly CustomDef[]): Projection {
  const all = Object.keys(spec.fields);
  if (fields === null) return { keys: [...spec.defaults], customs: [], identity: false };
  let keys: string[];
  let customs: CustomDef[];
  if (fields.includes('*')) {
    keys = all;
    customs = [...defs];
  } else {
    const wanted = new Set(fields);
    if (spec.name === 'registration_audit') wanted.add('registrant_id');
    keys = all.filter((f) => wanted.has(f));
    customs = defs.filter((d) => wanted.has(`c_${d.id}`));
  }
  return { keys, customs, identity: keys.length === all.length && customs.length === 0 };
}

/** The full projection truth() uses: every base field and every live custom field. */
export function fullProjection(spec: StreamSpec, defs: readonly CustomDef[]): Projection {
  return { keys: Object.keys(spec.fields), customs: [...defs], identity: defs.length === 0 };
}

export function project(rec: Rec, p: Projection): Rec {
  if (p.identity) return rec;
  const out: Rec = {};
  for (const k of p.keys) out[k] = rec[k] ?? null;
  if (p.customs.length > 0) {
    const values = rec[CUSTOM];
    for (const d of p.customs) {
      const key = `c_${d.id}`;
      out[key] = (values?.[key] as Json | undefined) ?? emptyCustomValue(d);
    }
  }
  return out;
}
