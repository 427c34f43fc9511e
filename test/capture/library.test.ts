/**
 * The library exposes change capture (receiver, applier, both running, the webhook set-up) for users to mount in a
 * server of their own, and its entry point still loads neither commander nor the simulator: checked on the static
 * import graph from src/index.ts (dynamic imports load on use only).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as evsync from '../../src/index.js';
import { reachable } from '../helpers/import-graph.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function staticImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)) {
    if (/^(?:import|export)\s+type\s/.test(m[0])) continue;
    out.push(m[1]!);
  }
  return out;
}

/** The files reachable from `entry` by static imports (absolute paths), and the packages they import (as written). */
function graph(entry: string): Set<string> {
  return reachable(entry, (file) => {
    if (!file.endsWith('.ts')) return [];
    return staticImports(file).map((spec) =>
      spec.startsWith('.') ? resolve(dirname(file), spec.replace(/\.js$/, '.ts')) : spec,
    );
  });
}

describe('the library', () => {
  it('exports the receiver, the applier, startCapture and the webhook set-up', () => {
    for (const name of [
      'createReceiver',
      'Applier',
      'startCapture',
      'installWebhooks',
      'webhookStatus',
      'removeWebhooks',
    ]) {
      expect(typeof (evsync as Record<string, unknown>)[name], name).toBe('function');
    }
  });

  it('loads neither commander nor the simulator', () => {
    const loaded = [...graph(join(ROOT, 'src', 'index.ts'))];
    expect(loaded.filter((m) => m === 'commander' || m.includes(`${join('src', 'simulator')}`))).toEqual([]);
    expect(loaded.some((m) => m.endsWith(join('sync', 'capture', 'receiver.ts')))).toBe(true);
  });
});
