/**
 * The shape of a stream definition. A connector is data: the sync engine, the warehouse and the normalizer all
 * interpret these objects, so adding a stream never means changing engine code.
 */

import { MAX_PER_PAGE } from './service.js';

/** Column types a field can land in. Each maps to one DuckDB type (see `duckdbType`). */
export type ScalarType =
  | 'bigint'
  | 'integer'
  | 'double'
  | `decimal(${number},${number})`
  | 'text'
  | 'boolean'
  | 'timestamp'
  | 'date'
  | 'time'
  | 'bigint[]'
  | 'text[]'
  | 'json';

/**
 * A field's type on the wire. Besides scalars:
 * - `choice`: an `{id, value}` object, landing in two columns `<field>_id` (BIGINT) and `<field>` (TEXT);
 * - `address`: an expanded address object, landing in prefixed columns (`home_address_city`, ...).
 */
export type FieldType = ScalarType | 'choice' | 'address';

/** Where a stream's records live: account-wide, per event (`event_id` query parameter), or under a parent record. */
export type StreamScope =
  | 'account'
  | 'event'
  | {
      /** The parent stream whose ids this stream is listed under (e.g. `data_lists`). */
      parent: string;
      /** The `{placeholder}` in `path` the parent id replaces. */
      param: string;
      /** The column the parent id is stored in on this stream's table. */
      column: string;
    };

/** The service's webhook trigger objects (spec, Events). */
const WEBHOOK_OBJECTS = [
  'event',
  'contact',
  'registrant',
  'speaker',
  'sponsor',
  'session',
  'session_attendance',
  'registrant_line_item',
] as const;
export type WebhookObject = (typeof WEBHOOK_OBJECTS)[number];

/** How the stream is read incrementally. */
export type StreamKind =
  /** An ordinary list endpoint, walked by keyset over `id`. */
  | 'list'
  /** The registration audit log: `start_time`/`end_time` windows, no id, append-only. */
  | 'audit';

export interface StreamDefinition {
  readonly name: string;
  /** Path relative to the base URL (which ends in `/v1`), may hold a `{placeholder}` for parent scopes. */
  readonly path: string;
  readonly scope: StreamScope;
  readonly kind: StreamKind;
  /** Primary key columns. */
  readonly key: readonly string[];
  /** Field usable as `search=<cursor>>=...` for incremental sync; null means snapshot the stream. */
  readonly cursor: string | null;
  /** Documented page maximum (the real service may grant less: the client trusts `_meta.perPage`). */
  readonly maxPerPage: number;
  /** Every field to request explicitly with `fields=` (default field sets are sparse), with its type. */
  readonly fields: Readonly<Record<string, FieldType>>;
  /** Related objects the endpoint accepts in `expand`, with their column type. Off unless configured. */
  readonly expand?: Readonly<Record<string, FieldType>>;
  /** Custom fields `c_<id>`: the stream whose records define them (id, name and type per definition). */
  readonly customFields?: { readonly definitions: string };
  /**
   * For a stream without a cursor whose rows belong to records of a cursor stream (line items to registrants): between
   * full snapshots, an incremental run re-reads only the rows of parent records that changed since the last read,
   * with `search=<key>=*in*<ids>`. A full snapshot still runs every `fullSnapshotEveryHours`, to catch changes that do
   * not touch the parent.
   */
  readonly refreshByParent?: { readonly stream: string; readonly key: string };
  /**
   * The webhook trigger object whose deliveries carry this stream's changes (spec, Events): `evsync serve` applies
   * them as they arrive and polls the stream on the slower reconciliation cadence. Absent: polled as usual.
   */
  readonly webhook?: { readonly object: WebhookObject };
  /**
   * Fields holding `[{key, value}]` lists whose values are secrets (webhook headers carry shared secrets): the keys
   * are stored, each value is replaced by `[redacted]` before anything is written.
   */
  readonly secretValues?: readonly string[];
  /** Whether the facts page marks the path and shape as documented (true) or inferred (false). */
  readonly verified: boolean;
  /** One line for `evsync streams`. */
  readonly description: string;
}

/**
 * What most streams share, declared once: a list endpoint walked by keyset over `id`, with the documented page cap
 * (MAX_PER_PAGE). A definition states only where it differs.
 */
const STREAM_DEFAULTS = { kind: 'list', key: ['id'], maxPerPage: MAX_PER_PAGE } as const satisfies Pick<
  StreamDefinition,
  'kind' | 'key' | 'maxPerPage'
>;

/** A definition as written in the catalogue: the defaults may be left out. */
type StreamInput = Omit<StreamDefinition, keyof typeof STREAM_DEFAULTS> &
  Partial<Pick<StreamDefinition, keyof typeof STREAM_DEFAULTS>>;

export function defineStream<const T extends StreamInput>(definition: T): T & StreamDefinition {
  return { ...STREAM_DEFAULTS, ...definition };
}

