#!/usr/bin/env node
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { registerSimulatorCommand } from './commands/simulator.js';

/** The package version, found by walking up from this file (works from src/ under tsx and from dist/src/). */
function version(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'evsync' && pkg.version) return pkg.version;
    }
    dir = dirname(dir);
  }
  return '0.0.0';
}

const program = new Command('evsync')
  .description('sync an event-management REST API into DuckDB and Parquet within its credit budget')
  .version(version());
registerSimulatorCommand(program);
await program.parseAsync(process.argv);
