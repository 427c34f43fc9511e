import { Command, CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { catalogue, getStream, STREAM_SETS } from '../../connectors/index.js';
import { formatCatalogue, registerStreamsCommand } from '../../src/cli/commands/streams.js';

function run(args: string[], globalJson = false): { out: string; err: string; code: number } {
  let out = '';
  let err = '';
  const program = new Command('evsync')
    .exitOverride()
    .configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (err += s) });
  if (globalJson) program.option('--json', 'global machine output');
  registerStreamsCommand(program);
  try {
    program.parse(['node', 'evsync', ...args]);
    return { out, err, code: 0 };
  } catch (e) {
    if (e instanceof CommanderError) return { out, err, code: e.exitCode };
    throw e;
  }
}

describe('formatCatalogue', () => {
  it('prints an aligned table with name, path, scope, key, cursor, cap, verified', () => {
    const text = formatCatalogue([getStream('registrants'), getStream('registration_audit')], { json: false });
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^name\s+path\s+scope\s+key\s+cursor\s+cap\s+verified$/);
    expect(lines[2]).toMatch(/^registrants\s+\/registrants\s+event\s+id\s+updated_at\s+1000\s+yes$/);
    expect(lines[3]).toMatch(
      /^registration_audit\s+\/registrations\/audit\/sessions\s+event\s+registrant_id,type,updated_at\s+updated_at\s+1000\s+yes$/,
    );
    expect(text).toContain('2 streams');
  });

  it('shows the parent of parent-scoped streams, "-" for no cursor, and counts unverified ones', () => {
    const text = formatCatalogue([getStream('data_list_items')], { json: false });
    expect(text).toMatch(/data_list_items\s+\/data-lists\/\{data_list_id\}\/items\s+data_lists\s+id\s+-\s+1000\s+no/);
    expect(text).toContain('1 stream; 1 not verified');
  });

  it('prints JSON: one object per stream with the table columns and more', () => {
    const parsed = JSON.parse(formatCatalogue(catalogue, { json: true })) as Record<string, unknown>[];
    expect(parsed).toHaveLength(37);
    expect(parsed.find((s) => s.name === 'contacts')).toMatchObject({
      path: '/contacts',
      scope: 'account',
      parent: null,
      key: ['id'],
      cursor: 'updated_at',
      maxPerPage: 200,
      verified: true,
      expand: ['homeAddress', 'workAddress', 'billingAddress'],
      customFields: 'contact_fields',
    });
    expect(parsed.find((s) => s.name === 'data_list_items')).toMatchObject({
      scope: 'data_lists',
      parent: { stream: 'data_lists', param: 'data_list_id', column: 'data_list_id' },
    });
  });
});

describe('evsync streams', () => {
  it('lists every stream by default', () => {
    const { out, code } = run(['streams']);
    expect(code).toBe(0);
    for (const s of catalogue) expect(out).toContain(s.name);
  });

  it('--set core --json prints the core streams as JSON', () => {
    const { out } = run(['streams', '--set', 'core', '--json']);
    expect((JSON.parse(out) as { name: string }[]).map((s) => s.name)).toEqual(STREAM_SETS.core);
  });

  it('honours the program-wide --json flag', () => {
    const { out } = run(['--json', 'streams', '--set', 'events'], true);
    expect(JSON.parse(out)).toHaveLength(1);
  });

  it('exits 2 with the valid names on an unknown stream', () => {
    const { err, code } = run(['streams', '--set', 'nope']);
    expect(code).toBe(2);
    expect(err).toMatch(/Unknown stream "nope"; valid: core, all/);
  });

  it('has help text with an example', () => {
    const { out } = run(['streams', '--help']);
    expect(out).toContain('--set <set>');
    expect(out).toContain('$ evsync streams --set core');
  });
});
