/**
 * Header values are secrets (evsync's own webhook secret travels in a group header): records of streams that declare
 * `secretValues` keep each header's key and lose its value before they are normalized and stored.
 */
import type { StreamDefinition } from '../../connectors/types.js';

const REDACTED_VALUE = '[redacted]';

function redactList(value: unknown): unknown {
  const list = typeof value === 'string' ? parse(value) : value;
  if (!Array.isArray(list)) return value === null || value === undefined ? value : REDACTED_VALUE;
  return list.map((h) =>
    h && typeof h === 'object' && !Array.isArray(h) ? { ...(h as object), value: REDACTED_VALUE } : REDACTED_VALUE,
  );
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The records with their secret values replaced (the same array when the stream declares none). */
export function withoutSecretValues(stream: StreamDefinition, records: readonly unknown[]): readonly unknown[] {
  const fields = stream.secretValues;
  if (!fields || fields.length === 0) return records;
  return records.map((r) => {
    if (!r || typeof r !== 'object' || Array.isArray(r)) return r;
    const out: Record<string, unknown> = { ...(r as Record<string, unknown>) };
    for (const f of fields) if (f in out) out[f] = redactList(out[f]);
    return out;
  });
}
