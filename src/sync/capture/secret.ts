/**
 * The shared secret deliveries carry in a header. Compared in constant time over SHA-256 digests (equal lengths
 * whatever the caller sends); the database keeps only the digest, never the secret.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Shorter secrets are refused: the header is the only thing standing between the internet and the journal. The CLI
 * refuses them (cli/secret-env.ts, with the admin token's).
 */
export const MIN_SECRET_LENGTH = 16;

export function secretDigest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** The hex digest stored in `_evsync.meta` (`webhook_secret_sha256`). */
export function secretHashHex(secret: string): string {
  return secretDigest(secret).toString('hex');
}

/** Whether a header value matches, in time independent of where they differ. */
export function secretMatches(expected: Buffer, given: string | string[] | undefined): boolean {
  if (typeof given !== 'string') return false;
  return timingSafeEqual(expected, secretDigest(given));
}
