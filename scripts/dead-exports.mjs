#!/usr/bin/env node
// Lists every export of the product code (src/ with the simulator aside, connectors/, schemas/, normalizer/) that no
// other file imports (issue 34: no dead export). Importers are every file of src, bench, test, connectors, schemas,
// normalizer and scripts; the library's entry points (package.json: src/index.ts, the bin) count as using all they
// export. A name re-exported by a folder's index.ts is used only when someone imports it from there (or from the file
// itself). An export used only in its own file should not be exported. Exits 1 when any is found, so
// test/unit/dead-exports.test.ts holds the rule.
//
// Like scripts/long-functions.mjs it reads the compiler's syntax trees (`typescript/unstable/sync`: TypeScript 7 has
// no in-process compiler API), with no type checking: imports, re-exports and exported declarations are syntax.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SyntaxKind } from 'typescript/unstable/ast';
import { API } from 'typescript/unstable/sync';
import { startOf } from './syntax-text.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CHECKED = ['src/', 'connectors/', 'schemas/', 'normalizer/'];
const EXCLUDED = ['src/simulator/'];
/** Folders whose imports count (DEAD_EXPORTS_IMPORTERS narrows them, for the test that the script finds some). */
const IMPORTERS = (process.env.DEAD_EXPORTS_IMPORTERS ?? 'src,bench,test,connectors,schemas,normalizer,scripts')
  .split(',')
  .map((dir) => `${dir}/`);
/** What package.json publishes: every export of these is the library's (or the bin's) own. */
const ENTRIES = ['src/index.ts', 'src/cli/main.ts'];
const DECLARATIONS = new Set([
  SyntaxKind.FunctionDeclaration,
  SyntaxKind.ClassDeclaration,
  SyntaxKind.InterfaceDeclaration,
  SyntaxKind.TypeAliasDeclaration,
  SyntaxKind.EnumDeclaration,
  SyntaxKind.ModuleDeclaration,
]);

const isChecked = (file) => CHECKED.some((d) => file.startsWith(d)) && !EXCLUDED.some((d) => file.startsWith(d));
const isImporter = (file) => IMPORTERS.some((d) => file.startsWith(d));
const relativeOf = (fileName) => path.relative(ROOT, fileName).split(path.sep).join('/');

/** The project file a relative specifier names (`./x.js` is `./x.ts`), or null for a package or a missing file. */
function resolveSpecifier(from, specifier) {
  if (!specifier.startsWith('.')) return null;
  const base = path.join(ROOT, path.dirname(from), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, path.join(base, 'index.ts')];
  const found = candidates.find((c) => existsSync(c) && !c.endsWith(path.sep));
  return found ? relativeOf(found) : null;
}

const isImportBinding = (node) => node.parent?.kind === SyntaxKind.NamespaceImport;

const hasModifier = (node, kind) => (node.modifiers ?? []).some((m) => m.kind === kind);

/**
 * One file's module surface: `own` names it declares and exports (with their line), `forwards` names it re-exports
 * (name -> [file, name there]), `stars` files it re-exports whole, and `uses` the [file, name] pairs it imports
 * (name `*` for a namespace or dynamic import: everything the file exports).
 */
function surfaceOf(sourceFile, file) {
  const text = sourceFile.text;
  const lineAt = (pos) => text.slice(0, pos).split('\n').length;
  const surface = { own: new Map(), forwards: new Map(), forwardLines: new Map(), stars: [], uses: [] };
  /** `import * as ns`: local name -> file; a member read (`ns.name`) uses that name, any other use everything. */
  const namespaces = new Map();
  const target = (node) => (node.moduleSpecifier ? resolveSpecifier(file, node.moduleSpecifier.text) : null);
  for (const statement of sourceFile.statements) {
    const line = lineAt(startOf(text, statement));
    if (statement.kind === SyntaxKind.ImportDeclaration) {
      const to = target(statement);
      const clause = statement.importClause;
      if (!to || !clause) continue;
      if (clause.name) surface.uses.push([to, 'default']);
      const bindings = clause.namedBindings;
      if (bindings?.kind === SyntaxKind.NamespaceImport) namespaces.set(bindings.name.text, to);
      for (const element of bindings?.elements ?? []) {
        surface.uses.push([to, (element.propertyName ?? element.name).text]);
      }
    } else if (statement.kind === SyntaxKind.ExportDeclaration) {
      const to = target(statement);
      const clause = statement.exportClause;
      if (statement.moduleSpecifier && !to) continue;
      if (!clause) surface.stars.push(to);
      else if (clause.kind === SyntaxKind.NamespaceExport) {
        surface.forwards.set(clause.name.text, [to, '*']);
        surface.forwardLines.set(clause.name.text, line);
      } else {
        for (const element of clause.elements) {
          const name = element.name.text;
          const from = (element.propertyName ?? element.name).text;
          const at = lineAt(startOf(text, element));
          if (!to) surface.own.set(name, at);
          else {
            surface.forwards.set(name, [to, from]);
            surface.forwardLines.set(name, at);
          }
        }
      }
    } else if (statement.kind === SyntaxKind.ExportAssignment) {
      surface.own.set('default', line);
    } else if (hasModifier(statement, SyntaxKind.ExportKeyword)) {
      const isDefault = hasModifier(statement, SyntaxKind.DefaultKeyword);
      if (isDefault) surface.own.set('default', line);
      else if (DECLARATIONS.has(statement.kind) && statement.name) surface.own.set(statement.name.text, line);
      else if (statement.kind === SyntaxKind.VariableStatement) {
        for (const declaration of statement.declarationList.declarations) {
          if (declaration.name.kind === SyntaxKind.Identifier) surface.own.set(declaration.name.text, line);
        }
      }
    }
  }
  // Dynamic imports and `typeof import(...)` types, anywhere in the file: everything the file exports.
  const visit = (node) => {
    const isDynamic = node.kind === SyntaxKind.CallExpression && node.expression.kind === SyntaxKind.ImportKeyword;
    const literal = isDynamic ? node.arguments[0] : node.kind === SyntaxKind.ImportType ? node.argument?.literal : null;
    if (literal?.kind === SyntaxKind.StringLiteral) {
      const to = resolveSpecifier(file, literal.text);
      if (to) surface.uses.push([to, '*']);
    }
    const isMember = node.kind === SyntaxKind.PropertyAccessExpression || node.kind === SyntaxKind.QualifiedName;
    const holder = isMember ? (node.expression ?? node.left) : null;
    if (holder?.kind === SyntaxKind.Identifier && namespaces.has(holder.text)) {
      surface.uses.push([namespaces.get(holder.text), (node.name ?? node.right).text]);
      return;
    }
    if (node.kind === SyntaxKind.Identifier && namespaces.has(node.text) && !isImportBinding(node)) {
      surface.uses.push([namespaces.get(node.text), '*']);
    }
    node.forEachChild(visit);
  };
  sourceFile.forEachChild(visit);
  return surface;
}

