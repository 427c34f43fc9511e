#!/usr/bin/env node
// Why: a lockfile entry without `integrity` is a package some platform cannot verify or download (the registry did
// not serve it when the lockfile was written), so `npm ci` breaks on macOS, Windows or arm64 while it works here.
// `npm test` runs this first: pin versions the registry serves for every platform instead of patching the lockfile.
import { readFileSync } from 'node:fs';

const lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8'));
const missing = Object.entries(lock.packages ?? {})
  .filter(([path, entry]) => path !== '' && !entry.link && !entry.integrity)
  .map(([path, entry]) => `${path.replace(/^.*node_modules\//, '')}@${entry.version}`);
if (missing.length > 0) {
  console.error(`package-lock.json: ${missing.length} entries without integrity (${missing.slice(0, 5).join(', ')})`);
  console.error('Some platform cannot install them: pin versions whose packages the registry serves everywhere');
  console.error('(npm view <package>-<os>-<cpu> versions), then regenerate the lockfile with a plain npm install.');
  process.exit(1);
}
console.log(`package-lock.json: all ${Object.keys(lock.packages ?? {}).length - 1} entries carry integrity`);
