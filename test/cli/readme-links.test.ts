/**
 * A clone is all a reader has: every link in the README, and every repository path it names, resolves inside the
 * repository; the licence file says what package.json says.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** Relative targets of Markdown links (`[text](target)`), anchors and web addresses left out. */
function relativeLinks(markdown: string): string[] {
  return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((t) => !/^[a-z]+:/i.test(t) && !t.startsWith('#'))
    .map((t) => t.replace(/#.*$/, ''));
}

/** Code spans naming a path of the repository: under one of its top folders, or a Markdown file. */
function namedPaths(markdown: string): string[] {
  const top = /^(\.ci|bench|connectors|docs|normalizer|schemas|scripts|src|test)\//;
  return [...markdown.matchAll(/`([^`\s]+)`/g)].map((m) => m[1]!).filter((t) => top.test(t) || /\.md$/.test(t));
}

describe('the README in a clone', () => {
  it('links only to files of the repository, and they exist', () => {
    const links = relativeLinks(README);
    expect(links).toEqual(expect.arrayContaining(['docs/service-spec.md', 'docs/DESIGN.md', 'LICENSE']));
    expect(links.filter((l) => !existsSync(join(ROOT, l)))).toEqual([]);
  });

  it('names no path that is missing (nothing outside the repository, like shared/spec)', () => {
    const paths = namedPaths(README);
    expect(paths.length).toBeGreaterThan(5);
    expect(paths.filter((p) => !existsSync(join(ROOT, p)))).toEqual([]);
    expect(README).not.toContain('shared/spec');
  });

  it('the documents in docs/ name each other by paths that exist beside them', () => {
    for (const doc of ['DESIGN.md', 'service-spec.md', 'api-facts.md']) {
      const text = readFileSync(join(ROOT, 'docs', doc), 'utf8');
      const mds = [...text.matchAll(/`([\w./-]+\.md)`/g)].map((m) => m[1]!);
      expect(
        mds.filter((m) => !existsSync(join(ROOT, 'docs', m))),
        doc,
      ).toEqual([]);
    }
  });

  it('has a LICENSE matching package.json', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { license: string };
    expect(pkg.license).toBe('MIT');
    const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
    expect(license.split('\n')[0]).toBe('MIT License');
    expect(license).toContain('Copyright (c) 2026 evsync contributors');
  });
});
