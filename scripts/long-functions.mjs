#!/usr/bin/env node
// Lists every function, method, accessor, constructor and arrow in the product code longer than the limit
// (issue 28: a long function is one that does several things; name the steps instead). Exits 1 when any is found,
// so test/unit/long-functions.test.ts holds the rule. The simulator stands apart and is not measured.
//
// TypeScript 7 has no in-process compiler API: `typescript/unstable/sync` starts the bundled compiler and hands back
// each file's syntax tree, which is all this needs (no type checking).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SyntaxKind } from 'typescript/unstable/ast';
import { API } from 'typescript/unstable/sync';
import { startOf } from './syntax-text.mjs';

const LIMIT = Number(process.env.LONG_FUNCTION_LIMIT ?? 80);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MEASURED = ['src/', 'connectors/', 'schemas/', 'normalizer/'];
const EXCLUDED = ['src/simulator/'];
const FUNCTION_KINDS = new Set([
  SyntaxKind.FunctionDeclaration,
  SyntaxKind.FunctionExpression,
  SyntaxKind.ArrowFunction,
  SyntaxKind.MethodDeclaration,
  SyntaxKind.Constructor,
  SyntaxKind.GetAccessor,
  SyntaxKind.SetAccessor,
]);

function isMeasured(relative) {
  return MEASURED.some((dir) => relative.startsWith(dir)) && !EXCLUDED.some((dir) => relative.startsWith(dir));
}

function lineOf(lineStarts, position) {
  let low = 0;
  let high = lineStarts.length - 1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (lineStarts[middle] <= position) low = middle;
    else high = middle - 1;
  }
  return low + 1;
}

/** A readable name: the declaration's own, else the variable or property the function is assigned to. */
function nameOf(node) {
  const own = node.name ?? node.parent?.name;
  if (node.kind === SyntaxKind.Constructor) return 'constructor';
  return own?.text ?? '(anonymous)';
}

function longFunctionsIn(sourceFile, relative) {
  const text = sourceFile.text;
  const lineStarts = [0];
  for (let index = 0; index < text.length; index++) if (text[index] === '\n') lineStarts.push(index + 1);
  const found = [];
  const visit = (node) => {
    if (FUNCTION_KINDS.has(node.kind) && node.body) {
      const first = lineOf(lineStarts, startOf(text, node));
      const last = lineOf(lineStarts, node.end - 1);
      const lines = last - first + 1;
      if (lines > LIMIT) found.push({ file: relative, line: first, name: nameOf(node), lines });
    }
    node.forEachChild(visit);
  };
  sourceFile.forEachChild(visit);
  return found;
}

export function findLongFunctions() {
  const api = new API({ cwd: ROOT });
  try {
    const project = api.updateSnapshot({ openProjects: [path.join(ROOT, 'tsconfig.json')] }).getProjects()[0];
    if (!project) throw new Error('tsconfig.json opened no project');
    const found = [];
    for (const fileName of project.program.getSourceFileNames()) {
      const relative = path.relative(ROOT, fileName).split(path.sep).join('/');
      if (!isMeasured(relative) || relative.endsWith('.d.ts')) continue;
      const sourceFile = project.program.getSourceFile(fileName);
      if (sourceFile) found.push(...longFunctionsIn(sourceFile, relative));
    }
    return found.sort((a, b) => b.lines - a.lines);
  } finally {
    api.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const found = findLongFunctions();
  for (const { file, line, name, lines } of found) console.log(`${file}:${line} ${name} ${lines} lines`);
  if (found.length > 0) {
    console.error(`${found.length} function(s) over ${LIMIT} lines: split them into named steps.`);
    process.exit(1);
  }
  console.log(`no function over ${LIMIT} lines`);
}
