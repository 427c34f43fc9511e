import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Without this vitest also picks up compiled copies under dist/.
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests each start a simulator; two workers match the two cores CI has.
    maxWorkers: 2,
  },
});
