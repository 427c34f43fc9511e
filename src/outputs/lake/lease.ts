/**
 * One writer per account prefix: a small lease object (`_evsync/leases/account=<id>.json`) that names its holder
 * (host, PID, a random token) and an expiry. A writer takes it before writing anything and gives it back at the end;
 * another writer finds it held and is refused (LakeError 'held', exit 1), naming the holder and the expiry.
 *
 * Taking it is a conditional write: `If-None-Match: *` when there is none, `If-Match: <etag>` over an expired one,
 * so of two writers racing only one succeeds on stores with conditional writes (AWS S3, R2, MinIO). Stores that
 * ignore the condition (older MinIO, s3rver) are covered by reading the lease back: the narrow race left there is
 * documented in the README. A holder whose process is gone frees the lease early when the next writer runs on the
 * same host (cron on one machine); elsewhere it frees at its expiry, which a live holder pushes forward as it works.
 *
 * The same lease keeps two writers off one local Parquet folder (`<out>/_evsync/lease.json`, through
 * folder-store.ts): one rule for both places, only the wording differs.
 */

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { systemNow } from '../../../schemas/clock.js';
import { LakeError } from './errors.js';
import type { ObjectStore } from './store.js';

const LEASE_FORMAT = 'evsync-lake-lease';

/** What a lease needs of where it is kept: small whole objects, conditional writes, removal. */
export type LeaseStore = Pick<ObjectStore, 'get' | 'put' | 'remove' | 'describe'>;

/** How messages name a lease and the rule it keeps: the lake's by default. */
export interface LeaseWording {
  /** "the lake lease", "the folder lease": followed by where it is. */
  name: string;
  /** Why it is refused: "two writers never write one account". */
  rule: string;
}

export const LAKE_LEASE_WORDING: LeaseWording = { name: 'the lake lease', rule: 'two writers never write one account' };

export interface LeaseBody {
  format: typeof LEASE_FORMAT;
  version: 1;
  account: string;
  holder: { host: string; pid: number; token: string };
  /** What holds it, for the person reading a refusal (`export`, `sync --parquet-out`). */
  command: string;
  acquiredAt: string;
  renewedAt: string;
  expiresAt: string;
}

function parseLease(body: Buffer): LeaseBody | null {
  try {
    const v = JSON.parse(body.toString('utf8')) as Partial<LeaseBody> | null;
    if (
      v?.format === LEASE_FORMAT &&
      typeof v.holder?.host === 'string' &&
      typeof v.holder.pid === 'number' &&
      typeof v.holder.token === 'string' &&
      typeof v.expiresAt === 'string' &&
      !Number.isNaN(Date.parse(v.expiresAt))
    ) {
      return v as LeaseBody;
    }
  } catch {
    // Not JSON: reported below as not a lease.
  }
  return null;
}

function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as { code?: unknown }).code === 'ESRCH';
  }
}

/** Whether `lease` still keeps other writers out at `now`. */
export function leaseIsLive(lease: LeaseBody, now: number): boolean {
  if (Date.parse(lease.expiresAt) <= now) return false;
  return !(lease.holder.host === hostname() && processGone(lease.holder.pid));
}

function heldMessage(where: string, lease: LeaseBody, wording: LeaseWording): string {
  return (
    `${where} is held by ${lease.command} on ${lease.holder.host} (PID ${lease.holder.pid}) since ${lease.acquiredAt}, ` +
    `until ${lease.expiresAt} unless it renews; ${wording.rule}. Try again when it has finished ` +
    `(a holder that died frees it at its expiry, or at once for a writer on the same host)`
  );
}

export interface LeaseOptions {
  account: string;
  ttlMs: number;
  command: string;
  now?: () => number;
  wording?: LeaseWording;
}

/** The current lease at `key` if a live writer holds it (for refusing before a sync spends credits). */
export async function liveLease(store: LeaseStore, key: string, now: number): Promise<LeaseBody | null> {
  const current = await store.get(key);
  if (!current) return null;
  const lease = parseLease(current.body);
  if (!lease) return null;
  return leaseIsLive(lease, now) ? lease : null;
}

export function leaseRefusal(
  store: LeaseStore,
  key: string,
  lease: LeaseBody,
  wording: LeaseWording = LAKE_LEASE_WORDING,
): LakeError {
  return new LakeError(heldMessage(`${wording.name} ${store.describe(key)}`, lease, wording), 'held');
}

export class Lease {
  private etag: string;
  private renewedAt: number;

