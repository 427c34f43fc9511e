/** Key + secret from the account page, or the pre-encoded Basic string the same page hands out. */
export type Credentials = { clientId: string; clientSecret: string } | { encoded: string };

/**
 * PHP's `urlencode` (RFC 1738 as the service documents it): letters, digits and `-_.` stay, space becomes `+`,
 * everything else `%XX`. encodeURIComponent leaves `!'()*~` alone, so those are escaped on top.
 */
export function urlencodeRfc1738(value: string): string {
  return encodeURIComponent(value)
    .replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

/** The string sent after `Basic `: base64(urlencode(key) + ':' + urlencode(secret)), or the pre-encoded one. */
export function encodeCredentials(c: Credentials): string {
  if ('encoded' in c) {
    // Users paste the string with or without the scheme; tolerate both and surrounding whitespace.
    const encoded = c.encoded.trim().replace(/^Basic\s+/i, '');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) {
      throw new TypeError('credentials: the pre-encoded string is not base64');
    }
    return encoded;
  }
  if (!c.clientId || !c.clientSecret) throw new TypeError('credentials: clientId and clientSecret are both required');
  return Buffer.from(`${urlencodeRfc1738(c.clientId)}:${urlencodeRfc1738(c.clientSecret)}`, 'utf8').toString('base64');
}

/**
 * Credentials from the environment: `EVSYNC_CREDENTIALS` (pre-encoded) wins over
 * `EVSYNC_CLIENT_ID` + `EVSYNC_CLIENT_SECRET`. Returns null when neither is set.
 */
export function credentialsFromEnv(env: NodeJS.ProcessEnv = process.env): Credentials | null {
  const encoded = env.EVSYNC_CREDENTIALS?.trim();
  if (encoded) return { encoded };
  const clientId = env.EVSYNC_CLIENT_ID?.trim();
  const clientSecret = env.EVSYNC_CLIENT_SECRET;
  if (clientId && clientSecret) return { clientId, clientSecret };
  return null;
}

/** The secret strings a set of credentials implies, for redaction. */
export function secretsOf(c: Credentials): string[] {
  if ('encoded' in c) return [encodeCredentials(c), c.encoded.trim()];
  return [c.clientSecret, urlencodeRfc1738(c.clientSecret), encodeURIComponent(c.clientSecret), encodeCredentials(c)];
}

/**
 * The client id of these credentials (never the secret): read from the pre-encoded Basic string when that is what
 * was given. What the warehouse records as the account it belongs to.
 */
export function clientIdOf(c: Credentials): string {
  if ('clientId' in c) return c.clientId;
  const decoded = Buffer.from(c.encoded, 'base64').toString('utf8');
  const id = decoded.slice(0, Math.max(0, decoded.indexOf(':')));
  try {
    return decodeURIComponent(id.replace(/\+/g, ' '));
  } catch {
    return id;
  }
}
