/**
 * The account lease on a real S3 API (loopback s3rver), with an injected clock: a live holder elsewhere refuses,
 * an expired one is taken over, renewal pushes the expiry, and release never
 * removes another writer's lease.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoopbackS3, startLoopbackS3 } from '../../bench/s3-loopback.js';
import { LakeError } from '../../src/outputs/lake/errors.js';
import { Lease, type LeaseBody } from '../../src/outputs/lake/lease.js';
import { openS3Store } from '../../src/outputs/lake/s3-store.js';
import type { ObjectStore } from '../../src/outputs/lake/store.js';
import { BUCKET, getObject, putObject, s3Env, testClient } from './helpers.js';

let s3: LoopbackS3;
let client: S3Client;
let store: ObjectStore;

beforeAll(async () => {
  s3 = await startLoopbackS3([BUCKET]);
  client = testClient(s3.endpoint);
  store = await openS3Store({
    bucket: BUCKET,
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    partSizeBytes: 5 << 20,
    partConcurrency: 1,
    env: s3Env(),
  });
});
afterAll(async () => {
  store?.close();
  client?.destroy();
  await s3?.close();
});

const T0 = Date.parse('2030-01-01T00:00:00Z');
const TTL = 600_000;

function foreignLease(expiresAt: number): LeaseBody {
  return {
    format: 'evsync-lake-lease',
    version: 1,
    account: 'a',
    holder: { host: 'another-host.example', pid: 4242, token: 'theirs' },
    command: 'evsync sync --account a',
    acquiredAt: new Date(T0 - 1000).toISOString(),
    renewedAt: new Date(T0 - 1000).toISOString(),
    expiresAt: new Date(expiresAt).toISOString(),
  };
}

async function leaseAt(key: string): Promise<LeaseBody | null> {
  const body = await getObject(client, key);
  return body ? (JSON.parse(body.toString()) as LeaseBody) : null;
}

describe('lease', () => {
  it('refuses while a holder on another host is within its expiry, and takes it over after', async () => {
    const key = 'l1/_evsync/leases/account=a.json';
    await putObject(client, key, JSON.stringify(foreignLease(T0 + TTL)));
    const refused = await Lease.acquire(store, key, { account: 'a', ttlMs: TTL, command: 'me', now: () => T0 }).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(LakeError);
    expect((refused as LakeError).verdict).toBe('held');
    expect((refused as LakeError).message).toContain('evsync sync --account a on another-host.example (PID 4242)');
    expect((await leaseAt(key))?.holder.token).toBe('theirs');

    const later = T0 + TTL + 1;
    const lease = await Lease.acquire(store, key, { account: 'a', ttlMs: TTL, command: 'me', now: () => later });
    expect(lease.replaced?.holder.token).toBe('theirs');
    expect((await leaseAt(key))?.command).toBe('me');
    await lease.release();
    expect(await leaseAt(key)).toBeNull();
  });

  it('renews once a third of the expiry has passed, not before', async () => {
    const key = 'l2/_evsync/leases/account=a.json';
    let now = T0;
    const lease = await Lease.acquire(store, key, { account: 'a', ttlMs: TTL, command: 'me', now: () => now });
    const first = (await leaseAt(key))?.expiresAt;
    await lease.renewIfDue();
    expect((await leaseAt(key))?.expiresAt).toBe(first);
    now = T0 + TTL / 3 + 1;
    await Promise.all([lease.renewIfDue(), lease.renewIfDue(), lease.renewIfDue()]);
    expect((await leaseAt(key))?.expiresAt).toBe(new Date(now + TTL).toISOString());
    await lease.assertHeld();
    await lease.release();
  });

  it('a writer that lost its lease is told so before committing, and its release leaves the new holder alone', async () => {
    const key = 'l3/_evsync/leases/account=a.json';
    const lease = await Lease.acquire(store, key, { account: 'a', ttlMs: TTL, command: 'me', now: () => T0 });
    await putObject(client, key, JSON.stringify(foreignLease(T0 + 10 * TTL)));
    await expect(lease.assertHeld()).rejects.toThrow(
      /lost the lake lease .* to evsync sync --account a on another-host/,
    );
    await lease.release();
    expect((await leaseAt(key))?.holder.token).toBe('theirs');
  });

  it('refuses to overwrite an object at the lease key that is not an evsync lease', async () => {
    const key = 'l4/_evsync/leases/account=a.json';
    await putObject(client, key, 'hello');
    await expect(Lease.acquire(store, key, { account: 'a', ttlMs: TTL, command: 'me' })).rejects.toThrow(
      /is not an evsync lease/,
    );
    expect((await getObject(client, key))?.toString()).toBe('hello');
  });
});