/** A custom field discovered from a definitions stream (`c_<id>` columns). */
export interface CustomField {
  /** Physical column and API field name, `c_<id>`. */
  readonly name: string;
  /** Human label from the definition record (used by the readable views). */
  readonly label: string;
  /** `json` for choice-like fields (arrays of `{id, value}`), `text` otherwise. */
  readonly type: ScalarType;
}

/**
 * A stream as one run uses it: the catalogue definition with configuration overrides applied and the custom
 * fields known at plan time.
 */
export interface ResolvedStream extends StreamDefinition {
  /** The `expand` values this run requests (a subset of `expand`'s keys). Expanding caps pages at 200. */
  readonly expandSelected: readonly string[];
  readonly customFieldList: readonly CustomField[];
  /**
   * Columns discovered by schema evolution in earlier runs (fields the records carried that the definition does not
   * declare), with the type they were created with. `physicalColumns` appends them after the custom fields.
   */
  readonly extraFields?: Readonly<Record<string, ScalarType>>;
  /**
   * Custom fields whose answers are stored converted to a type the user chose (`streams.<name>.customFieldTypes`),
   * by member name `c_<id>`; see normalizer/custom-types.ts. Absent: answers are kept as the service sent them.
   */
  readonly customFieldTypes?: Readonly<Record<string, CustomFieldType>>;
}

/** A value after normalization, ready for the warehouse. See `ScalarType` for which form each type takes. */
export type NormalizedValue = string | number | boolean | null | readonly (string | number)[];

/** One record normalized to physical column names. */
export type NormalizedRow = Record<string, NormalizedValue>;

const PLAIN_TYPES: ReadonlySet<string> = new Set([
  'bigint',
  'integer',
  'double',
  'text',
  'boolean',
  'timestamp',
  'date',
  'time',
  'bigint[]',
  'text[]',
  'json',
]);

/** `decimal(p,s)` with DuckDB's limits: 1 <= p <= 38, 0 <= s <= p. */
export function decimalParams(type: string): { precision: number; scale: number } | null {
  const m = /^decimal\((\d{1,2}),(\d{1,2})\)$/.exec(type);
  if (!m) return null;
  const precision = Number(m[1]);
  const scale = Number(m[2]);
  return precision >= 1 && precision <= 38 && scale <= precision ? { precision, scale } : null;
}

/** Whether a string read back from configuration or the database is a column type (runtime check). */
export function isScalarType(type: string): type is ScalarType {
  return PLAIN_TYPES.has(type) || decimalParams(type) !== null;
}

// Names schema evolution may turn into columns: no leading underscore (system columns, `_links`), identifier
// characters only, and nothing an object inherits (a missing field must read as undefined).
const EXTRA_NAME_RE = /^[A-Za-z][A-Za-z0-9_]{0,62}$/;
export function isExtraFieldName(name: string): boolean {
  return EXTRA_NAME_RE.test(name) && !(name in Object.prototype);
}

const CUSTOM_FIELD_NAME = /^c_[A-Za-z0-9_]+$/;

/** Whether a name is a custom field's (`c_<id>`): a record member the normalizer folds into `custom_fields`. */
export function isCustomFieldName(name: string): boolean {
  // The char codes first: most members fail them, and the regex only runs on `c_` names.
  return name.charCodeAt(0) === 99 && name.charCodeAt(1) === 95 && CUSTOM_FIELD_NAME.test(name);
}

/**
 * The types a custom field's answers may be converted to (`customFieldTypes`): the scalar types a single JSON value
 * holds. Lists and `json` are left out: a list answer is a choice, which the custom-fields column already keeps whole.
 */
export type CustomFieldType = Exclude<ScalarType, 'bigint[]' | 'text[]' | 'json'>;

/** The plain types less the list and JSON ones (see CustomFieldType). */
const CUSTOM_FIELD_TYPES: ReadonlySet<string> = new Set(
  [...PLAIN_TYPES].filter((t) => !t.endsWith('[]') && t !== 'json'),
);

/** The type names `customFieldTypes` accepts, for messages (`decimal(p,s)` stands for every precision and scale). */
export const CUSTOM_FIELD_TYPE_NAMES: readonly string[] = Object.freeze([...CUSTOM_FIELD_TYPES, 'decimal(p,s)']);

/** Whether a configured name is a type `customFieldTypes` accepts (runtime check). */
export function isCustomFieldType(type: string): type is CustomFieldType {
  return CUSTOM_FIELD_TYPES.has(type) || decimalParams(type) !== null;
}

// A field's member as `customFieldsFromDefinitions` names it: `c_` and the definition's id, canonical digits.
const CUSTOM_FIELD_ID_NAME = /^c_(0|[1-9]\d{0,14})$/;

/** Whether a configured name is a custom field's member name `c_<id>` (the one form definitions give). */
export function isCustomFieldIdName(name: string): boolean {
  return CUSTOM_FIELD_ID_NAME.test(name);
}
