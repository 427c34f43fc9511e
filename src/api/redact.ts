/**
 * Keeps secrets out of messages. Two layers: the exact secret strings registered by live clients (client secret,
 * Basic string, access tokens), and patterns that catch credentials this process never saw (an echoed header).
 */

const REDACTED = '[REDACTED]';
/** Shorter strings would redact ordinary words; such secrets are still caught by the patterns below. */
const MIN_SECRET_LENGTH = 4;

const secrets = new Map<string, number>();
/** The registered secrets as one array, rebuilt only when the set changes (read once per stored record). */
let snapshot: readonly string[] = [];

/** Registers a secret; counted, so two clients sharing a credential can each forget theirs. */
export function registerSecret(secret: string): void {
  if (secret.length < MIN_SECRET_LENGTH) return;
  const n = secrets.get(secret) ?? 0;
  secrets.set(secret, n + 1);
  if (n === 0) snapshot = [...secrets.keys()];
}

export function forgetSecret(secret: string): void {
  const n = secrets.get(secret);
  if (n === undefined) return;
  if (n <= 1) {
    secrets.delete(secret);
    snapshot = [...secrets.keys()];
  } else secrets.set(secret, n - 1);
}

/**
 * The credentials live clients hold (client secrets and their encodings, Basic strings, current and recent
 * tokens): what stored values are scrubbed of, so an echoed token never reaches a table, a file or `rejected`.
 */
export function registeredSecrets(): readonly string[] {
  return snapshot;
}

const PATTERNS: [RegExp, string][] = [
  [/\b(Bearer|Basic)(\s+|%20|\+)[A-Za-z0-9._~+/%-]+=*/gi, `$1$2${REDACTED}`],
  [
    // `(?<!/)`: a key right after a slash is the end of a URL path (`POST /oauth2/token: connect ECONNREFUSED`),
    // not a credential label; without it the word after the path was redacted and the error lost its cause.
    /((?<!\/)"?(?:access_token|client_secret|authorization|password|token)"?\s*[:=]\s*"?)(?!(?:Bearer|Basic)\b)[^"&\s,}]+/gi,
    `$1${REDACTED}`,
  ],
];

/** Removes every registered secret and anything shaped like a credential from `text`. */
export function redact(text: string): string {
  let out = text;
  // Longest first, so a secret that contains another is removed whole.
  const known = [...secrets.keys()].sort((a, b) => b.length - a.length);
  for (const secret of known) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}
