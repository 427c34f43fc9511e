/**
 * Comparing the warehouse with the simulator's source, shared by the freshness benchmark (freshness-measure.ts)
 * and the engine tests (test/helpers/harness.ts): the stream resolved as the engine resolves it, and one
 * comparable form for a value from either side.
 */
import { customFieldsFromDefinitions, getStream, resolveStream } from '../connectors/index.js';
import type { ResolvedStream } from '../connectors/types.js';
import type { Simulator } from '../src/simulator/index.js';

/** The stream resolved the way the engine resolves it, custom fields from the source's definitions. */
export function resolvedFromTruth(sim: Simulator, name: string): ResolvedStream {
  const def = getStream(name);
  const customs = def.customFields ? customFieldsFromDefinitions(sim.truth(def.customFields.definitions).records) : [];
  return resolveStream(def, { customFields: customs });
}

/** One comparable form for a value from either side (warehouse JSON output or normalized source). */
export function canon(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  // Lists come back from DuckDB's JSON output as JSON text with string items; compare items as text.
  if (Array.isArray(value))
    return JSON.stringify(value.map((v) => (v !== null && typeof v === 'object' ? v : String(v))));
  if (typeof value === 'object') return JSON.stringify(value);
  if (typeof value === 'string' && /^[[{]/.test(value)) {
    try {
      return canon(JSON.parse(value));
    } catch {
      return value;
    }
  }
  return String(value);
}
