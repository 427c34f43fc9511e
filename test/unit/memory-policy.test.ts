import { totalmem } from 'node:os';
import { describe, expect, it } from 'vitest';
import { applyMemoryPolicy, describeMemory, memoryLimit } from '../../src/cli/memory-policy.js';

describe('memory policy', () => {
  it('finds a limit no larger than the machine, and names where it comes from', () => {
    const limit = memoryLimit();
    expect(limit.bytes).toBeGreaterThan(0);
    expect(limit.bytes).toBeLessThanOrEqual(totalmem());
    expect(['cgroup v2 memory.max', 'cgroup v1 memory.limit_in_bytes', 'machine memory']).toContain(limit.source);
  });

  it('says what the bin chose, and warns when the limit is below what a backfill needs', () => {
    applyMemoryPolicy();
    const small = describeMemory({ bytes: 256 * 1_048_576, source: 'cgroup v2 memory.max' });
    expect(small.fits).toBe(false);
    expect(small.message).toContain('256 MB (cgroup v2 memory.max)');
    expect(small.message).toContain('DuckDB memory_limit 100 MB while loading, 160 MB otherwise');
    expect(small.message).toContain('collected when it grows by 50%');
    expect(small.message).toContain('give the container at least 400 MB');
    const large = describeMemory({ bytes: 2048 * 1_048_576, source: 'machine memory' });
    expect(large.fits).toBe(true);
    expect(large.message).not.toContain('give the container');
  });
});
