import type { Json, Rec } from '../core/record.js';
import { address } from '../data/people.js';
import type { World } from '../data/world.js';
import { fullProjection, project } from '../query/project.js';
import type { StreamSpec } from '../schema/streams.js';
import { customDefs, findAny } from '../service/lookup.js';
import type { Partition } from '../store/partition.js';
import { phpFormEncode } from './form.js';
import type { ChangeAction, Initiator, TriggerObject } from './types.js';

/**
 * The delivery body, after the captured real one:
 * `{"action", "object", "datetime", "<object>": {...record...}, "initiated_by"}`, members in that order. The record is
 * the whole record as the service holds it (every base field and every live custom field `c_*`), with the quirks the
 * capture shows: addresses flattened to `homeAddress_line_1`, `workAddress_city`, `billingAddress_country_name`, ...
 * and `reg_type_id` as `{id, value}`. A delete carries the record's last state.
 */

const ADDRESSES: readonly [string, number][] = [
  ['homeAddress', 1],
  ['workAddress', 2],
  ['billingAddress', 3],
];
const ADDRESS_KEYS = ['line_1', 'line_2', 'line_3', 'city', 'state', 'zip', 'country', 'country_name'] as const;

/** The country names of the codes the generator uses (the capture shows `_country_name`; codes stay in `_country`). */
const COUNTRY_NAMES: Record<string, string> = {
  US: 'United States',
  CA: 'Canada',
  GB: 'United Kingdom',
  DE: 'Germany',
  FR: 'France',
  JP: 'Japan',
  AU: 'Australia',
};

function flattenAddresses(world: World, id: number, out: Rec): void {
  for (const [name, kind] of ADDRESSES) {
    const a = address(world.seed, id, kind);
    const parts = a && typeof a === 'object' && !Array.isArray(a) ? a : null;
    for (const key of ADDRESS_KEYS) {
      let value: Json = null;
      if (parts && key === 'country_name') value = COUNTRY_NAMES[String(parts.country)] ?? String(parts.country ?? '');
      else if (parts) value = parts[key] ?? null;
      out[`${name}_${key}`] = value;
    }
  }
}

/**
 * The full record as a delivery shows it (before any `fields` selection). Records of event-scoped objects that have
 * no `event_id` field (session attendance, line items) get one after `id`, so that every delivery, a delete
 * included, names its event.
 */
export function payloadRecord(world: World, spec: StreamSpec, part: Partition, rec: Rec): Rec {
  const projected = project(rec, fullProjection(spec, customDefs(world, spec, part)));
  // Copied key by key: adding the address members to a spread copy made V8 slow it down tenfold.
  const out: Rec = {};
  if (spec.scope === 'event' && !('event_id' in spec.fields)) {
    out.id = projected.id ?? null;
    out.event_id = part.scopeId;
  }
  for (const key of Object.keys(projected)) out[key] = projected[key]!;
  if (spec.name === 'registrants' || spec.name === 'contacts') flattenAddresses(world, rec.id as number, out);
  if (spec.name === 'registrants' && typeof out.reg_type_id === 'number') {
    const type = findAny(world, 'registrant_types', out.reg_type_id);
    out.reg_type_id = { id: out.reg_type_id, value: (type?.rec.name as Json) ?? '' };
  }
  return out;
}

/** A webhook with `all_fields` off sends only its `fields`, plus `id` and `event_id` (where the record has one). */
export function selectFields(record: Rec, fields: readonly string[] | null): Rec {
  if (fields === null) return record;
  const wanted = new Set(['id', 'event_id', ...fields]);
  const out: Rec = {};
  for (const [k, v] of Object.entries(record)) if (wanted.has(k)) out[k] = v;
  return out;
}

export interface PayloadParts {
  action: ChangeAction;
  object: TriggerObject;
  datetime: string;
  record: Rec;
  initiatedBy: Initiator;
}

function envelope(p: PayloadParts): { [key: string]: Json } {
  return {
    action: p.action,
    object: p.object,
    datetime: p.datetime,
    [p.object]: p.record,
    initiated_by: p.initiatedBy,
  };
}

export const CONTENT_TYPES = {
  json: 'application/json',
  post: 'application/x-www-form-urlencoded',
} as const;

/** The body in a webhook's format: JSON, or the same members form-encoded the way PHP's http_build_query does. */
export function encodePayload(p: PayloadParts, format: 'json' | 'post'): string {
  return format === 'json' ? JSON.stringify(envelope(p)) : phpFormEncode(envelope(p));
}