/** Imports of the scripts (plain .mjs, outside the TypeScript project), read from their text. */
function scriptSurfaces() {
  const out = new Map();
  const dir = path.join(ROOT, 'scripts');
  const pattern = /(?:from\s+|import\s*\(\s*|import\s+)['"]([^'"]+)['"]/g;
  for (const name of readdirSync(dir).filter((n) => /\.(mjs|js|ts)$/.test(n))) {
    const file = `scripts/${name}`;
    const text = readFileSync(path.join(dir, name), 'utf8');
    const uses = [...text.matchAll(pattern)].flatMap((m) => {
      const to = resolveSpecifier(file, m[1]);
      return to ? [[to, '*']] : [];
    });
    out.set(file, { own: new Map(), forwards: new Map(), forwardLines: new Map(), stars: [], uses });
  }
  return out;
}

function surfaces() {
  const api = new API({ cwd: ROOT });
  try {
    const project = api.updateSnapshot({ openProjects: [path.join(ROOT, 'tsconfig.json')] }).getProjects()[0];
    if (!project) throw new Error('tsconfig.json opened no project');
    const out = scriptSurfaces();
    for (const fileName of project.program.getSourceFileNames()) {
      const file = relativeOf(fileName);
      if (file.startsWith('..') || file.includes('node_modules/') || file.endsWith('.d.ts')) continue;
      const sourceFile = project.program.getSourceFile(fileName);
      if (sourceFile) out.set(file, surfaceOf(sourceFile, file));
    }
    return out;
  } finally {
    api.close();
  }
}

/** Marks [file, name] used, and through re-exports the declaration it stands for. */
function markUsed(all, used, file, name) {
  const work = [[file, name]];
  while (work.length > 0) {
    const [at, wanted] = work.pop();
    const key = `${at}\0${wanted}`;
    if (used.has(key)) continue;
    used.add(key);
    const surface = all.get(at);
    if (!surface) continue;
    if (wanted === '*') {
      for (const name of [...surface.own.keys(), ...surface.forwards.keys()]) work.push([at, name]);
      for (const star of surface.stars) work.push([star, '*']);
      continue;
    }
    const forward = surface.forwards.get(wanted);
    if (forward) work.push(forward);
    else if (!surface.own.has(wanted)) for (const star of surface.stars) work.push([star, wanted]);
  }
}

export function findDeadExports() {
  const all = surfaces();
  const used = new Set();
  for (const entry of ENTRIES) markUsed(all, used, entry, '*');
  for (const [file, surface] of all) {
    if (!isImporter(file)) continue;
    for (const [to, name] of surface.uses) if (to !== file) markUsed(all, used, to, name);
  }
  const dead = [];
  for (const [file, surface] of all) {
    if (!isChecked(file)) continue;
    for (const [name, line] of surface.own) if (!used.has(`${file}\0${name}`)) dead.push({ file, line, name });
    for (const [name, line] of surface.forwardLines) {
      if (!used.has(`${file}\0${name}`)) dead.push({ file, line, name: `${name} (re-export)` });
    }
  }
  return dead.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dead = findDeadExports();
  for (const { file, line, name } of dead) console.log(`${file}:${line} ${name}`);
  if (dead.length > 0) {
    console.error(`${dead.length} export(s) no other file imports: remove them, or stop exporting them.`);
    process.exit(1);
  }
  console.log('no dead export');
}
