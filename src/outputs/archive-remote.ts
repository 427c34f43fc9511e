/**
 * The archive's segments in the lake (`archive.to: "s3://bucket/prefix"` in evsync.config.json): object storage for
 * an account whose archive outgrows the machine. Segments go under `<prefix>/_archive/account=<id>/`, beside the
 * lake's tables if the prefix is the lake's; the warehouse keeps their small metadata files (src/warehouse/archive/).
 */
import { writeFileSync } from 'node:fs';
import type { ArchiveRemote } from '../warehouse/index.js';
import type { ObjectStore } from './lake/store.js';
import type { OutputSettings } from './settings.js';
import { parseTarget } from './target.js';

/** The folder of an account's segments under the archive's prefix. */
function folderOf(prefix: string, account: string): string {
  return `${prefix ? `${prefix}/` : ''}_archive/account=${account}/`;
}

/** The remote over `store` (closed with it). */
export function archiveRemoteOf(store: ObjectStore, prefix: string, account: string): ArchiveRemote {
  const folder = folderOf(prefix, account);
  return {
    describe: (name) => store.describe(`${folder}${name}`),
    async put(name, file, size) {
      await store.upload(`${folder}${name}`, file, size);
    },
    async get(name, to) {
      const object = await store.get(`${folder}${name}`);
      if (!object) return false;
      writeFileSync(to, object.body, { mode: 0o600 });
      return true;
    },
    remove: (names) => store.remove(names.map((n) => `${folder}${n}`)),
    close: () => store.close(),
  };
}

/** `archive.to` read: an s3:// URL (anything else is the user's to fix, with why), opened on the lake's settings. */
export async function openArchiveRemote(settings: OutputSettings, to: string): Promise<ArchiveRemote> {
  const parsed = parseTarget(to);
  if (!parsed.ok) throw new Error(`archive.to: ${parsed.problem}`);
  if (parsed.target.kind !== 's3') throw new Error(`archive.to: expected an s3:// URL, got ${JSON.stringify(to)}`);
  const { openLakeStoreFor } = await import('./lake-output.js');
  const store = await openLakeStoreFor(settings, parsed.target);
  return archiveRemoteOf(store, parsed.target.prefix, settings.account);
}
