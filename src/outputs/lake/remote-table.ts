/**
 * One table's part of the lake for one account (`<prefix>/<table>/account=<id>/`), judged by the same rule as a
 * local export folder (warehouse/copies/export-folder.ts): evsync writes only where its manifest is, or where nothing is;
 * objects its manifest does not list are someone else's, refused unless `force` and never removed.
 */
import { emptyManifest, type Manifest, manifestText, parseManifest } from '../../warehouse/copies/export-manifest.js';
import { LakeError } from './errors.js';
import { manifestKey } from './layout.js';
import type { ListedObject, ObjectStore } from './store.js';

export type RemoteTable =
  | { state: 'missing'; root: string; objects: ListedObject[] }
  | { state: 'owned'; root: string; manifest: Manifest; objects: ListedObject[]; foreign: string[] }
  | { state: 'adopt'; root: string; objects: ListedObject[]; foreign: string[] };

/** Objects an interrupted export of a pending id may have left: `<id>_<uuid>.parquet` in any partition. */
function belongsToPending(rel: string, pending: readonly string[]): boolean {
  const name = rel.slice(rel.lastIndexOf('/') + 1);
  return pending.some((id) => name.startsWith(`${id}_`));
}

const MANIFEST_REL = '_evsync/manifest.json';

function listFew(paths: readonly string[]): string {
  const shown = paths.slice(0, 3).join(', ');
  return paths.length > 3 ? `${shown} and ${paths.length - 3} more` : shown;
}

export async function inspectRemoteTable(
  store: ObjectStore,
  root: string,
  table: string,
  force: boolean,
): Promise<RemoteTable> {
  const objects = await store.list(root);
  const rels = objects.map((o) => o.key.slice(root.length));
  const where = store.describe(root);
  if (!rels.includes(MANIFEST_REL)) {
    if (rels.length === 0) return { state: 'missing', root, objects };
    if (!force) {
      throw new LakeError(
        `${where} holds ${listFew(rels)} but no ${MANIFEST_REL}: evsync did not write it and writes only where its manifest is. Choose another prefix or move them away; --force writes beside them (evsync never removes an object it did not write)`,
        'refused',
      );
    }
    return { state: 'adopt', root, objects, foreign: rels };
  }
  const stored = await store.get(manifestKey(root));
  const read = stored
    ? parseManifest(stored.body.toString('utf8'), table)
    : ({ ok: false, problem: 'it vanished while listing' } as const);
  if (!read.ok) {
    throw new LakeError(
      `${store.describe(manifestKey(root))} is not an evsync export manifest for ${table} (${read.problem}); evsync will not write into ${where}`,
      'refused',
    );
  }
  const manifest = read.manifest;
  const listed = new Set([...manifest.files.map((f) => f.path), ...manifest.obsolete, MANIFEST_REL]);
  const foreign = rels.filter((rel) => !listed.has(rel) && !belongsToPending(rel, manifest.pending));
  if (foreign.length > 0 && !force) {
    throw new LakeError(
      `${where} holds ${foreign.length} object(s) evsync did not write: ${listFew(foreign)}; evsync replaces only its own. Move them away, or pass --force to write beside them (never removed)`,
      'refused',
    );
  }
  return { state: 'owned', root, manifest, objects, foreign };
}

export async function putManifest(store: ObjectStore, root: string, manifest: Manifest): Promise<void> {
  const put = await store.put(manifestKey(root), Buffer.from(manifestText(manifest)), 'application/json');
  if (put === 'conflict') throw new LakeError(`${store.describe(manifestKey(root))}: unexpected conflict`, 'failed');
}

/**
 * What the next export starts from: the manifest with an interrupted export's leftovers removed (objects of pending
 * exports, replaced objects not yet removed). Those are evsync's by the manifest's own record, so a crash never
 * turns them into "foreign" objects. Writes nothing when there is nothing to finish.
 */
export async function recoverRemote(
  store: ObjectStore,
  remote: RemoteTable,
  table: string,
  now: Date,
): Promise<Manifest> {
  if (remote.state !== 'owned') return emptyManifest(table, now);
  const m = remote.manifest;
  if (m.pending.length === 0 && m.obsolete.length === 0) return m;
  const rels = remote.objects.map((o) => o.key.slice(remote.root.length));
  const leftovers = rels.filter((rel) => belongsToPending(rel, m.pending));
  await store.remove([...new Set([...leftovers, ...m.obsolete])].map((rel) => `${remote.root}${rel}`));
  const next = { ...m, pending: [], obsolete: [] };
  await putManifest(store, remote.root, next);
  return next;
}
