import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // chDB binds one data directory per process: every test file gets its own process.
    pool: 'forks',
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', 'data/**', '.tmp/**', '.stryker-tmp*/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
