/**
 * `evsync status --html <file>`: the status page as one self-contained file (no script, nothing fetched when it is
 * opened), owner-only (0600: it names streams, counts and errors of the account). Written beside its final name and
 * renamed over it, so a reader never sees half a page and an older file's wider mode is not kept.
 */
import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { StatusReport } from '../status/document.js';
import { renderStatusPage } from './page.js';

export function writeStatusPage(path: string, doc: StatusReport): string {
  const target = resolve(path);
  const temp = join(dirname(target), `.${basename(target)}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    writeFileSync(temp, renderStatusPage(doc, { live: false }), { mode: 0o600, flag: 'wx' });
    renameSync(temp, target);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
  return target;
}
