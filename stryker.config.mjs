import path from 'node:path';

// Mutation testing of the pure cores (issue #15; how to run it, how long it takes, the scores and
// the equivalent mutants: test/MUTATION.md). One module group at a time keeps a run short:
//   npm run mutate -- --mutate aggregate/indexSweep.ts
// Each group lists the test files that own its modules: a mutant runs only the tests that covered
// it in the dry run (perTest), and only those files take part in the dry run (`testFiles`, then
// vitest's `related` keeps the ones that import the mutated files).

// A mutation run: vitest.config.ts then gives each test file a process of its own and runs one test
// at a time. With files sharing a process, or concurrent tests, mutants their tests kill were
// reported survived.
process.env.MDS_MUTATION_RUN = '1';

/** The native venues' unit tests (recorded and hand-written frames; the socket tests are end-to-end). */
const venueTests = ['binance', 'binance-futures', 'bitfinex', 'bitmex', 'bitstamp', 'bybit', 'coinbase', 'deribit', 'gate', 'kraken', 'kucoin', 'okx']
  .map((venue) => `ingest/__tests__/${venue}.test.ts`);

/** Mutated modules, each with the test files that are expected to kill their mutants. */
const groups = [
  {
    mutate: ['aggregate/indexPrice.ts', 'aggregate/indexSweep.ts', 'aggregate/indexQuoteRate.ts'],
    tests: ['aggregate/__tests__/indexPrice.test.ts', 'aggregate/__tests__/indexSweep.test.ts', 'aggregate/__tests__/indexQuoteRate.test.ts'],
  },
  {
    // The index engine's store reads (its SQL strings are static, left out): chDB tests, seconds each.
    mutate: ['aggregate/indexInputs.ts'],
    tests: ['aggregate/__tests__/indexInputs.store.test.ts', 'aggregate/__tests__/indexRunner.store.test.ts', 'aggregate/__tests__/indexRunnerRecovery.store.test.ts'],
  },
  {
    // The index runner: its steps, go-back and writes, and the live loop's cadence on a simulated
    // clock (chDB tests, seconds each); its settings from the environment (indexPrice.test.ts).
    mutate: ['aggregate/indexRunner.ts'],
    tests: ['aggregate/__tests__/indexRunner.store.test.ts', 'aggregate/__tests__/indexRunnerRecovery.store.test.ts', 'aggregate/__tests__/indexPrice.test.ts'],
  },
  {
    mutate: ['aggregate/currency/*.ts'],
    tests: ['aggregate/currency/__tests__/*.test.ts', 'api/__tests__/currency.store.test.ts'],
  },
  {
    // The native venues' parse and checksum functions; ccxtVenues.ts, registry.ts and
    // writeCcxtCatalog.ts are wiring and catalog generation, not parsing.
    mutate: ['ingest/venues/*.ts', '!ingest/venues/ccxtVenues.ts', '!ingest/venues/registry.ts', '!ingest/venues/writeCcxtCatalog.ts'],
    tests: venueTests,
  },
  {
    mutate: ['ingest/bookSync.ts', 'ingest/orderBook.ts'],
    tests: ['ingest/__tests__/bookSync.test.ts', ...venueTests],
  },
  {
    // The sink's own tests (chDB, seconds each); the API's liquidation tests add minutes per run and kill nothing more.
    mutate: ['aggregate/dedupingSink.ts', 'aggregate/sinkSlices.ts', 'aggregate/heldEvents.ts', 'aggregate/sinkIntents.ts'],
    tests: [
      'aggregate/__tests__/dedupingSink.store.test.ts',
      'aggregate/__tests__/dedupingSinkTakeover.store.test.ts',
      'aggregate/__tests__/sinkSlices.test.ts',
      'aggregate/__tests__/tradeSink.store.test.ts',
      'aggregate/__tests__/tradeSinkStoreFaults.store.test.ts',
    ],
  },
  {
    // The in-process bus and its parts; the Kafka adapter's have their own group below. The
    // conformance suite runs its Kafka half too, so it joins only with a broker (test/MUTATION.md says how).
    mutate: [
      'infra/bus/memoryBus.ts',
      'infra/bus/publishGate.ts',
      'infra/bus/partitionLog.ts',
      'infra/bus/topicBound.ts',
      'infra/bus/consumerGroups.ts',
      'infra/bus/bookConflation.ts',
      'infra/bus/memoryMember.ts',
      'infra/bus/memoryStats.ts',
      'infra/bus/lagWarning.ts',
    ],
    tests: [
      'infra/bus/__tests__/memoryBus.test.ts',
      'infra/bus/__tests__/memoryBusStats.test.ts',
      'infra/bus/__tests__/publishGate.test.ts',
      'infra/bus/__tests__/partitionLog.test.ts',
      'infra/bus/__tests__/topicBound.test.ts',
      'infra/bus/__tests__/consumerGroups.test.ts',
      'infra/bus/__tests__/bookConflation.test.ts',
      ...(process.env.MDS_TEST_KAFKA_BROKERS ? ['infra/bus/__tests__/bus.conformance.system.test.ts'] : []),
    ],
  },
  // The Kafka adapter, with a broker only (start kcat's mock as test/run.sh does and export
  // MDS_TEST_KAFKA_BROKERS). Its tests mostly wait on brokers (retries, rebalances): run it with
  // --concurrency 4 (test/MUTATION.md).
  ...(process.env.MDS_TEST_KAFKA_BROKERS
    ? [
        {
          mutate: [
            'infra/bus/kafkaBus.ts',
            'infra/bus/kafkaSender.ts',
            'infra/bus/producerBuffer.ts',
            'infra/bus/kafkaMember.ts',
            'infra/bus/uncommittedSpans.ts',
            'infra/bus/reportedLags.ts',
            'infra/bus/kafkaCodec.ts',
          ],
          tests: [
            'infra/bus/__tests__/bus.conformance.system.test.ts',
            'infra/bus/__tests__/kafkaOverflow.system.test.ts',
            'infra/bus/__tests__/kafkaBus.system.test.ts',
            'infra/bus/__tests__/kafkaSender.test.ts',
            'infra/bus/__tests__/producerBuffer.test.ts',
            'infra/bus/__tests__/uncommittedSpans.test.ts',
            'infra/bus/__tests__/reportedLags.test.ts',
            'infra/bus/__tests__/kafkaCodec.test.ts',
          ],
        },
      ]
    : []),
  {
    // The migration lock: taken once, renewed while held, released (and no longer renewed); its
    // contention, expiry and renewal at their exact millisecond (migrationLock.store.test.ts).
    mutate: ['infra/migrationLock.ts'],
    tests: ['infra/__tests__/migrate.store.test.ts', 'infra/__tests__/migrationLock.store.test.ts'],
  },
  {
    // The stream hub: subscriptions, what a (re)subscribed client gets first, limits; on its own
    // with stand-in sockets and a held clock (streamHub.test.ts), and end-to-end (chDB).
    mutate: ['api/stream/hub.ts'],
    tests: ['api/__tests__/streamHub.test.ts', 'api/__tests__/stream.store.test.ts'],
  },
  {
    // Missed trades: gaps found from the live trades and sockets, and their recovery from a venue's history.
    mutate: ['ingest/tradeGaps.ts', 'ingest/historyRecovery.ts'],
    // missedTrades.test.ts: the two as the collector wires them (a late live trade, a refused recovered one).
    tests: ['ingest/__tests__/tradeGaps.test.ts', 'ingest/__tests__/historyRecovery.test.ts', 'ingest/__tests__/missedTrades.test.ts'],
  },
  {
    mutate: ['api/responseCache.ts'],
    tests: ['api/__tests__/responseCache.test.ts', 'api/__tests__/cachedHandler.system.test.ts'],
  },
  {
    // quota.system.test.ts holds the clock and needs no store; the Redis counters need a redis-server
    // (test/run.sh starts one and sets MDS_TEST_REDIS_URL) and the chDB-backed API (seconds per mutant).
    mutate: ['api/quota.ts'],
    tests: ['api/__tests__/quota.system.test.ts', ...(process.env.MDS_TEST_REDIS_URL ? ['api/__tests__/quotaRedis.system.test.ts'] : [])],
  },
];

