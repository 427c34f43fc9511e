import type { Json } from '../core/record.js';
import { TRIGGER_OBJECTS } from './types.js';

/**
 * Input of the webhook management API. A body arrives as text members (form fields, or JSON members re-serialized by
 * the body parser), so each member is read back into its type here: booleans as `true`/`false`/`1`/`0`, lists as a
 * JSON array or a comma-separated text, headers as a JSON array of `{key, value}`. Problems are collected per field
 * (the 422 body lists them all); unknown members are ignored, as the service's framework ignores unsafe attributes.
 */

export interface FieldError {
  field: string;
  message: string;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const EMAIL = /^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/;

export class InputReader {
  readonly errors: FieldError[] = [];
  readonly values: Record<string, Json> = {};

  constructor(private readonly body: Record<string, string>) {}

  private fail(field: string, message: string): void {
    this.errors.push({ field, message });
  }

  has(field: string): boolean {
    return this.body[field] !== undefined;
  }

  text(field: string, label: string, max: number): void {
    const v = this.body[field];
    if (v === undefined) return;
    if (v.length > max) this.fail(field, `${label} should contain at most ${max} characters.`);
    else this.values[field] = v.trim();
  }

  bool(field: string, label: string): void {
    const v = this.body[field]?.trim().toLowerCase();
    if (v === undefined) return;
    if (v === 'true' || v === '1') this.values[field] = true;
    else if (v === 'false' || v === '0') this.values[field] = false;
    else this.fail(field, `${label} must be either "true" or "false".`);
  }

  oneOf(field: string, label: string, allowed: readonly string[]): void {
    const v = this.body[field]?.trim();
    if (v === undefined) return;
    if (allowed.includes(v)) this.values[field] = v;
    else this.fail(field, `${label} is invalid.`);
  }

  /** A JSON array, or comma-separated items; null when the member is not a list. */
  private list(field: string): unknown[] | null {
    const v = this.body[field]!.trim();
    if (v === '' || v === 'null') return [];
    if (v.startsWith('[')) {
      try {
        const parsed: unknown = JSON.parse(v);
        return Array.isArray(parsed) ? parsed : null;
      } catch {
        return null;
      }
    }
    return v.split(',').map((s) => s.trim());
  }

  ids(field: string, label: string): void {
    if (!this.has(field)) return;
    const items = this.list(field);
    const ids = items?.map((x) => (typeof x === 'number' ? x : /^\d+$/.test(String(x)) ? Number(x) : Number.NaN));
    if (!ids || ids.some((n) => !Number.isSafeInteger(n) || n <= 0)) {
      this.fail(field, `${label} must be a list of positive integers.`);
    } else this.values[field] = [...new Set(ids)];
  }

  strings(field: string, label: string): void {
    if (!this.has(field)) return;
    const items = this.list(field);
    if (!items || items.some((x) => typeof x !== 'string')) this.fail(field, `${label} must be a list of texts.`);
    else this.values[field] = (items as string[]).filter((x) => x !== '');
  }

  emails(field: string, label: string): void {
    this.strings(field, label);
    const v = this.values[field];
    if (!Array.isArray(v)) return;
    const bad = v.find((e) => !EMAIL.test(String(e)));
    if (bad !== undefined) {
      delete this.values[field];
      this.fail(field, `${label}: "${String(bad)}" is not a valid email address.`);
    }
  }

  headers(field: string, label: string): void {
    if (!this.has(field)) return;
    const v = this.body[field]!.trim();
    let parsed: unknown = [];
    try {
      if (v !== '' && v !== 'null') parsed = JSON.parse(v);
    } catch {
      parsed = null;
    }
    const ok =
      Array.isArray(parsed) &&
      parsed.every(
        (h: unknown) =>
          h !== null &&
          typeof h === 'object' &&
          typeof (h as { key?: unknown }).key === 'string' &&
          typeof (h as { value?: unknown }).value === 'string',
      );
    if (!ok) {
      this.fail(field, `${label} must be a list of {"key", "value"} pairs.`);
      return;
    }
    const headers = parsed as { key: string; value: string }[];
    const bad = headers.find((h) => !TOKEN.test(h.key) || /[\r\n\0]/.test(h.value));
    if (bad) {
      this.fail(field, `${label}: "${bad.key}" is not a valid header.`);
      return;
    }
    this.values[field] = headers.map((h) => ({ key: h.key, value: h.value }));
  }

  /** An integer id or empty (null). */
  optionalId(field: string, label: string): void {
    const v = this.body[field]?.trim();
    if (v === undefined) return;
    if (v === '' || v === 'null' || v === '0') this.values[field] = null;
    else if (/^\d{1,15}$/.test(v)) this.values[field] = Number(v);
    else this.fail(field, `${label} must be an integer.`);
  }

  required(field: string, label: string, current: Json | undefined): void {
    const v = field in this.values ? this.values[field] : current;
    if (v === undefined || v === null || v === '') {
      if (!this.errors.some((e) => e.field === field)) this.fail(field, `${label} cannot be blank.`);
    }
  }

  /** A rule over the merged record, reported on `field`. */
  check(ok: boolean, field: string, message: string): void {
    if (!ok) this.fail(field, message);
  }
}

/** `trigger_on_insert` -> `Trigger On Insert`, as the framework labels attributes. */
function label(field: string): string {
  return field.replace(/(^|_)([a-z])/g, (_, sep: string, c: string) => `${sep ? ' ' : ''}${c.toUpperCase()}`);
}

export function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/** Reads every webhook member a body may carry. */
export function readWebhook(body: Record<string, string>): InputReader {
  const r = new InputReader(body);
  r.text('name', 'Name', 255);
  r.text('url', 'Url', 2048);
  r.oneOf('content_type', 'Content Type', ['json', 'post']);
  r.text('post_field_data', 'Post Field Data', 65_535);
  r.bool('use_default_fields', 'Use Default Fields');
  r.strings('custom_fields', 'Custom Fields');
  r.text('notes', 'Notes', 65_535);
  r.oneOf('trigger_object', 'Trigger Object', TRIGGER_OBJECTS);
  for (const f of ['trigger_on_insert', 'trigger_on_update', 'trigger_on_delete', 'all_fields']) r.bool(f, label(f));
  r.strings('fields', 'Fields');
  for (const f of ['public_user', 'admin_user', 'api_call', 'any_event', 'enabled']) r.bool(f, label(f));
  r.ids('event_ids', 'Event Ids');
  r.optionalId('group_id', 'Group');
  r.headers('headers', 'Headers');
  if (typeof r.values.url === 'string' && r.values.url !== '' && !isHttpUrl(r.values.url)) {
    r.check(false, 'url', 'Url is not a valid URL.');
  }
  return r;
}

export function readGroup(body: Record<string, string>): InputReader {
  const r = new InputReader(body);
  r.text('name', 'Name', 255);
  r.headers('headers', 'Headers');
  r.emails('notification_emails', 'Notification Emails');
  return r;
}
