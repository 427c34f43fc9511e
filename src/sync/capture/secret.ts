/**
 * The shared secret deliveries carry in a header. Compared in constant time over SHA-256 digests (equal lengths
 * whatever the caller sends); the database keeps only the digest, never the secret.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** Shorter secrets are refused: the header is the only thing standing between the internet and the journal. */
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

/** Why a secret is unusable, or null. Never echoes the secret. */
export function secretProblem(secret: string | undefined): string | null {
  if (!secret) return 'EVSYNC_WEBHOOK_SECRET is not set (generate one, e.g. `openssl rand -hex 32`)';
  if (secret.length < MIN_SECRET_LENGTH)
    return `EVSYNC_WEBHOOK_SECRET is too short (at least ${MIN_SECRET_LENGTH} characters)`;
  if (/[\r\n\0]/.test(secret)) return 'EVSYNC_WEBHOOK_SECRET holds a line break or NUL (it must fit in an HTTP header)';
  return null;
}