/** The files named by `--mutate a.ts,b.ts` (or `-m`), if any. */
function mutateArgument() {
  const at = process.argv.findIndex((arg) => arg === '--mutate' || arg === '-m');
  return at === -1 ? undefined : process.argv[at + 1]?.split(',');
}

/** The groups a `--mutate` run touches: their test files alone take part in its dry run. */
function selectedGroups() {
  const files = mutateArgument();
  if (!files) return groups;
  const covers = (group, file) =>
    group.mutate.some((pattern) => !pattern.startsWith('!') && path.matchesGlob(file.replace(/:.*$/, ''), pattern));
  return groups.filter((group) => files.some((file) => covers(group, file)));
}

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  // forks, as vitest.config.ts says: chDB binds one data directory per process (threads crash it).
  vitest: { configFile: 'vitest.config.ts', related: true, pool: 'forks' },
  mutate: groups.flatMap((g) => g.mutate),
  testFiles: [...new Set(selectedGroups().flatMap((g) => g.tests))],
  // TypeScript 7 (the native compiler) has no JavaScript API for @stryker-mutator/typescript-checker:
  // mutants that do not type-check run and are killed (or survive) like any other.
  checkers: [],
  // Stryker rewrites the sandbox's tsconfig.json through the same missing API; ours has no
  // `extends` or `references` to rewrite, so it points at a file that does not exist to skip that.
  tsconfigFile: 'no-tsconfig-rewrite.json',
  coverageAnalysis: 'perTest',
  // Stryker 10 activates a static mutant (a module-level value) only after its module is loaded
  // when `testFiles` is set, and reports it Survived without testing it
  // (stryker-mutator/stryker-js#6144, #6209): they are left out of the score instead.
  ignoreStatic: true,
  // Two cores shared by several developers.
  concurrency: 1,
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
  ignorePatterns: ['data', '.tmp', 'reports', 'coverage', '*.log'],
  // A loaded machine: a mutant's test run may take several times the dry run's.
  timeoutFactor: 3,
  timeoutMS: 20_000,
  thresholds: { high: 90, low: 80, break: null },
};
