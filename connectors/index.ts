/**
 * The connector catalogue: every list endpoint of the service as a declarative stream definition, the stream sets
 * users pick from, and `resolveStream`, which applies configuration overrides and the fields known at plan time.
 */
import { dataListItems, dataLists, webhookGroups, webhooks } from './account.js';
import { cfsContacts, cfsReviews, cfsSubmissions } from './cfs.js';
import {
  eventBadges,
  eventFields,
  eventFolders,
  eventQuestions,
  events,
  eventWebsites,
  invitationLists,
  pages,
} from './events.js';
import { contactFields, contacts, speakers, sponsorAttendance, sponsorFields, sponsors } from './people.js';
import {
  discountCodes,
  packages,
  registrantGroups,
  registrantLineItemAudits,
  registrantLineItems,
  registrants,
  registrantTypes,
  registrationAudit,
  transactions,
} from './registrants.js';
import {
  sessionAttendance,
  sessionFields,
  sessionLocations,
  sessionScans,
  sessions,
  sessionWaitlists,
  tracks,
} from './sessions.js';
import { didYouMean } from './suggest.js';
import {
  CUSTOM_FIELD_TYPE_NAMES,
  type CustomField,
  type CustomFieldType,
  isCustomFieldIdName,
  isCustomFieldName,
  isCustomFieldType,
  isExtraFieldName,
  isScalarType,
  type ResolvedStream,
  type ScalarType,
  type StreamDefinition,
} from './types.js';

export type { CustomField, CustomFieldType, ResolvedStream, StreamDefinition } from './types.js';

/** Every stream, in the order of the facts page's endpoint table. */
export const catalogue: readonly StreamDefinition[] = Object.freeze([
  events,
  contacts,
  webhooks,
  webhookGroups,
  eventFolders,
  contactFields,
  sessionFields,
  sponsorFields,
  eventFields,
  dataLists,
  dataListItems,
  invitationLists,
  registrants,
  sessions,
  speakers,
  sponsors,
  registrantTypes,
  packages,
  discountCodes,
  transactions,
  registrantLineItems,
  registrantLineItemAudits,
  registrantGroups,
  sessionWaitlists,
  sessionAttendance,
  sessionScans,
  sessionLocations,
  tracks,
  eventQuestions,
  eventWebsites,
  pages,
  eventBadges,
  sponsorAttendance,
  cfsContacts,
  cfsSubmissions,
  cfsReviews,
  registrationAudit,
]);

const byName: ReadonlyMap<string, StreamDefinition> = new Map(catalogue.map((s) => [s.name, s]));

/** Named stream sets, as stream names. `core` is the default selection. */
export const STREAM_SETS: Readonly<Record<'core' | 'all', readonly string[]>> = Object.freeze({
  core: Object.freeze(
    [
      events,
      registrants,
      sessions,
      speakers,
      sponsors,
      contacts,
      registrantTypes,
      packages,
      discountCodes,
      transactions,
      registrantLineItems,
      registrationAudit,
    ].map((s) => s.name),
  ),
  all: Object.freeze(catalogue.map((s) => s.name)),
});

/** The page cap whenever `expand` is used (documented for every list). */
export const EXPAND_PAGE_CAP = 200;

/** Set names and stream names: what `--streams` takes. */
function knownNames(): string[] {
  return [...Object.keys(STREAM_SETS), ...catalogue.map((s) => s.name)];
}

function validNamesMessage(): string {
  return `valid: ${Object.keys(STREAM_SETS).join(', ')} (sets), ${catalogue.map((s) => s.name).join(', ')}`;
}

export function hasStream(name: string): boolean {
  return byName.has(name);
}

/** The definition of one stream; throws an error listing the valid names when there is none. */
export function getStream(name: string): StreamDefinition {
  const def = byName.get(name);
  if (!def) throw new Error(`Unknown stream "${name}"${didYouMean(name, knownNames())}; ${validNamesMessage()}`);
  return def;
}

