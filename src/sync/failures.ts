/**
 * How the executor reads an item's failure: the service refusing a path (a state to record), the service going
 * away (stop early, resume later), the stop signal (not a failure), or a failure of that item alone. And how
 * failures are told to the user: grouped per stream and cause, never one line per URL.
 */
import {
  BudgetExhaustedError,
  CredentialsRejectedError,
  ForbiddenError,
  isTransient,
  NotFoundError,
} from '../api/index.js';

type FailureKind = 'budget' | 'credentials' | 'refused' | 'transport' | 'stopped' | 'item';

export function classify(err: unknown, signal: AbortSignal | undefined): FailureKind {
  if (err instanceof BudgetExhaustedError) return 'budget';
  if (err instanceof CredentialsRejectedError) return 'credentials';
  if (err instanceof NotFoundError || err instanceof ForbiddenError) return 'refused';
  // A stop request aborts calls in flight: the item is pending (its checkpoint is saved), not failed.
  if (signal?.aborted) return 'stopped';
  // No answer, or a 5xx, after every retry (the client's own verdict, api/verdict.ts): the service is there but not
  // serving; as transient as a refused connection.
  if (isTransient(err)) return 'transport';
  return 'item';
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * An error message without the query strings of the URLs it names: a list call's URL lists every field, which
 * made one warning 400 characters long and said nothing the path does not.
 */
export function shortError(text: string): string {
  return text.replace(/(\/[^\s?:]*)\?[^\s:]*/g, '$1');
}

/** One line per stream and cause: `registrants: 12 scopes failed: GET /registrants: 503 (event:1, event:2, ...)`. */
export function groupFailures(failures: readonly { stream: string; scope: string; message: string }[]): string[] {
  const groups = new Map<string, { stream: string; message: string; scopes: string[] }>();
  for (const f of failures) {
    const message = shortError(f.message);
    const key = `${f.stream}\u0000${message}`;
    const group = groups.get(key) ?? { stream: f.stream, message, scopes: [] };
    group.scopes.push(f.scope);
    groups.set(key, group);
  }
  return [...groups.values()].map((g) => {
    if (g.scopes.length === 1) return `${g.stream}[${g.scopes[0]}]: ${g.message}`;
    const shown = g.scopes.slice(0, 5).join(', ');
    const more = g.scopes.length > 5 ? `, +${g.scopes.length - 5} more` : '';
    return `${g.stream}: ${g.scopes.length} scopes failed: ${g.message} (${shown}${more})`;
  });
}
