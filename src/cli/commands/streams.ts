/**
 * `evsync streams`: the connector catalogue as a table for people or JSON for programs. It needs no credentials,
 * no network and no database, so it imports nothing heavy.
 */
import type { Command } from 'commander';
import { selectStreams } from '../../../connectors/index.js';
import type { FieldType, StreamDefinition, StreamScope } from '../../../connectors/types.js';

/** One stream as `evsync streams --json` prints it. */
interface CatalogueEntry {
  readonly name: string;
  readonly path: string;
  /** `account`, `event`, or the parent stream's name for parent-scoped streams. */
  readonly scope: string;
  /** For parent-scoped streams: the path placeholder and table column the parent id fills. */
  readonly parent: { readonly stream: string; readonly param: string; readonly column: string } | null;
  readonly kind: StreamDefinition['kind'];
  readonly key: readonly string[];
  readonly cursor: string | null;
  readonly maxPerPage: number;
  readonly verified: boolean;
  readonly description: string;
  readonly fields: Readonly<Record<string, FieldType>>;
  readonly expand: readonly string[];
  /** The stream whose records define this stream's `c_<id>` custom fields. */
  readonly customFields: string | null;
}

function scopeName(scope: StreamScope): string {
  return typeof scope === 'object' ? scope.parent : scope;
}

function catalogueEntry(def: StreamDefinition): CatalogueEntry {
  return {
    name: def.name,
    path: def.path,
    scope: scopeName(def.scope),
    parent:
      typeof def.scope === 'object'
        ? { stream: def.scope.parent, param: def.scope.param, column: def.scope.column }
        : null,
    kind: def.kind,
    key: [...def.key],
    cursor: def.cursor,
    maxPerPage: def.maxPerPage,
    verified: def.verified,
    description: def.description,
    fields: { ...def.fields },
    expand: Object.keys(def.expand ?? {}),
    customFields: def.customFields?.definitions ?? null,
  };
}

const HEADERS = ['name', 'path', 'scope', 'key', 'cursor', 'cap', 'verified'] as const;

/** The catalogue as an aligned table (name, path, scope, key, cursor, cap, verified) or a JSON array. */
export function formatCatalogue(streams: readonly StreamDefinition[], opts: { json: boolean }): string {
  if (opts.json) return `${JSON.stringify(streams.map(catalogueEntry), null, 2)}\n`;
  const rows = streams.map((s) => [
    s.name,
    s.path,
    scopeName(s.scope),
    s.key.join(','),
    s.cursor ?? '-',
    String(s.maxPerPage),
    s.verified ? 'yes' : 'no',
  ]);
  const widths = HEADERS.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  // The cap is a number: right-aligned like the other tables of the CLI.
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (HEADERS[i] === 'cap' ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const unverified = streams.filter((s) => !s.verified).length;
  const footer =
    `${streams.length} stream${streams.length === 1 ? '' : 's'}` +
    (unverified > 0
      ? `; ${unverified} not verified (path or fields inferred: override them in evsync.config.json)`
      : '');
  return [line(HEADERS), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line), '', footer, ''].join('\n');
}

interface StreamsFlags {
  json?: boolean;
  set?: string;
}

const HELP = `
Columns: scope is account, event (listed per event) or the parent stream; cursor is the field an incremental sync
searches by ("-": snapshot the stream); cap is the documented page maximum (200 whenever expand is used); verified
is "no" where the path or the fields are inferred rather than documented.

Examples:
  $ evsync streams                      # every stream
  $ evsync streams --set core           # the default selection of sync
  $ evsync streams --set registrants,transactions --json | jq '.[].fields'`;

export function registerStreamsCommand(program: Command): void {
  program
    .command('streams')
    .description('list the streams evsync can sync (the connector catalogue)')
    .option('--json', 'print a JSON array (with fields, expansions and custom field sources)')
    .option('--set <set>', 'core, all, or a comma list of stream names', 'all')
    .addHelpText('after', HELP)
    .action(function (this: Command) {
      // --json is also a global flag of the program: read it from wherever it was given.
      const flags = this.optsWithGlobals<StreamsFlags>();
      let streams: StreamDefinition[];
      try {
        streams = selectStreams(flags.set ?? 'all');
      } catch (err) {
        // Exit code 2 (usage): commander throws under exitOverride, or exits with it.
        this.error(`error: ${err instanceof Error ? err.message : String(err)}`, {
          exitCode: 2,
          code: 'evsync.streams.unknown',
        });
      }
      const write = this.configureOutput().writeOut ?? ((s: string) => process.stdout.write(s));
      write(formatCatalogue(streams, { json: flags.json === true }));
    });
}
