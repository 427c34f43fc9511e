/**
 * Everything the archive beside a warehouse holds, as text to search: every file's bytes as they are on disk, and
 * every entry's body read back through the archive (its Parquet segments are compressed, so a secret in them would
 * not show in their bytes).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Archive } from '../../src/warehouse/index.js';

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

export async function archivedTexts(databasePath: string): Promise<string[]> {
  const archive = Archive.open(databasePath, { readOnly: true });
  try {
    const out = files(archive.dir).map((f) => readFileSync(f).toString('latin1'));
    const { entries } = await archive.stats();
    const numbers = Array.from({ length: entries * 2 + 10 }, (_, i) => i + 1);
    const bodies = await archive.bodies(numbers);
    if (bodies.size < entries) throw new Error(`the archive gave ${bodies.size} of its ${entries} entries back`);
    return [...out, ...bodies.values()];
  } finally {
    await archive.close({ keepSpool: true });
  }
}
