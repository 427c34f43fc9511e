import type { Now } from '../../schemas/clock.js';
import type { ServerClock } from './clock.js';

export interface Token {
  accessToken: string;
  /** `expires_at` as an instant (it is UTC on the wire). */
  expiresAt: Date;
  /** Lifetime as granted, on the server clock; bounds the refresh margin for short-lived tokens. */
  lifetimeMs: number;
}

/**
 * Caches the bearer token and refreshes it before `expires_at` on the server's clock. Concurrent callers share one
 * refresh (single flight); a 401 invalidates only the token it was sent with, so a burst of 401s costs one refresh.
 */
export class TokenManager {
  private token: Token | null = null;
  private pending: Promise<Token> | null = null;

  constructor(
    private readonly fetchToken: () => Promise<Token>,
    private readonly clock: ServerClock,
    private readonly now: Now,
    private readonly marginMs: number,
  ) {}

  get current(): Token | null {
    return this.token;
  }

  async get(): Promise<Token> {
    const t = this.token;
    if (t && !this.isStale(t)) return t;
    return this.refresh();
  }

  /** Drops `used` if it is still the cached token: the next get() fetches (once) a fresh one. */
  invalidate(used: Token): void {
    if (this.token === used) this.token = null;
  }

  isStale(t: Token): boolean {
    const now = this.clock.nowMs() ?? this.now();
    // A token shorter-lived than twice the margin would otherwise be refreshed on every call.
    const margin = Math.min(this.marginMs, t.lifetimeMs / 2);
    return now >= t.expiresAt.getTime() - margin;
  }

  private refresh(): Promise<Token> {
    if (!this.pending) {
      this.pending = this.fetchToken()
        .then((t) => {
          this.token = t;
          return t;
        })
        .finally(() => {
          this.pending = null;
        });
    }
    return this.pending;
  }
}
