/**
 * The lease's store (lease.ts) on a local folder, so a local Parquet folder is kept by the same lease as a lake
 * prefix: keys are paths under the folder, the etag is the content's hash. Conditional writes: `ifAbsent` by a hard
 * link (fails if the name exists, atomically, and never leaves a half-written file under it), `ifMatch` by reading
 * and comparing before the rename; the race left there (two writers between the read and the rename) is the one
 * stores that ignore conditions leave, and the lease's read-back covers it the same way.
 *
 * Only regular files are read or replaced: a symbolic link where a lease should be is refused, as export refuses a
 * manifest that is a link.
 */
import { createHash, randomBytes } from 'node:crypto';
import { linkSync, lstatSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errnoCode } from '../../warehouse/db/fs-errors.js';
import { LakeError } from './errors.js';
import type { LeaseStore } from './lease.js';
import type { PutCondition, StoredObject } from './store.js';

/** Codes of file systems that have no hard links: the exclusive create then writes the file in place. */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

function etagOf(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

export class FolderLeaseStore implements LeaseStore {
  constructor(private readonly root: string) {}

  private path(key: string): string {
    return join(this.root, ...key.split('/'));
  }

  async get(key: string): Promise<StoredObject | null> {
    const path = this.path(key);
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (!st) return null;
    if (!st.isFile()) {
      throw new LakeError(
        `${path} is not a regular file (a symbolic link?); evsync will not read or replace it: move it away`,
        'refused',
      );
    }
    const body = readFileSync(path);
    return { body, etag: etagOf(body) };
  }

  async put(
    key: string,
    body: Buffer,
    _contentType: string,
    condition: PutCondition = {},
  ): Promise<string | 'conflict'> {
    const path = this.path(key);
    const temp = `${path}.${randomBytes(8).toString('hex')}.tmp`;
    writeFileSync(temp, body, { mode: 0o600, flag: 'wx' });
    try {
      if (condition.ifAbsent) return this.createOnly(temp, path, body);
      if (condition.ifMatch !== undefined && (await this.get(key))?.etag !== condition.ifMatch) return 'conflict';
      renameSync(temp, path);
      return etagOf(body);
    } finally {
      rmSync(temp, { force: true });
    }
  }

  private createOnly(temp: string, path: string, body: Buffer): string | 'conflict' {
    try {
      linkSync(temp, path);
    } catch (err) {
      if (errnoCode(err) === 'EEXIST') return 'conflict';
      if (!NO_LINKS.has(errnoCode(err))) throw err;
      try {
        writeFileSync(path, body, { mode: 0o600, flag: 'wx' });
      } catch (again) {
        if (errnoCode(again) === 'EEXIST') return 'conflict';
        throw again;
      }
    }
    return etagOf(body);
  }

  async remove(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      const path = this.path(key);
      // Never through a link; a name already gone is fine.
      if (lstatSync(path, { throwIfNoEntry: false })?.isFile()) rmSync(path);
    }
  }

  describe(key: string): string {
    return this.path(key);
  }
}
