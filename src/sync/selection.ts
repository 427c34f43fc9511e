import { getStream, STREAM_SETS, selectStreams } from '../../connectors/index.js';
import type { StreamDefinition } from '../../connectors/types.js';

/**
 * The streams a run walks, in dependency order. A selection pulls in what it cannot run without: `events` for the
 * event scopes, the parent of a parent-scoped stream, and the definitions of custom fields (so `c_<id>` columns
 * are requested by name: default field sets never include them).
 */
export interface Selection {
  /** Streams the user asked for. */
  requested: StreamDefinition[];
  /** Account-scoped streams (events first): they give the scopes of everything else. */
  accountPhase: StreamDefinition[];
  /** Event-scoped custom-field definitions and parent-scoped streams. */
  dependentPhase: StreamDefinition[];
  /** Everything else event-scoped. */
  eventPhase: StreamDefinition[];
  /** Streams added only because a requested one needs them. */
  implied: string[];
  /** Streams the user named one by one (not through a set such as `core` or `all`). */
  named: Set<string>;
}

function isEventScoped(s: StreamDefinition): boolean {
  return s.scope === 'event';
}

export function resolveSelection(spec: string, options: { customFields: boolean }): Selection {
  const requested = selectStreams(spec);
  const names = new Set(requested.map((s) => s.name));
  const implied: string[] = [];
  const add = (name: string) => {
    if (!names.has(name)) {
      names.add(name);
      implied.push(name);
    }
  };
  for (const stream of requested) {
    if (stream.scope === 'event') add('events');
    if (typeof stream.scope === 'object') add(stream.scope.parent);
    if (options.customFields && stream.customFields) add(stream.customFields.definitions);
  }
  const all = [...names].map((name) => getStream(name));
  const definitionNames = new Set(
    all.flatMap((stream) => (stream.customFields ? [stream.customFields.definitions] : [])),
  );
  const accountPhase = all
    .filter((s) => s.scope === 'account')
    .sort((a, b) => Number(b.name === 'events') - Number(a.name === 'events'));
  const dependentPhase = all.filter(
    (s) => typeof s.scope === 'object' || (isEventScoped(s) && definitionNames.has(s.name)),
  );
  const eventPhase = all.filter((s) => isEventScoped(s) && !definitionNames.has(s.name));
  const named = new Set(
    spec
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== '' && !(p in STREAM_SETS)),
  );
  return { requested, accountPhase, dependentPhase, eventPhase, implied, named };
}
