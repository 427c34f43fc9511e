/**
 * The catalogue held against the simulator's own route table (src/simulator/schema/streams.ts), which was written
 * independently from the same spec and facts page: paths, scopes, page caps, cursors, expansions and custom field
 * sources must agree, and every value the simulator can put in a field we declare must normalize.
 */
import { describe, expect, it } from 'vitest';
import { catalogue, resolveStream } from '../../connectors/index.js';
import { createNormalizer } from '../../normalizer/normalize.js';
import type { FieldKind } from '../../src/simulator/schema/kinds.js';
import { STREAMS } from '../../src/simulator/schema/streams.js';

// Values of each simulator field kind, as its generator writes them (kinds.ts documents the shapes).
const SAMPLES: Record<FieldKind, readonly unknown[]> = {
  int: [123, null],
  num: [12.5, 0, null],
  money: ['-166.00', '0.00', '19.99'],
  str: ['text', ''],
  ts: ['2024-05-06 07:08:09', null],
  date: ['2024-05-06', null],
  time: ['09:30:00', null],
  bool: [true, false],
  bool01: [0, 1],
  choice: [{ id: 1, value: 'Female' }, null],
  ints: [[1, 2], []],
  choices: [[{ id: 1, value: 'A' }], []],
  json: [{ a: 1 }, [{ key: 'X-Token', value: 'v' }]],
};

// Fields whose simulator kind is a plain string with a known format (the spec: "comma-separated session identifiers").
const FIELD_SAMPLES: Record<string, readonly unknown[]> = {
  'registration_audit.session_ids': ['12,13', '12', ''],
};

const simByName = new Map(STREAMS.map((s) => [s.name, s]));

describe('catalogue vs simulator routes', () => {
  it('has the same streams', () => {
    expect(catalogue.map((s) => s.name).sort()).toEqual(STREAMS.map((s) => s.name).sort());
  });

  it.each(catalogue.map((s) => [s.name, s] as const))('%s: same path, scope, cap, cursor, expand, custom', (_, def) => {
    const sim = simByName.get(def.name)!;
    const scope = typeof def.scope === 'object' ? 'dataList' : def.scope;
    // The audit log is read by time window; the catalogue names the field those windows bound.
    const simCursor = def.kind === 'audit' ? 'updated_at' : sim.cursor;
    expect({
      path: def.path,
      scope,
      cap: def.maxPerPage,
      cursor: def.cursor,
      expand: Object.keys(def.expand ?? {}),
      custom: def.customFields?.definitions ?? null,
      hasId: def.key.includes('id'),
    }).toEqual({
      path: sim.path,
      scope: sim.scope,
      cap: sim.cap,
      cursor: simCursor,
      expand: [...sim.expand],
      custom: sim.custom ?? null,
      hasId: sim.hasId,
    });
  });

  it.each(catalogue.map((s) => [s.name, s] as const))(
    '%s: every simulator value of a declared field normalizes',
    (_, def) => {
      const sim = simByName.get(def.name)!;
      const normalizer = createNormalizer(resolveStream(def));
      const base: Record<string, unknown> = {
        id: 1,
        registrant_id: 1,
        type: 'session_ids',
        updated_at: '2024-01-01 00:00:00',
      };
      for (const [field, kind] of Object.entries(sim.fields)) {
        if (!(field in def.fields)) continue;
        for (const value of FIELD_SAMPLES[`${def.name}.${field}`] ?? SAMPLES[kind]) {
          if (def.key.includes(field) && (value === null || value === '')) continue;
          const result = normalizer.normalize({ ...base, [field]: value });
          expect(result.ok ? 'ok' : result.reason, `${def.name}.${field} (${kind}) = ${JSON.stringify(value)}`).toBe(
            'ok',
          );
        }
      }
    },
  );

  it('agrees with the simulator on the field lists of the record types the facts page documents', () => {
    const documented = [
      'events',
      'contacts',
      'webhooks',
      'webhook_groups',
      'registrants',
      'sessions',
      'speakers',
      'sponsors',
      'registrant_types',
      'discount_codes',
      'transactions',
      'registrant_line_items',
      'session_attendance',
      'session_scans',
      'registration_audit',
    ];
    for (const name of documented) {
      const def = catalogue.find((d) => d.name === name)!;
      const sim = simByName.get(name)!;
      // apply_to_attend is the simulator's own addition (for the Apply to Attend states), not a documented field.
      const simFields = Object.keys(sim.fields).filter((f) => f !== 'apply_to_attend');
      expect([name, Object.keys(def.fields).sort()]).toEqual([name, simFields.sort()]);
    }
  });
});
