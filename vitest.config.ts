import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

// Three projects, by what a test file needs (its name says which), and the soak:
//   unit    *.test.ts          no store, no socket, no process (test/support/unitGuard.ts refuses them)
//   store   *.store.test.ts    an embedded store, copied from one migrated template per run; the
//                              API served on loopback; no process (test/support/storeGuard.ts)
//   system  *.system.test.ts   processes, venue sockets, Kafka, Redis, a browser
//   soak    test/soak.system.test.ts, once the others are done
// `npm test` runs them all; `npm test -- --project unit` the first alone.
const exclude = ['node_modules/**', 'data/**', '.tmp/**', '.stryker-tmp*/**'];
const soakTest = 'test/soak.system.test.ts';

/** Files that take minutes: started first, so the run does not end waiting on one of them. */
const longFirst = ['test/splitDeployment.system.test.ts', 'ingest/__tests__/recovery.system.test.ts', 'infra/__tests__/operations.system.test.ts'];

/** The long files, then system, store and unit files (each in vitest's own order): the long ones overlap the many short ones. */
class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => {
      const long = longFirst.findIndex((path) => spec.moduleId.endsWith(path));
      if (long >= 0) return long;
      return longFirst.length + ['system', 'store', 'unit', 'soak'].indexOf(spec.project.name);
    };
    const sorted = await super.sort(files);
    return sorted.map((spec, i) => ({ spec, i })).sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i).map(({ spec }) => spec);
  }
}

export default defineConfig({
  test: {
    // chDB binds one data directory per process: every test file gets its own process.
    pool: 'forks',
    // Three files at once on the 2-core machines CI runs on: most of a file's time is spent waiting
    // (on chDB, sockets, child processes); with four, the load generator's and the demo's timed
    // system tests failed (load average 9).
    maxWorkers: 3,
    sequence: { sequencer: LongFirstSequencer },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          // No store, socket or process to keep apart: files share their worker's process and its
          // imported modules (a fork and a fresh import per file cost more than most files' tests).
          isolate: false,
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
          exclude: [...exclude, soakTest],
          globalSetup: ['test/support/storeTemplate.ts'],
        },
      },
      {
        // The soak last and alone, as `npm run soak` runs on a machine: its figures (lag, freshness,
        // what is recovered in time) are the service's, not those of the files beside it.
        extends: true,
        test: {
          name: 'soak',
          include: [soakTest],
          exclude,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
