/**
 * How the bin keeps its memory within a small container without a flag the user must know. Two things hold memory
 * while a sync loads: DuckDB's buffers (capped by the warehouse's memory_limit, LOAD_MEMORY_LIMIT while loading) and
 * Node's JavaScript heap. V8 lets the heap grow lazily, to about twice what is live between major collections, and by
 * default further on a large machine: on the replay bench the heap in use grew to several times what was live.
 * Collecting when the heap has grown by 50% keeps it near what is live over a whole replay (bench/results/replay.json
 * gives the heap in use per band); 20% kept the same heap and cost more CPU per row (the collector ran more than
 * twice as often for nothing). It caps nothing: a command that needs a larger heap (a big query
 * result) still gets it, which a `--max-old-space-size` sized from the container would refuse with a crash. The flag
 * on Node's own command line (`node --heap-growing-percent=N`) wins; Node refuses it in `NODE_OPTIONS`.
 */
import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { DEFAULT_MEMORY_LIMIT, LOAD_MEMORY_LIMIT } from '../warehouse/index.js';
import { applyHeapPolicy, HEAP_GROWING_PERCENT, heapPolicyApplied, ownHeapFlag } from './heap-policy.js';

/** Below this limit a backfill may not fit (README, "Memory": one event of 400k registrants peaked at 293 MB, a 5M-row replay at 353-367 MB). */
const LOAD_PEAK_BYTES = 400 * 1_048_576;

/** Applies the policy to this process's V8 (the binary has done so before loading: apply-heap-policy.ts). */
export function applyMemoryPolicy(): void {
  applyHeapPolicy();
}

interface MemoryLimit {
  bytes: number;
  /** Where the limit comes from: the container (cgroup v2 `memory.max`, v1 `memory.limit_in_bytes`) or the machine. */
  source: 'cgroup v2 memory.max' | 'cgroup v1 memory.limit_in_bytes' | 'machine memory';
}

function readLimit(path: string): number | null {
  try {
    const text = readFileSync(path, 'utf8').trim();
    if (text === 'max') return null;
    const n = Number(text);
    return Number.isFinite(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

/** The memory this process may use: the container's limit when it sets one below the machine's memory. */
export function memoryLimit(): MemoryLimit {
  const machine = totalmem();
  const v2 = readLimit('/sys/fs/cgroup/memory.max');
  if (v2 !== null && v2 < machine) return { bytes: v2, source: 'cgroup v2 memory.max' };
  // An unlimited v1 group reports a huge number (~2^63): the machine's memory is the limit then.
  const v1 = readLimit('/sys/fs/cgroup/memory/memory.limit_in_bytes');
  if (v1 !== null && v1 < machine) return { bytes: v1, source: 'cgroup v1 memory.limit_in_bytes' };
  return { bytes: machine, source: 'machine memory' };
}

const mb = (bytes: number) => `${Math.round(bytes / 1_048_576)} MB`;

/** What `evsync check` says about memory: the limit, what the bin chose, and whether a backfill fits. */
export function describeMemory(limit: MemoryLimit = memoryLimit()): { fits: boolean; message: string } {
  const heap = getHeapStatistics().heap_size_limit;
  const own = ownHeapFlag();
  const growth = heapPolicyApplied()
    ? `collected when it grows by ${HEAP_GROWING_PERCENT}%`
    : own
      ? `as your ${own} says`
      : "V8's default growth";
  const duck = `DuckDB memory_limit ${LOAD_MEMORY_LIMIT.replace('MB', ' MB')} while loading, ${DEFAULT_MEMORY_LIMIT.replace('MB', ' MB')} otherwise`;
  const chose = `${duck}, Node heap ${growth} (V8 limit ${mb(heap)})`;
  const fits = limit.bytes >= LOAD_PEAK_BYTES;
  const peak = 'a backfill of one 400k-registrant event peaked at ~290 MB, a table growing to 5M rows at ~350 MB';
  const verdict = fits ? peak : `${peak}: give the container at least ${mb(LOAD_PEAK_BYTES)}`;
  return { fits, message: `${mb(limit.bytes)} (${limit.source}); ${chose}; ${verdict}` };
}
