/**
 * Text that should hold a JSON object (a socket request, a mark in `_evsync.meta`), read defensively: text that is
 * not JSON, a scalar or null is null, never an exception, since such text comes from outside the process.
 */
export function parseJsonObject(text: string): Record<string, unknown> | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  return v && typeof v === 'object' ? (v as Record<string, unknown>) : null;
}
