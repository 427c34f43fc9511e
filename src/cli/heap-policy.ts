/**
 * Node's heap growth, set before the program is loaded. V8 collects when the heap has grown by HEAP_GROWING_PERCENT
 * of itself (its own factor is 1.1x-4x, chosen as it goes). Set once the program's modules and first data are in the
 * heap, the same flag did not take hold the same way: on the replay bench V8 ran several times as many full
 * collections when it was set after loading, and each row cost more CPU. So `main.ts` imports
 * `apply-heap-policy.ts` before anything else (a bench child does the same), and `applyMemoryPolicy` calls this again
 * for in-process runs, where it is a no-op once applied.
 */
import { setFlagsFromString } from 'node:v8';

/** The heap grows by this share of itself before V8 collects it again. */
export const HEAP_GROWING_PERCENT = 50;

let applied = false;

/** Whether the bin set the flag (false when the user's own `node --heap-growing-percent=N` is in effect). */
export function heapPolicyApplied(): boolean {
  return applied;
}

/** The user's own `--heap-growing-percent` on Node's command line, if any (Node refuses it in `NODE_OPTIONS`). */
export function ownHeapFlag(): string | undefined {
  return process.execArgv.find((arg) => /^--heap[-_]growing[-_]percent/.test(arg));
}

/** Sets the flag unless the user's own Node command line sets it. */
export function applyHeapPolicy(): void {
  if (applied || ownHeapFlag() !== undefined) return;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  applied = true;
}
