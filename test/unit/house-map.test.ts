/**
 * The house map in docs/DESIGN.md matches the tree (issue 34): every folder of the product code is named there (a
 * top-level entry, or its name inside its parent's entry), every entry names a folder or file that exists, and every
 * folder says its one job in its first file's opening comment (its index.ts, else its first file by name).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TOPS = ['connectors', 'schemas', 'normalizer', 'src'];

function folders(dir: string): string[] {
  const below = readdirSync(join(ROOT, dir))
    .filter((name) => statSync(join(ROOT, dir, name)).isDirectory())
    .flatMap((name) => folders(join(dir, name)));
  return [dir, ...below];
}

/** The map: the first fenced block under "## The house", as entries (a path at the line's start, then its text). */
function mapEntries(): Map<string, string> {
  const design = readFileSync(join(ROOT, 'docs/DESIGN.md'), 'utf8');
  const house = design.slice(design.indexOf('## The house'));
  const block = house.slice(house.indexOf('```') + 3, house.indexOf('```', house.indexOf('```') + 3));
  const entries = new Map<string, string>();
  let current: string | null = null;
  for (const line of block.split('\n')) {
    const head = /^(\S+)\s+(.*)$/.exec(line);
    if (head) {
      current = head[1]!.replace(/\/$/, '');
      entries.set(current, head[2]!);
    } else if (current && line.trim()) entries.set(current, `${entries.get(current)} ${line.trim()}`);
  }
  return entries;
}

/** The file whose opening comment says a folder's job: its index.ts, else its first .ts file by name. */
function firstFile(dir: string): string | null {
  if (existsSync(join(ROOT, dir, 'index.ts'))) return join(dir, 'index.ts');
  const files = readdirSync(join(ROOT, dir))
    .filter((name) => name.endsWith('.ts'))
    .sort();
  return files.length ? join(dir, files[0]!) : null;
}

describe('the house map', () => {
  const entries = mapEntries();
  const all = TOPS.flatMap(folders).filter((d) => d !== 'src');

  it('names every folder of the product code', () => {
    const unnamed = all.filter((dir) => {
      if (entries.has(dir)) return false;
      // A sub-folder is named inside the entry of its nearest named ancestor, as `name/`.
      const parts = dir.split('/');
      for (let i = parts.length - 1; i > 0; i--) {
        const ancestor = parts.slice(0, i).join('/');
        const text = entries.get(ancestor);
        if (text !== undefined) return !text.includes(`${parts.slice(i).join('/')}/`);
      }
      return true;
    });
    expect(unnamed).toEqual([]);
  });

  it('names nothing that is not there', () => {
    const missing = [...entries.keys()].filter((path) => !existsSync(join(ROOT, path)));
    expect(missing).toEqual([]);
  });

  it("says each folder's job in its first file's opening comment", () => {
    const silent = all.filter((dir) => {
      const file = firstFile(dir);
      return file === null || !readFileSync(join(ROOT, file), 'utf8').trimStart().startsWith('/**');
    });
    expect(silent).toEqual([]);
  });
});