/**
 * Streams selected by a `--streams` value: `core`, `all`, or a comma list of stream names and set names
 * (`core,webhooks`). Order of first mention, no duplicates. Throws on an empty or unknown name.
 */
export function selectStreams(spec: string): StreamDefinition[] {
  const parts = spec
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (parts.length === 0) throw new Error(`No streams selected ("${spec}"); ${validNamesMessage()}`);
  const unknown = parts.filter((p) => !(p in STREAM_SETS) && !byName.has(p));
  if (unknown.length > 0) {
    const list = unknown.map((u) => `"${u}"${didYouMean(u, knownNames())}`).join(', ');
    throw new Error(`Unknown stream${unknown.length > 1 ? 's' : ''} ${list}; ${validNamesMessage()}`);
  }
  const selected: StreamDefinition[] = [];
  const seen = new Set<string>();
  for (const part of parts) {
    const names = part === 'core' || part === 'all' ? STREAM_SETS[part] : [part];
    for (const name of names) {
      if (!seen.has(name)) {
        seen.add(name);
        selected.push(getStream(name));
      }
    }
  }
  return selected;
}

/** Per-stream configuration (`evsync.config.json`): several paths are unverified and page caps contradictory. */
export interface StreamOverride {
  readonly path?: string;
  readonly maxPerPage?: number;
  /** Expansions to request; each must be one the definition allows. */
  readonly expand?: readonly string[];
  /**
   * Custom fields whose answers are stored converted to another type, by member name (`{"c_7": "bigint"}`): the
   * custom-fields JSON holds the converted value and the analytics views type the field by it.
   */
  readonly customFieldTypes?: Readonly<Record<string, string>>;
  /** False: keep no history of the stream's records (the `history` schema; what was kept stays). Default true. */
  readonly history?: boolean;
}

export interface ResolveOptions {
  readonly overrides?: StreamOverride;
  /** Custom fields known at plan time (see `customFieldsFromDefinitions`). */
  readonly customFields?: readonly CustomField[];
  /** Columns schema evolution added in earlier runs. */
  readonly extraFields?: Readonly<Record<string, ScalarType>>;
}

/**
 * The stream as one run uses it. Throws a descriptive error for an override the definition does not allow (an
 * unknown expansion, a path without the parent placeholder, a non-positive page size).
 */
