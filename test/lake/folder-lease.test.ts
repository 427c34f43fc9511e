/**
 * The lake's lease kept in a local folder (src/outputs/lake/folder-store.ts), with an injected clock: one holder at a time,
 * an expired holder elsewhere taken over, renewal on the holder's cadence, a holder that lost it told so before it
 * writes, release never removing another writer's lease, and nothing read or replaced through a symbolic link.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LakeError } from '../../src/outputs/lake/errors.js';
import { FolderLeaseStore } from '../../src/outputs/lake/folder-store.js';
import { Lease, type LeaseBody } from '../../src/outputs/lake/lease.js';
import { tempDir } from '../cli/helpers.js';

const KEY = '_evsync/lease.json';
const TTL = 600_000;
const T0 = Date.parse('2030-01-01T00:00:00Z');
const WORDING = { name: 'the folder lease', rule: 'two writers never write one Parquet folder' };

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir('evsync-folder-lease-'));
  mkdirSync(join(dir, '_evsync'));
});
afterEach(() => cleanup());

const read = () => JSON.parse(readFileSync(join(dir, KEY), 'utf8')) as LeaseBody;

function take(now: () => number, command = 'evsync export'): Promise<Lease> {
  return Lease.acquire(new FolderLeaseStore(dir), KEY, { account: 'c-1', ttlMs: TTL, command, now, wording: WORDING });
}

describe('the lease in a local folder', () => {
  it('keeps a second writer out while held, in the folder wording, and is given back', async () => {
    const first = await take(() => T0, 'evsync serve');
    expect(read()).toMatchObject({ command: 'evsync serve', holder: { pid: process.pid } });
    const second = take(() => T0 + 1000).catch((err: unknown) => err);
    const err = await second;
    expect(err).toBeInstanceOf(LakeError);
    expect((err as LakeError).verdict).toBe('held');
    expect((err as LakeError).message).toContain(`the folder lease ${join(dir, KEY)} is held by evsync serve`);
    expect((err as LakeError).message).toContain('two writers never write one Parquet folder');
    await first.release();
    await expect(take(() => T0 + 2000)).resolves.toBeInstanceOf(Lease);
  });

  it('renews on the cadence once a third of its time has passed, and an expired one elsewhere is taken over', async () => {
    let now = T0;
    const lease = await take(() => now);
    const expires = read().expiresAt;
    now = T0 + TTL / 3 - 1;
    await lease.renewIfDue();
    expect(read().expiresAt).toBe(expires);
    now = T0 + TTL / 3;
    await lease.renewIfDue();
    expect(read().expiresAt).toBe(new Date(T0 + TTL / 3 + TTL).toISOString());

    // A holder on another host that stopped renewing: taken over after its expiry, not before.
    const theirs: LeaseBody = { ...read(), holder: { host: 'elsewhere.example', pid: 1, token: 'theirs' } };
    writeFileSync(join(dir, KEY), JSON.stringify(theirs));
    await expect(take(() => Date.parse(theirs.expiresAt) - 1)).rejects.toThrow(/is held by/);
    const next = await take(() => Date.parse(theirs.expiresAt));
    expect(next.replaced?.holder.host).toBe('elsewhere.example');
    // The one that lost it learns before it writes, and its release leaves the new holder's lease.
    await expect(lease.assertHeld()).rejects.toThrow(/lost the folder lease/);
    const nextLease = readFileSync(join(dir, KEY), 'utf8');
    await lease.release();
    expect(readFileSync(join(dir, KEY), 'utf8')).toBe(nextLease);
  });

  it('never reads or replaces a lease that is a symbolic link', async () => {
    writeFileSync(join(dir, 'elsewhere.json'), '{}');
    symlinkSync(join(dir, 'elsewhere.json'), join(dir, KEY));
    await expect(take(() => T0)).rejects.toThrow(/is not a regular file/);
    expect(readFileSync(join(dir, 'elsewhere.json'), 'utf8')).toBe('{}');
  });
});
