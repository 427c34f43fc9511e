#!/usr/bin/env node
// Why: this machine's npm registry mirror does not serve every platform's optional native binary (biome, duckdb),
// so `npm install` here writes a lockfile without them and `npm ci` then refuses it ("Missing: ... from lock file").
// This adds an entry for each missing platform package, tagged with its os/cpu/libc so npm skips it on every other
// platform and never fetches it. Run after changing dependencies: `node scripts/complete-lockfile.mjs`.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;

function platformOf(name) {
  const os = ['darwin', 'linux', 'win32', 'android', 'freebsd'].find((o) => name.includes(`-${o}`));
  const cpu = ['arm64', 'x64', 'arm', 'ia32'].find((c) => new RegExp(`-${c}(-|$)`).test(name));
  const libc = name.includes('-musl') ? 'musl' : os === 'linux' ? 'glibc' : undefined;
  return { os, cpu, libc };
}

let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${dep}`;
    if (packages[key] || packages[`${path}/node_modules/${dep}`]) continue;
    const { os, cpu, libc } = platformOf(dep);
    if (!os || !cpu) throw new Error(`cannot tell the platform of ${dep}; add its lock entry by hand`);
    packages[key] = {
      version,
      cpu: [cpu],
      ...(entry.dev ? { dev: true } : {}),
      ...(libc ? { libc: [libc] } : {}),
      optional: true,
      os: [os],
    };
    added += 1;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} platform entries`);