  private constructor(
    private readonly store: LeaseStore,
    readonly key: string,
    private body: LeaseBody,
    etag: string,
    private readonly opts: Required<LeaseOptions>,
    /** The expired or orphaned lease this one replaced, for a warning. */
    readonly replaced: LeaseBody | null,
  ) {
    this.etag = etag;
    this.renewedAt = opts.now();
  }

  static async acquire(store: LeaseStore, key: string, options: LeaseOptions): Promise<Lease> {
    const opts: Required<LeaseOptions> = { now: systemNow, wording: LAKE_LEASE_WORDING, ...options };
    const token = randomBytes(12).toString('hex');
    const where = `${opts.wording.name} ${store.describe(key)}`;
    // Three tries: a conflict means another writer wrote in between; the next read shows who.
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = opts.now();
      const current = await store.get(key);
      let replaced: LeaseBody | null = null;
      if (current) {
        const lease = parseLease(current.body);
        if (!lease) {
          throw new LakeError(
            `${where} is not an evsync lease; evsync will not overwrite it (remove it if it is stale)`,
            'refused',
          );
        }
        if (leaseIsLive(lease, now)) throw new LakeError(heldMessage(where, lease, opts.wording), 'held');
        replaced = lease;
      }
      const body: LeaseBody = {
        format: LEASE_FORMAT,
        version: 1,
        account: opts.account,
        holder: { host: hostname(), pid: process.pid, token },
        command: opts.command,
        acquiredAt: new Date(now).toISOString(),
        renewedAt: new Date(now).toISOString(),
        expiresAt: new Date(now + opts.ttlMs).toISOString(),
      };
      const put = await store.put(
        key,
        Buffer.from(`${JSON.stringify(body, null, 2)}\n`),
        'application/json',
        current?.etag ? { ifMatch: current.etag } : { ifAbsent: true },
      );
      if (put === 'conflict') continue;
      // Read back: a store that ignored the condition may have let another writer overwrite us.
      const back = await store.get(key);
      const mine = back ? parseLease(back.body) : null;
      if (back && mine?.holder.token === token) return new Lease(store, key, body, back.etag ?? put, opts, replaced);
    }
    const now = opts.now();
    const current = await store.get(key);
    const lease = current ? parseLease(current.body) : null;
    if (lease && leaseIsLive(lease, now)) throw new LakeError(heldMessage(where, lease, opts.wording), 'held');
    throw new LakeError(`${where}: could not be taken after 3 tries (other writers keep replacing it)`, 'held');
  }

  get expiresAt(): string {
    return this.body.expiresAt;
  }

  private renewing: Promise<void> | null = null;

  /**
   * Pushes the expiry forward once a third of it has passed; called after each upload. Uploads run concurrently:
   * one renewal at a time, or the second `If-Match` on the same etag would read as a lost lease.
   */
  async renewIfDue(): Promise<void> {
    if (this.renewing) return this.renewing;
    this.renewing = this.renew().finally(() => {
      this.renewing = null;
    });
    return this.renewing;
  }

  private async renew(): Promise<void> {
    const now = this.opts.now();
    if (now - this.renewedAt < this.opts.ttlMs / 3) return;
    const body = {
      ...this.body,
      renewedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + this.opts.ttlMs).toISOString(),
    };
    const put = await this.store.put(this.key, Buffer.from(`${JSON.stringify(body, null, 2)}\n`), 'application/json', {
      ifMatch: this.etag,
    });
    if (put === 'conflict') await this.lost();
    this.body = body;
    this.etag = put === 'conflict' ? this.etag : put;
    this.renewedAt = now;
  }

  /** Before a commit: the lease must still be ours (it may have expired while this process was stopped). */
  async assertHeld(): Promise<void> {
    const current = await this.store.get(this.key);
    const lease = current ? parseLease(current.body) : null;
    if (lease?.holder.token !== this.body.holder.token) await this.lost();
  }

  private async lost(): Promise<never> {
    const current = await this.store.get(this.key);
    const lease = current ? parseLease(current.body) : null;
    const by = lease ? ` to ${lease.command} on ${lease.holder.host} (PID ${lease.holder.pid})` : '';
    throw new LakeError(
      `lost ${this.opts.wording.name} ${this.store.describe(this.key)}${by} before committing; nothing more was made current, and the next run finishes what this one left`,
      'held',
    );
  }

  /** Gives the lease back if it is still ours; never removes another writer's. */
  async release(): Promise<void> {
    const current = await this.store.get(this.key);
    const lease = current ? parseLease(current.body) : null;
    if (lease?.holder.token === this.body.holder.token) await this.store.remove([this.key]);
  }
}
