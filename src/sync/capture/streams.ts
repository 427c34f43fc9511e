/**
 * The streams change capture writes, resolved the way a sync run resolves them (configuration overrides, custom
 * fields from the stored definitions, columns schema evolution added), with the fields one scope asks for. Resolved
 * once and again after each reconciliation run (definitions may have changed).
 */
import {
  customFieldsFromDefinitions,
  getStream,
  resolveStream,
  type StreamOverride,
} from '../../../connectors/index.js';
import type { CustomField, ResolvedStream } from '../../../connectors/types.js';
import { requestFields } from '../../../schemas/columns.js';
import type { Warehouse } from '../../warehouse/index.js';
import { ACCOUNT_SCOPE, eventScope } from '../scope.js';

export interface CaptureStream {
  stream: ResolvedStream;
  /** The API fields a list of this scope asks for (its own custom fields only), as a sync would. */
  fieldsFor(eventId: number | null): string[];
  /**
   * What of a payload may reach the table: those fields, and the ones schema evolution made columns of (a list
   * returns them unasked). A payload carries more than a list (flattened addresses), so other members stay out.
   */
  storedFor(eventId: number | null): string[];
}

export class CaptureStreams {
  private readonly cache = new Map<string, CaptureStream>();

  constructor(
    private readonly warehouse: Warehouse,
    private readonly overrides: Readonly<Record<string, StreamOverride>> = {},
    private readonly customFields = true,
  ) {}

  /** Resolve one stream (`name`), or all, again at their next use. */
  invalidate(name?: string): void {
    if (name === undefined) this.cache.clear();
    else this.cache.delete(name);
  }

  async get(name: string): Promise<CaptureStream> {
    const cached = this.cache.get(name);
    if (cached) return cached;
    const def = getStream(name);
    const { stream, byScope } = await resolveStored(this.warehouse, name, this.overrides[name], this.customFields);
    await this.warehouse.ensureTable(stream);
    const fieldsFor = (eventId: number | null): string[] => {
      if (!def.customFields) return requestFields(stream);
      const key = eventId === null ? ACCOUNT_SCOPE.key : eventScope(eventId).key;
      // Definitions are per event (event questions) or account-wide (session, contact, sponsor fields).
      const customs = byScope.get(key) ?? byScope.get(ACCOUNT_SCOPE.key) ?? [];
      return requestFields(
        stream,
        customs.map((c) => c.name),
      );
    };
    const extras = Object.keys(stream.extraFields ?? {});
    const storedFor = (eventId: number | null): string[] => [...fieldsFor(eventId), ...extras];
    const entry: CaptureStream = { stream, fieldsFor, storedFor };
    this.cache.set(name, entry);
    return entry;
  }
}

/**
 * A stream resolved the way a sync run resolves it from what the warehouse holds: the configuration's override,
 * custom fields from the stored definitions (per scope, and their union for the table), and the columns schema
 * evolution added. Reads only (the table is not created).
 */
export async function resolveStored(
  warehouse: Warehouse,
  name: string,
  override: StreamOverride | undefined,
  customFields: boolean,
): Promise<{ stream: ResolvedStream; byScope: Map<string, CustomField[]> }> {
  const def = getStream(name);
  const byScope = new Map<string, CustomField[]>();
  if (def.customFields && customFields) {
    const groups = new Map<string, Record<string, unknown>[]>();
    for (const row of await warehouse.current.rows(def.customFields.definitions)) {
      const key = row.event_id != null ? eventScope(Number(row.event_id)).key : ACCOUNT_SCOPE.key;
      groups.set(key, [...(groups.get(key) ?? []), row]);
    }
    for (const [key, rows] of groups) byScope.set(key, customFieldsFromDefinitions(rows));
  }
  const union = new Map<string, CustomField>();
  for (const list of byScope.values()) for (const field of list) union.set(field.name, field);
  const stream = resolveStream(def, {
    overrides: override,
    customFields: [...union.values()],
    extraFields: await warehouse.existingExtraFields(def),
  });
  return { stream, byScope };
}
