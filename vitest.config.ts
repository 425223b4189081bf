import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

// Three projects, by what a test file needs (its name says which), and the soak:
//   unit    *.test.ts          no store, no socket, no process (test/support/unitGuard.ts refuses them)
//   store   *.store.test.ts    an embedded store, copied from one migrated template per run; the
//                              API served on loopback; no process (test/support/storeGuard.ts)
//   system  *.system.test.ts   processes, venue sockets, Kafka, Redis, a browser
//   soak    test/soak.system.test.ts, beside the store files (see the sequencer below)
// `npm test` runs them all; `npm test -- --project unit` the first alone.
const exclude = ['node_modules/**', 'data/**', '.tmp/**', '.stryker-tmp*/**'];
/**
 * A mutation run (stryker.config.mjs sets MDS_MUTATION_RUN): each file in a process of its own and
 * one test at a time. Stryker runs a mutant against the tests that covered it in its dry run, and
 * tells them apart only when they run alone: with files sharing a process, and with
 * `describe.concurrent` tests side by side, it reported survived mutants their own tests kill
 * (partitionLog.ts's `end`; kafkaBus.ts's `membersAcrossProcesses`, planted by hand).
 */
const mutationRun = process.env.MDS_MUTATION_RUN === '1';
const soakTest = 'test/soak.system.test.ts';

/** System files that take minutes: started first, so the run does not end waiting on one of them. */
const longSystem = ['test/splitDeployment.system.test.ts', 'ingest/__tests__/recovery.system.test.ts', 'infra/__tests__/operations.system.test.ts'];
/** Store and unit files that take 15 s or more (measured in a whole run): started before the short ones, for the same reason. */
const longStoreAndUnit = [
  'aggregate/__tests__/indexRunner.store.test.ts',
  'history/__tests__/importFile.store.test.ts',
  'api/__tests__/newCoins.store.test.ts',
  'infra/__tests__/demoHistory.store.test.ts',
  'aggregate/__tests__/indexSweep.test.ts',
  'infra/__tests__/migrate.store.test.ts',
];

/**
 * The order files start in: the long system files, the other system files, the soak, then the long
 * store and unit files, the unit files and the store files (each group in vitest's own order). The
 * soak (a service process mostly waiting on its simulated venues) runs beside the store files
 * rather than after everything: the run is two minutes shorter.
 */
class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => {
      const inList = (list: string[]) => list.findIndex((path) => spec.moduleId.endsWith(path));
      if (inList(longSystem) >= 0) return inList(longSystem);
      const project = spec.project.name;
      if (project === 'system') return 10;
      if (project === 'soak') return 11;
      if (inList(longStoreAndUnit) >= 0) return 20 + inList(longStoreAndUnit);
      return project === 'unit' ? 30 : 31;
    };
    const sorted = await super.sort(files);
    return sorted.map((spec, i) => ({ spec, i })).sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i).map(({ spec }) => spec);
  }
}

export default defineConfig({
  test: {
    // chDB binds one data directory per process at a time: test files run in processes, not threads.
    pool: 'forks',
    // Three files at once on the 2-core machines CI runs on: most of a file's time is spent waiting
    // (on chDB, sockets, child processes); with four, the load generator's and the demo's timed
    // system tests failed (load average 9).
    maxWorkers: 3,
    // vitest's default, five concurrent tests of a file at once; one in a mutation run (above).
    maxConcurrency: mutationRun ? 1 : 5,
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
          isolate: mutationRun,
          include: ['**/*.test.ts'],
          exclude: [...exclude, '**/*.store.test.ts', '**/*.system.test.ts'],
          setupFiles: ['test/support/unitGuard.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'store',
          // Files share their worker's process as unit files do: chDB opens one data directory at a
          // time, and each file closes its store before the next opens its own copy of the template
          // (test/support/harness.ts). The project's CPU time fell from 489 s to 410 s.
          isolate: mutationRun,
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
          // Files share their worker's process too: each starts its own servers, processes and
          // stores, and stops them. `--project system`: 519 → 460 CPU-s, 335 → 304 s (vitest's
          // import time 68 → 20 s).
          isolate: mutationRun,
          include: ['**/*.system.test.ts'],
          exclude: [...exclude, soakTest],
          globalSetup: ['test/support/storeTemplate.ts'],
        },
      },
      {
        // The soak: one file, its own project so that `--project soak` runs it alone.
        extends: true,
        test: {
          name: 'soak',
          include: [soakTest],
          exclude,
        },
      },
    ],
  },
});