export function resolveStream(def: StreamDefinition, opts: ResolveOptions = {}): ResolvedStream {
  const overrides = opts.overrides ?? {};
  const where = `stream "${def.name}"`;

  let path = def.path;
  if (overrides.path !== undefined) {
    if (!/^\/[^\s?#]*$/.test(overrides.path)) {
      throw new Error(`${where}: path override "${overrides.path}" must start with "/" and hold no query or spaces`);
    }
    if (typeof def.scope === 'object' && !overrides.path.includes(`{${def.scope.param}}`)) {
      throw new Error(`${where}: path override "${overrides.path}" must contain {${def.scope.param}}`);
    }
    path = overrides.path;
  }

  let maxPerPage = def.maxPerPage;
  if (overrides.maxPerPage !== undefined) {
    if (!Number.isSafeInteger(overrides.maxPerPage) || overrides.maxPerPage < 1) {
      throw new Error(`${where}: maxPerPage override must be a positive integer, got ${String(overrides.maxPerPage)}`);
    }
    maxPerPage = overrides.maxPerPage;
  }

  const allowed = Object.keys(def.expand ?? {});
  const expandSelected: string[] = [];
  for (const key of overrides.expand ?? []) {
    if (!allowed.includes(key)) {
      const valid = allowed.length > 0 ? `allowed: ${allowed.join(', ')}` : 'it accepts no expand';
      throw new Error(`${where}: unknown expand "${key}"; ${valid}`);
    }
    if (!expandSelected.includes(key)) expandSelected.push(key);
  }
  // Expanded pages are capped by the service: planning with the larger cap would misprice the calls.
  if (expandSelected.length > 0) maxPerPage = Math.min(maxPerPage, EXPAND_PAGE_CAP);

  const customFieldList: CustomField[] = [];
  const customs = opts.customFields ?? [];
  if (customs.length > 0 && !def.customFields) {
    throw new Error(`${where} has no custom fields, but ${customs.length} were given`);
  }
  const seenCustom = new Set<string>();
  for (const custom of customs) {
    if (!isCustomFieldName(custom.name)) throw new Error(`${where}: invalid custom field name "${custom.name}"`);
    if (!isScalarType(custom.type))
      throw new Error(`${where}: custom field ${custom.name} has unknown type "${custom.type}"`);
    if (!seenCustom.has(custom.name)) {
      seenCustom.add(custom.name);
      customFieldList.push(custom);
    }
  }

  let extraFields: Record<string, ScalarType> | undefined;
  if (opts.extraFields) {
    extraFields = {};
    for (const [name, type] of Object.entries(opts.extraFields)) {
      if (!isExtraFieldName(name)) throw new Error(`${where}: invalid extra field name "${name}"`);
      if (!isScalarType(type)) throw new Error(`${where}: extra field ${name} has unknown type "${type}"`);
      extraFields[name] = type;
    }
  }

  const customFieldTypes = customFieldTypesOf(def, overrides.customFieldTypes);

  return {
    ...def,
    path,
    maxPerPage,
    expandSelected,
    customFieldList,
    ...(extraFields ? { extraFields } : {}),
    ...(customFieldTypes ? { customFieldTypes } : {}),
  };
}

/** The `customFieldTypes` override checked against the definition; undefined when none is set. */
function customFieldTypesOf(
  def: StreamDefinition,
  given: Readonly<Record<string, string>> | undefined,
): Record<string, CustomFieldType> | undefined {
  if (given === undefined) return undefined;
  const where = `stream "${def.name}"`;
  const names = Object.keys(given);
  if (!def.customFields && names.length > 0) {
    throw new Error(`${where} has no custom fields: customFieldTypes cannot apply to it`);
  }
  const out: Record<string, CustomFieldType> = {};
  for (const name of names) {
    if (!isCustomFieldIdName(name)) {
      throw new Error(
        `${where}: customFieldTypes: "${name}" is not a custom field name (c_<id>, the id of its definition)`,
      );
    }
    const type = given[name]!;
    if (!isCustomFieldType(type)) {
      throw new Error(
        `${where}: customFieldTypes.${name}: unknown type "${type}"${didYouMean(type, CUSTOM_FIELD_TYPE_NAMES)}; valid: ${CUSTOM_FIELD_TYPE_NAMES.join(', ')}`,
      );
    }
    out[name] = type;
  }
  return names.length > 0 ? out : undefined;
}

// Types whose values arrive as arrays of `{id}` / `{id, value}`: stored whole as JSON.
const CHOICE_LIKE = /^(dropdown|checkbox|radio|multi)/i;

/**
 * Custom fields from the records of a definitions stream (`event_questions`, `session_fields`, ...): each
 * `{id, name, type}` becomes column `c_<id>`, labelled by its name. Records without a usable id are skipped (the
 * field cannot be requested without one).
 */
export function customFieldsFromDefinitions(records: readonly Record<string, unknown>[]): CustomField[] {
  const out: CustomField[] = [];
  const seen = new Set<string>();
  for (const record of records) {
    const id = record.id;
    const idText =
      typeof id === 'number' && Number.isSafeInteger(id) && id >= 0
        ? String(id)
        : typeof id === 'string' && /^\d{1,15}$/.test(id)
          ? String(Number(id))
          : null;
    if (idText === null) continue;
    const name = `c_${idText}`;
    if (seen.has(name)) continue;
    seen.add(name);
    const label = typeof record.name === 'string' && record.name.trim() !== '' ? record.name : name;
    const type: ScalarType = typeof record.type === 'string' && CHOICE_LIKE.test(record.type) ? 'json' : 'text';
    out.push({ name, label, type });
  }
  return out;
}
