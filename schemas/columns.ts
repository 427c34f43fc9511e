import type { FieldType, ResolvedStream, ScalarType } from '../connectors/types.js';

/**
 * One physical column of a stream's table and where its value comes from in the API record.
 * Normalized values by type: bigint/integer/double as number; decimal as a canonical decimal string
 * (`-166.00`, never a float); text as string; boolean as boolean; timestamp as `YYYY-MM-DD HH:MM:SS`;
 * date as `YYYY-MM-DD`; time as `HH:MM:SS`; bigint[] as number[]; text[] as string[]; json as JSON text.
 */
export interface ColumnSpec {
  readonly name: string;
  readonly type: ScalarType;
  /** The API field (or expand key) the value is read from. */
  readonly source: string;
  /**
   * For a choice field: which half of `{id, value}`. For an address: the member of the address object. `custom`:
   * the custom-fields column, filled from every `c_<id>` member of the record (custom-values.ts), not from `source`.
   */
  readonly part?: 'id' | 'value' | AddressPart | 'custom';
}

/**
 * The one column holding a record's own custom-field values (`c_<fieldId>` -> value as the service sent it), on the
 * tables of streams that have custom fields. A column per field made the table the union of every event's questions.
 */
export const CUSTOM_FIELDS_COLUMN = 'custom_fields';

/** The spec of the custom-fields column. */
const CUSTOM_FIELDS_SPEC: ColumnSpec = {
  name: CUSTOM_FIELDS_COLUMN,
  type: 'json',
  source: CUSTOM_FIELDS_COLUMN,
  part: 'custom',
};

const ADDRESS_PARTS = ['line_1', 'line_2', 'line_3', 'city', 'state', 'zip', 'country'] as const;
type AddressPart = (typeof ADDRESS_PARTS)[number];

/** `homeAddress` -> `home_address`. */
export function snakeCase(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

function columnsOfField(field: string, type: FieldType): ColumnSpec[] {
  if (type === 'choice') {
    return [
      { name: `${field}_id`, type: 'bigint', source: field, part: 'id' },
      { name: field, type: 'text', source: field, part: 'value' },
    ];
  }
  if (type === 'address') {
    const prefix = snakeCase(field);
    return ADDRESS_PARTS.map((part) => ({ name: `${prefix}_${part}`, type: 'text' as const, source: field, part }));
  }
  return [{ name: field, type, source: field }];
}

/**
 * The table's data columns, in a stable order: declared fields, the scope column when the API does not return it,
 * selected expansions, the custom-fields column (streams that have custom fields, whether or not any are known yet),
 * then fields discovered by schema evolution. System columns (`_synced_at`, ...) are the warehouse's business.
 */
export function physicalColumns(stream: ResolvedStream): ColumnSpec[] {
  const columns: ColumnSpec[] = [];
  const seen = new Set<string>();
  const add = (spec: ColumnSpec) => {
    if (!seen.has(spec.name)) {
      seen.add(spec.name);
      columns.push(spec);
    }
  };
  for (const [field, type] of Object.entries(stream.fields)) columnsOfField(field, type).forEach(add);
  // Event-scoped tables always carry event_id, even when the endpoint's records do not.
  if (stream.scope === 'event') add({ name: 'event_id', type: 'bigint', source: 'event_id' });
  else if (typeof stream.scope === 'object')
    add({ name: stream.scope.column, type: 'bigint', source: stream.scope.column });
  for (const key of stream.expandSelected) {
    const type = stream.expand?.[key];
    if (type) columnsOfField(key, type).forEach(add);
  }
  if (stream.customFields) add(CUSTOM_FIELDS_SPEC);
  // Columns added by schema evolution last, so earlier columns keep their positions as the table grows.
  if (stream.extraFields) {
    for (const [name, type] of Object.entries(stream.extraFields)) add({ name, type, source: name });
  }
  return columns;
}

/** The API fields to request with `fields=` for one scope (custom fields of that scope only). */
export function requestFields(stream: ResolvedStream, customFieldNames?: readonly string[]): string[] {
  const names = Object.keys(stream.fields);
  const customs = customFieldNames ?? stream.customFieldList.map((c) => c.name);
  return [...names, ...customs.filter((c) => !names.includes(c))];
}

/** The DuckDB type of a column type. Money is DECIMAL, never a float. */
export function duckdbType(type: ScalarType): string {
  switch (type) {
    case 'bigint':
      return 'BIGINT';
    case 'integer':
      return 'INTEGER';
    case 'double':
      return 'DOUBLE';
    case 'text':
      return 'VARCHAR';
    case 'boolean':
      return 'BOOLEAN';
    case 'timestamp':
      return 'TIMESTAMP';
    case 'date':
      return 'DATE';
    case 'time':
      return 'TIME';
    case 'bigint[]':
      return 'BIGINT[]';
    case 'text[]':
      return 'VARCHAR[]';
    case 'json':
      return 'JSON';
    default:
      return type.toUpperCase();
  }
}

// The column-type vocabulary belongs to the catalogue (connectors import nothing from here).
export { decimalParams, isScalarType } from '../connectors/types.js';
