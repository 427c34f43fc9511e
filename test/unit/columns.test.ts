import { describe, expect, it } from 'vitest';
import { defineStream, type ResolvedStream } from '../../connectors/types.js';
import { duckdbType, physicalColumns, requestFields, snakeCase } from '../../schemas/columns.js';

const base = defineStream({
  name: 'people',
  path: '/people',
  scope: 'event',
  cursor: 'updated_at',
  fields: { id: 'bigint', gender: 'choice', amount: 'decimal(12,2)', updated_at: 'timestamp' },
  expand: { homeAddress: 'address' },
  customFields: { definitions: 'questions' },
  verified: true,
  description: 'test stream',
});

describe('physicalColumns', () => {
  it('splits choices, adds event_id, expands selected addresses and appends the custom-fields column', () => {
    const resolved: ResolvedStream = {
      ...base,
      expandSelected: ['homeAddress'],
      customFieldList: [{ name: 'c_42', label: 'Diet', type: 'text' }],
    };
    const names = physicalColumns(resolved).map((c) => `${c.name}:${c.type}`);
    expect(names).toEqual([
      'id:bigint',
      'gender_id:bigint',
      'gender:text',
      'amount:decimal(12,2)',
      'updated_at:timestamp',
      'event_id:bigint',
      'home_address_line_1:text',
      'home_address_line_2:text',
      'home_address_line_3:text',
      'home_address_city:text',
      'home_address_state:text',
      'home_address_zip:text',
      'home_address_country:text',
      'custom_fields:json',
    ]);
    expect(requestFields(resolved)).toEqual(['id', 'gender', 'amount', 'updated_at', 'c_42']);
  });

  it('leaves unselected expansions out', () => {
    const names = physicalColumns({ ...base, expandSelected: [], customFieldList: [] }).map((c) => c.name);
    expect(names).not.toContain('home_address_city');
  });
});

describe('helpers', () => {
  it('maps types and names', () => {
    expect(snakeCase('billingAddress')).toBe('billing_address');
    expect(duckdbType('decimal(12,2)')).toBe('DECIMAL(12,2)');
    expect(duckdbType('bigint[]')).toBe('BIGINT[]');
  });
});
