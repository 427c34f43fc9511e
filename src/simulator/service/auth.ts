import { randomBytes } from 'node:crypto';
import { hash4, Rng, tag } from '../core/random.js';
import { formatTimestamp } from '../core/time.js';
import type { SimulatorAccount } from '../types.js';

/**
 * RFC 1738 URL-encoding as PHP's urlencode does it (the spec's "URL-encode the key and the secret"): everything but
 * letters, digits and `-_.` is %XX-escaped and a space becomes `+`.
 */
export function rfc1738Encode(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

export function rfc1738Decode(text: string): string | null {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/** The spec's Basic credential: base64(rfc1738(key) + ':' + rfc1738(secret)). */
export function encodeCredentials(clientId: string, clientSecret: string): string {
  return Buffer.from(`${rfc1738Encode(clientId)}:${rfc1738Encode(clientSecret)}`, 'utf8').toString('base64');
}

/**
 * Credentials per account, deterministic by seed. Secrets always contain `+`, `/` and `=`, so a client that skips
 * the URL-encoding step sends a different secret and gets a 401.
 */
export function makeAccounts(seed: number, names: string[]): SimulatorAccount[] {
  return names.map((name, i) => {
    const r = new Rng(hash4(seed, tag('credentials'), i));
    const clientId = `evs_${r.hex(8)}${i}`;
    const clientSecret = `${r.hex(6)}+${r.hex(10)}/${r.hex(8)}=${r.hex(4)}==`;
    return { clientId, clientSecret, encoded: encodeCredentials(clientId, clientSecret), name };
  });
}

interface Token {
  account: number;
  /** Simulated-clock milliseconds. */
  expiresMs: number;
}

export type BearerResult = { ok: true; account: number } | { ok: false; account: number | null };

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export class Auth {
  private readonly tokens = new Map<string, Token>();

  constructor(readonly accounts: SimulatorAccount[]) {}

  /** The account of a `Basic` header, or null (bad scheme, bad base64, unknown key or wrong secret). */
  basic(header: string | undefined): number | null {
    const m = /^Basic\s+(\S+)\s*$/i.exec(header ?? '');
    if (!m || !BASE64.test(m[1]!)) return null;
    const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return null;
    const key = rfc1738Decode(decoded.slice(0, colon));
    const secret = rfc1738Decode(decoded.slice(colon + 1));
    const index = this.accounts.findIndex((a) => a.clientId === key && a.clientSecret === secret);
    return index < 0 ? null : index;
  }

  issue(account: number, nowMs: number, ttlSeconds: number) {
    const token = randomBytes(24).toString('hex');
    // Whole seconds, so `expires_at` states the exact instant the token stops working.
    const expiresMs = (Math.floor(nowMs / 1000) + ttlSeconds) * 1000;
    this.tokens.set(token, { account, expiresMs });
    return { access_token: token, type: 'bearer', expires_at: formatTimestamp(expiresMs / 1000) };
  }

  /**
   * The account of a `Bearer` header. A known but expired token still names its account (so the answer can carry
   * that account's rate-limit headers), but is refused.
   */
  bearer(header: string | undefined, nowMs: number): BearerResult {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!m) return { ok: false, account: null };
    const token = this.tokens.get(m[1]!);
    if (!token) return { ok: false, account: null };
    if (nowMs >= token.expiresMs) return { ok: false, account: token.account };
    return { ok: true, account: token.account };
  }
}
