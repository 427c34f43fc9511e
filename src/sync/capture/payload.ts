/**
 * Reading a delivery's body: `{"action", "object", "datetime", "<object>": {...record...}, "initiated_by"}`, as JSON
 * or form-encoded (`post`). The reasons given for a refused body never quote it (it holds personal data): they name
 * what is wrong, not what was there.
 */
import { decodeForm, FormError } from './form.js';
import { streamOfObject } from './objects.js';

export type Action = 'insert' | 'update' | 'delete';

export interface ParsedDelivery {
  format: 'json' | 'post';
  action: Action;
  object: string;
  /** The catalogue stream of the object, null when no stream declares it. */
  stream: string | null;
  /** The delivery's `datetime` (record zone), null when absent. */
  datetime: string | null;
  recordId: number;
  /** The record's event (an event's own id); null for account-level records, or when the record does not say. */
  eventId: number | null;
  /** The record as sent: JSON values for `json`, texts for `post`. */
  record: Record<string, unknown>;
}

export type ParseResult =
  | { ok: true; delivery: ParsedDelivery }
  | { ok: false; format: 'json' | 'post' | null; reason: string };

/** The action names the service may use: `insert` is captured from it; the others are accepted as synonyms. */
const ACTIONS: Record<string, Action> = {
  insert: 'insert',
  create: 'insert',
  created: 'insert',
  update: 'update',
  updated: 'update',
  delete: 'delete',
  deleted: 'delete',
};

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}/;

function formatOf(contentType: string | undefined): 'json' | 'post' | null {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json' || type.endsWith('+json')) return 'json';
  if (type === 'application/x-www-form-urlencoded') return 'post';
  return null;
}

/** An integer id from a JSON number or a form text. */
function idValue(v: unknown): number | null {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) return v;
  if (typeof v === 'string' && /^\d{1,15}$/.test(v)) {
    const n = Number(v);
    return n > 0 ? n : null;
  }
  // `{id, value}` choices (a registrant's reg_type_id) carry their id inside.
  if (v && typeof v === 'object' && !Array.isArray(v)) return idValue((v as { id?: unknown }).id);
  return null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function decode(body: string, format: 'json' | 'post'): unknown {
  if (format === 'json') return JSON.parse(body);
  return decodeForm(body);
}

/** Parses a delivery body; a refused body gets a reason that names no value from it. */
export function parseDelivery(body: string, contentType: string | undefined): ParseResult {
  const format = formatOf(contentType);
  if (format === null)
    return { ok: false, format, reason: 'content type is neither application/json nor form-encoded' };
  let value: unknown;
  try {
    value = decode(body, format);
  } catch (err) {
    const what =
      err instanceof FormError ? err.message : format === 'json' ? 'body is not valid JSON' : 'body is not a form';
    return { ok: false, format, reason: what };
  }
  if (!isObject(value)) return { ok: false, format, reason: 'body is not an object' };
  const action = typeof value.action === 'string' ? ACTIONS[value.action.toLowerCase()] : undefined;
  if (!action) return { ok: false, format, reason: 'action is missing or not one of insert, update, delete' };
  const object = value.object;
  if (typeof object !== 'string' || !/^[a-z][a-z0-9_]{0,63}$/.test(object)) {
    return { ok: false, format, reason: 'object is missing or not a trigger object name' };
  }
  const record = value[object];
  if (!isObject(record)) return { ok: false, format, reason: `the ${object} member is missing or not an object` };
  const recordId = idValue(record.id);
  if (recordId === null) return { ok: false, format, reason: `the ${object} record has no integer id` };
  const datetime = typeof value.datetime === 'string' && TIMESTAMP.test(value.datetime) ? value.datetime : null;
  if (value.datetime !== undefined && value.datetime !== null && datetime === null) {
    return { ok: false, format, reason: 'datetime is not a YYYY-MM-DD HH:MM:SS timestamp' };
  }
  const def = streamOfObject(object);
  const eventId = object === 'event' ? recordId : def?.scope === 'event' ? idValue(record.event_id) : null;
  return {
    ok: true,
    delivery: { format, action, object, stream: def?.name ?? null, datetime, recordId, eventId, record },
  };
}
