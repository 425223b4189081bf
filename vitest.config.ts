import { defineConfig } from 'vitest/config';

// Three projects, by what a test file needs (its name says which):
//   unit    *.test.ts          no store, no socket, no process (test/support/unitGuard.ts refuses them)
//   store   *.store.test.ts    an embedded store, copied from one migrated template per run; the
//                              API served on loopback; no process (test/support/storeGuard.ts)
//   system  *.system.test.ts   processes, venue sockets, Kafka, Redis, a browser, the soak
// `npm test` runs all three; `npm test -- --project unit` the first alone.
const exclude = ['node_modules/**', 'data/**', '.tmp/**', '.stryker-tmp*/**'];

export default defineConfig({
  test: {
    // chDB binds one data directory per process: every test file gets its own process.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['**/*.test.ts'],
          exclude: [...exclude, '**/*.store.test.ts', '**/*.system.test.ts'],
          setupFiles: ['test/support/unitGuard.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'store',
          include: ['**/*.store.test.ts'],
          exclude,
          globalSetup: ['test/support/storeTemplate.ts'],
          setupFiles: ['test/support/storeGuard.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'system',
          include: ['**/*.system.test.ts'],
          exclude,
          globalSetup: ['test/support/storeTemplate.ts'],
        },
      },
    ],
  },
});
