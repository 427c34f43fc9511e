/**
 * `customFieldTypes` through the sync engine: a backfill of the simulator's registrants with one event's text
 * question typed `bigint` and its dropdown typed `text` stores the converted answers in the custom-fields column,
 * reports the answer that does not convert (record kept), records the types, and the event's analytics view has
 * the question as a BIGINT column.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSync } from '../../src/sync/index.js';
import type { SyncResult } from '../../src/sync/types.js';
import { DuckDbReader } from '../helpers/duckdb-reader.js';
import { type Harness, startHarness } from '../helpers/harness.js';

type Rec = Record<string, unknown>;

let h: Harness;
let result: SyncResult;
let eventId: number;
let textField: string;
let choiceField: string;
/** The one registrant of the event whose answer to the text question is not a number. */
let oddId: number;
let ids: number[];

beforeAll(async () => {
  h = await startHarness();
  const questions = h.sim.truth('event_questions').records;
  const registrants = h.sim.truth('registrants').records;
  const text = questions.find((q) => q.name === 'How did you hear about us?')!;
  eventId = Number(text.event_id);
  const choice = questions.find((q) => q.name === 'Dietary requirements' && Number(q.event_id) === eventId)!;
  textField = `c_${text.id}`;
  choiceField = `c_${choice.id}`;
  ids = registrants
    .filter((r) => Number(r.event_id) === eventId)
    .map((r) => Number(r.id))
    .sort((a, b) => a - b);
  expect(ids.length).toBeGreaterThan(2);
  oddId = ids[0]!;
  // The service sends a text answer as text: here the id's digits, and one answer that is no number.
  const { client } = await h.proxied({
    rewrite: (path, body) => {
      if (!path.startsWith('/registrants?')) return null;
      const page = JSON.parse(body) as { items: Rec[] };
      for (const item of page.items) {
        if (!(textField in item)) continue;
        item[textField] = Number(item.id) === oddId ? 'a colleague' : String(item.id);
      }
      return JSON.stringify(page);
    },
  });
  result = await runSync(client, h.warehouse, {
    mode: 'backfill',
    streams: 'registrants',
    lagSeconds: 0,
    overrides: { registrants: { customFieldTypes: { [textField]: 'bigint', [choiceField]: 'text' } } },
  });
  expect(result.errors).toEqual([]);
  expect(result.status).toBe('done');
}, 120_000);

afterAll(async () => {
  await h?.close();
});

async function answers(id: number): Promise<Rec> {
  const { rows } = await h.warehouse.query(
    'SELECT CAST(custom_fields AS VARCHAR) AS cf FROM registrants WHERE id = ?',
    [id],
  );
  return JSON.parse(String(rows[0]!.cf)) as Rec;
}

describe('a sync with customFieldTypes', () => {
  it('stores the typed answers converted: the digits as a number, the choice as its JSON text', async () => {
    const source = new Map(h.sim.truth('registrants').records.map((r) => [Number(r.id), r]));
    for (const id of ids.slice(1)) {
      const stored = await answers(id);
      expect([id, stored[textField]]).toEqual([id, id]);
      const sent = source.get(id)![choiceField];
      const want = Array.isArray(sent) && sent.length > 0 ? JSON.stringify(sent) : undefined;
      expect([id, stored[choiceField]]).toEqual([id, want]);
    }
  });

  it('keeps the registrant whose answer does not convert, without that answer, and says so', async () => {
    const stored = await answers(oddId);
    expect(stored).not.toHaveProperty(textField);
    expect(result.warnings.join('\n')).toContain(
      `registrants: fields kept out of the table: ${textField} (field "${textField}": cannot convert string "a colleague" to bigint (not an integer), 1 record)`,
    );
  });

  it('records the types, and types the question in the event view by them', async () => {
    const recorded = await h.warehouse.query(
      'SELECT table_name, column_name, type FROM _evsync.custom_field_types ORDER BY column_name',
    );
    expect(recorded.rows).toEqual(
      [
        { table_name: 'registrants', column_name: textField, type: 'bigint' },
        { table_name: 'registrants', column_name: choiceField, type: 'text' },
      ].sort((a, b) => (a.column_name < b.column_name ? -1 : 1)),
    );
    const columns = await h.warehouse.query(
      `SELECT column_name, data_type FROM duckdb_columns()
        WHERE schema_name = 'analytics' AND table_name = ? AND column_name IN (?, ?)`,
      [`registrants_event_${eventId}`, 'How did you hear about us?', 'Dietary requirements'],
    );
    expect(Object.fromEntries(columns.rows.map((r) => [r.column_name, r.data_type]))).toEqual({
      'How did you hear about us?': 'BIGINT',
      'Dietary requirements': 'VARCHAR',
    });
    const { rows } = await h.warehouse.query(
      `SELECT id, "How did you hear about us?" AS heard FROM analytics.registrants_event_${eventId} ORDER BY id`,
    );
    expect(rows.map((r) => [Number(r.id), r.heard === null ? null : Number(r.heard)])).toEqual(
      ids.map((id) => [id, id === oddId ? null : id]),
    );
  });

  it('gives a snapshot the same view types: the recorded types are copied into it', async () => {
    const target = join(h.dir, 'snapshot.duckdb');
    const published = await h.warehouse.publishSnapshot(target);
    expect(published.views.warnings).toEqual([]);
    const reader = await DuckDbReader.open(target);
    try {
      const typed = await reader.query(
        `SELECT data_type FROM duckdb_columns() WHERE schema_name = 'analytics'
            AND table_name = 'registrants_event_${eventId}' AND column_name = 'How did you hear about us?'`,
      );
      expect(typed).toEqual([{ data_type: 'BIGINT' }]);
    } finally {
      await reader.close();
    }
  });
});
