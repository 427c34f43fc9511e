import type { StreamDefinition } from '../../connectors/types.js';
import type { ScopeRef } from '../warehouse/index.js';

/** The account scope: streams without a parent. */
export const ACCOUNT_SCOPE: ScopeRef = { key: 'account', column: null, value: null };

export function eventScope(eventId: number): ScopeRef {
  return { key: `event:${eventId}`, column: 'event_id', value: eventId };
}

export function parentScope(stream: StreamDefinition, parentId: number): ScopeRef {
  if (typeof stream.scope !== 'object') throw new Error(`${stream.name} has no parent scope`);
  return {
    key: `${stream.scope.column.replace(/_id$/, '')}:${parentId}`,
    column: stream.scope.column,
    value: parentId,
  };
}

/** The query parameters and path a scope adds to a list call. */
export function scopedRequest(
  stream: StreamDefinition,
  path: string,
  scope: ScopeRef,
): { path: string; params: Record<string, number> } {
  if (stream.scope === 'account') return { path, params: {} };
  if (stream.scope === 'event') return { path, params: { event_id: scope.value as number } };
  return { path: path.replace(`{${stream.scope.param}}`, String(scope.value)), params: {} };
}

/** Sweeps keep their own cursor row so they never share a walk with the stream's incremental window. */
export function sweepScopeKey(scope: ScopeRef): string {
  return `${scope.key}/sweep`;
}
