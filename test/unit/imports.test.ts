/**
 * The shape of the house, read from the sources' import statements: the library entry loads neither the command
 * line nor the simulator; folders import one way (cli -> daemon -> sync -> api/warehouse -> connectors/schemas/normalizer,
 * the simulator apart); no two files import each other, however far round; no command file imports another;
 * `src/sync`, `src/daemon` and `src/cli` hold no SQL but the user's own and the demo's questions to the views.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { reachable } from '../helpers/import-graph.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const IMPORT_RE =
  /^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The specifiers a file imports (static, re-exports and dynamic imports with a literal). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(IMPORT_RE)].map((m) => m[1] ?? m[2] ?? m[3]!).filter(Boolean);
}

function resolveLocal(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  return relative(ROOT, resolve(ROOT, dirname(from), spec.replace(/\.js$/, '.ts')));
}

/** Every file reachable from `entry` by imports, and the bare packages they import. */
function closure(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = reachable(entry, (file) => importsOf(file).flatMap((spec) => resolveLocal(file, spec) || []));
  const packages = new Set<string>();
  for (const file of files) {
    for (const spec of importsOf(file)) {
      if (resolveLocal(file, spec)) continue;
      packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  }
  return { files, packages };
}

/** The folder a file belongs to in the layering: connectors, schemas, normalizer, api, warehouse, sync, daemon, cli, simulator. */
function layer(file: string): string {
  const parts = file.split('/');
  return parts[0] === 'src' ? parts[1]!.replace(/\.ts$/, '') : parts[0]!;
}

describe('entry points', () => {
  it('the library (evsync) loads neither commander nor the simulator', () => {
    const { files, packages } = closure('src/index.ts');
    expect([...files].filter((f) => f.startsWith('src/cli/') || f.startsWith('src/simulator/'))).toEqual([]);
    expect(packages.has('commander')).toBe(false);
    // It does reach what it promises.
    expect(files.has('src/sync/run.ts')).toBe(true);
    expect(files.has('src/warehouse/warehouse.ts')).toBe(true);
  });

  it('the simulator entry (evsync/simulator) stands apart from the engine, the warehouse and the CLI', () => {
    const { files } = closure('src/simulator/index.ts');
    expect([...files].filter((f) => !f.startsWith('src/simulator/'))).toEqual([]);
  });
});

describe('folders import one way', () => {
  // The normalizer sits at the schemas' level: it reads the column schemas, and nothing in schemas reads it.
  const ORDER = ['connectors', 'schemas', 'normalizer', 'api', 'warehouse', 'outputs', 'sync', 'daemon', 'cli'];
  const files = [
    ...sourceFiles('src'),
    ...sourceFiles('connectors'),
    ...sourceFiles('schemas'),
    ...sourceFiles('normalizer'),
  ];

  it('no folder imports one above it, and no two folders import each other both ways', () => {
    const edges = new Set<string>();
    for (const file of files) {
      for (const spec of importsOf(file)) {
        const local = resolveLocal(file, spec);
        if (!local) continue;
        const [a, b] = [layer(file), layer(local)];
        if (a !== b) edges.add(`${a} -> ${b}`);
      }
    }
    const circles = [...edges].filter((e) => {
      const [a, b] = e.split(' -> ');
      return edges.has(`${b} -> ${a}`);
    });
    expect(circles).toEqual([]);
    const upward = [...edges].filter((e) => {
      const [a, b] = e.split(' -> ') as [string, string];
      const [ia, ib] = [ORDER.indexOf(a), ORDER.indexOf(b)];
      // api and warehouse sit side by side; everything else points down the list.
      const sideBySide = (a === 'api' && b === 'warehouse') || (a === 'warehouse' && b === 'api');
      return ia >= 0 && ib >= 0 && ib > ia && !sideBySide;
    });
    expect(upward).toEqual([]);
  });

  it('src/sync, src/daemon and src/cli hold no SQL but the demo questions and the user query pass-through', () => {
    // Statements, not the words: `--help` may say that query refuses DELETE, or name an HTTP DELETE.
    const sql =
      /\bSELECT\b[\s\S]{0,300}?\bFROM\b|\bINSERT\s+(OR\s+\w+\s+)?INTO\b|\bUPDATE\s+[\w."]+\s+SET\b|\bDELETE\s+FROM\b/;
    const offenders = [...sourceFiles('src/sync'), ...sourceFiles('src/daemon'), ...sourceFiles('src/cli')].filter(
      (file) => {
        // The demo's three questions to the views, and the user's own SQL passed through.
        if (file === 'src/cli/commands/demo.ts' || file === 'src/cli/commands/query.ts') return false;
        const code = readFileSync(join(ROOT, file), 'utf8')
          .split('\n')
          .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line));
        return sql.test(code.join('\n'));
      },
    );
    expect(offenders).toEqual([]);
  });
});

/** Every local file each file imports, outside the simulator (which stands apart and is checked on its own). */
function importGraph(): Map<string, string[]> {
  const files = [
    ...sourceFiles('src'),
    ...sourceFiles('connectors'),
    ...sourceFiles('schemas'),
    ...sourceFiles('normalizer'),
  ].filter((file) => !file.startsWith('src/simulator/'));
  const known = new Set(files);
  return new Map(
    files.map((file) => [
      file,
      importsOf(file).flatMap((spec) => {
        const local = resolveLocal(file, spec);
        return local && known.has(local) ? [local] : [];
      }),
    ]),
  );
}

/** The strongly connected components of more than one file (Tarjan's algorithm): each is an import circle. */
function importCircles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const circle: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      circle.push(w);
    } while (w !== v);
    if (circle.length > 1) circles.push(circle.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return circles;
}

describe('no import circles', () => {
  it('no file reaches itself through its imports, outside the simulator', () => {
    expect(importCircles(importGraph())).toEqual([]);
  });

  it('no command file imports another command file (what two commands share is a module of its own)', () => {
    const edges = [...importGraph()].flatMap(([file, deps]) =>
      file.startsWith('src/cli/commands/')
        ? deps.filter((dep) => dep.startsWith('src/cli/commands/')).map((dep) => `${file} -> ${dep}`)
        : [],
    );
    expect([...new Set(edges)].sort()).toEqual([]);
  });
});
