/** Small stream fixtures and a temporary warehouse for the warehouse tests (independent of the catalogue). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import {
  type CustomField,
  defineStream,
  type FieldType,
  type NormalizedRow,
  type ResolvedStream,
  type ScalarType,
  type StreamDefinition,
} from '../../connectors/types.js';
import type { CursorState, LoadPageInput, ScopeRef } from '../../src/warehouse/index.js';
import { type OpenOptions, Warehouse } from '../../src/warehouse/index.js';

export function resolve(
  def: StreamDefinition,
  opts: { customs?: CustomField[]; expand?: string[]; extra?: Record<string, ScalarType> } = {},
): ResolvedStream {
  return {
    ...def,
    expandSelected: opts.expand ?? [],
    customFieldList: opts.customs ?? [],
    ...(opts.extra ? { extraFields: opts.extra } : {}),
  };
}

function stream(
  name: string,
  fields: Record<string, FieldType>,
  extra: Partial<StreamDefinition> = {},
): StreamDefinition {
  return defineStream({
    name,
    path: `/${name}`,
    scope: 'event',
    cursor: 'updated_at' in fields ? 'updated_at' : null,
    fields,
    verified: true,
    description: `test ${name}`,
    ...extra,
  });
}

export const registrantsDef = stream(
  'registrants',
  {
    id: 'bigint',
    event_id: 'bigint',
    reg_type_id: 'bigint',
    package_id: 'bigint',
    discount_code: 'text',
    email: 'text',
    registration_status: 'text',
    registered_at: 'timestamp',
    created_at: 'timestamp',
    checked_in_at: 'timestamp',
    individual_gross: 'decimal(12,2)',
    session_ids: 'bigint[]',
    updated_at: 'timestamp',
  },
  { customFields: { definitions: 'event_questions' } },
);
export const registrants = resolve(registrantsDef, { customs: [{ name: 'c_7', label: 'Diet', type: 'text' }] });

export const events = resolve(
  stream(
    'events',
    { id: 'bigint', name: 'text', status: 'text', start_date: 'date', updated_at: 'timestamp' },
    {
      scope: 'account',
    },
  ),
);
export const sessions = resolve(
  stream('sessions', { id: 'bigint', event_id: 'bigint', name: 'text', capacity: 'integer', updated_at: 'timestamp' }),
);
export const sessionAttendance = resolve(
  stream('session_attendance', {
    id: 'bigint',
    session_id: 'bigint',
    registrant_id: 'bigint',
    check_in_date: 'timestamp',
  }),
);
export const transactions = resolve(
  stream('transactions', {
    id: 'bigint',
    registrant_id: 'bigint',
    type: 'text',
    status: 'text',
    amount: 'decimal(12,2)',
    updated_at: 'timestamp',
  }),
);
export const registrantTypes = resolve(stream('registrant_types', { id: 'bigint', name: 'text' }));
export const packages = resolve(stream('packages', { id: 'bigint', name: 'text' }));
export const discountCodes = resolve(stream('discount_codes', { id: 'bigint', event_id: 'bigint', code: 'text' }));
export const speakers = resolve(stream('speakers', { id: 'bigint', event_id: 'bigint', first_name: 'text' }));
export const sponsors = resolve(stream('sponsors', { id: 'bigint', event_id: 'bigint', name: 'text' }));
/** The definitions of the registrants' custom fields (event questions: id, event, label, type). */
export const eventQuestions = resolve(
  stream('event_questions', { id: 'bigint', event_id: 'bigint', name: 'text', type: 'text', updated_at: 'timestamp' }),
);

/** The custom-fields column's value (as the normalizer writes it) of a record answering `answers`. */
export function customFields(answers: Record<string, unknown>): string {
  return JSON.stringify(answers);
}

/** An append-only log with a composite key (like registration_audit). */
export const audit = resolve(
  stream(
    'audit_log',
    { registrant_id: 'bigint', type: 'text', updated_at: 'timestamp', session_id: 'bigint', note: 'text' },
    { key: ['registrant_id', 'type', 'updated_at'], kind: 'audit', cursor: null },
  ),
);

/** A stream listed under a parent record. */
export const listItems = resolve(
  stream(
    'list_items',
    { id: 'bigint', value: 'text' },
    { scope: { parent: 'lists', param: 'list_id', column: 'list_id' }, path: '/lists/{list_id}/items' },
  ),
);

/** Every column type, with an expansion (address) to test columns a page may not carry. */
export const typed = stream(
  'typed',
  {
    id: 'bigint',
    n: 'integer',
    d: 'double',
    money: 'decimal(12,2)',
    rate: 'decimal(7,4)',
    flag: 'boolean',
    at: 'timestamp',
    day: 'date',
    clock: 'time',
    ids: 'bigint[]',
    tags: 'text[]',
    meta: 'json',
    gender: 'choice',
    label: 'text',
    updated_at: 'timestamp',
  },
  { expand: { homeAddress: 'address' } },
);

export function eventScope(id: number): ScopeRef {
  return { key: `event:${id}`, column: 'event_id', value: id };
}
export const accountScope: ScopeRef = { key: 'account', column: null, value: null };

export function cursor(stream: string, scope: string, over: Partial<CursorState> = {}): CursorState {
  return {
    stream,
    scope,
    watermark: '2024-05-01 00:00:00',
    walk: null,
    lastPages: null,
    lastSweepAt: null,
    updatedAt: '2024-05-01 00:00:05',
    ...over,
  };
}

export interface TempWarehouse {
  w: Warehouse;
  dir: string;
  path: string;
  cleanup(): Promise<void>;
}

export async function openTemp(options: OpenOptions = {}): Promise<TempWarehouse> {
  const dir = mkdtempSync(join(tmpdir(), 'evsync-wh-test-'));
  const path = join(dir, 'test.duckdb');
  const w = await Warehouse.open(path, options);
  return {
    w,
    dir,
    path,
    async cleanup() {
      await w.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A fresh temporary warehouse for each test of the calling file: opened before the test (then handed to `opened`,
 * which keeps what the tests use), closed and removed after it.
 */
export function tempWarehouseEach(opened: (t: TempWarehouse) => void): void {
  let t: TempWarehouse;
  beforeEach(async () => {
    t = await openTemp();
    opened(t);
  });
  afterEach(async () => {
    await t.cleanup();
  });
}

/** loadPage with defaults: no rejected records, run 'run-1'. */
export function page(
  w: Warehouse,
  stream: ResolvedStream,
  scope: ScopeRef,
  rows: NormalizedRow[],
  over: Partial<LoadPageInput> = {},
) {
  return w.loadPage({ stream, scope, runId: 'run-1', rows, rejected: [], ...over });
}

/** Rows of a query, for assertions. */
export async function rows(w: Warehouse, sql: string, params?: unknown[]) {
  return (await w.query(sql, params)).rows;
}

/** A registrant row as the loader takes it (normalized), with `over` changing what a test needs. */
export const reg = (id: number, over: Record<string, unknown> = {}) => ({
  id,
  event_id: null,
  email: `r${id}@example.com`,
  registration_status: 'confirmed',
  individual_gross: '10.00',
  session_ids: [1, 2],
  updated_at: '2024-01-01 00:00:00',
  ...over,
});
