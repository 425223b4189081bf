// A trade sink in its own process over Kafka, driven by aggregatorCrash.system.test.ts and
// sinkRace.system.test.ts: on an embedded store in DATA_DIR (chDB binds one data directory per
// process), or on a ClickHouse server at STORE_URL. With CRASH_AT_COMMIT=1 it kills itself with
// SIGKILL at the first commit after an insert of the test's trades landed, i.e. before the bus
// learned of it. It stops once the store holds EXPECTED trades of VENUE, and prints their counts.
import { writeSync } from 'node:fs';
import { openStore } from '../../infra/store.ts';
import { migrate } from '../../infra/migrate.ts';
import { createKafkaBus } from '../../infra/bus/kafkaBus.ts';
import { createLogger } from '../../infra/log.ts';
import { startTradeSink } from '../../aggregate/tradeSink.ts';
import type { Bus } from '../../infra/bus/bus.ts';

const { DATA_DIR, STORE_URL, BROKERS, GROUP, VENUE, EXPECTED, CRASH_AT_COMMIT, BATCH_ROWS = '500', BATCH_MS = '200' } = process.env;
if (!(DATA_DIR || STORE_URL) || !BROKERS || !GROUP || !VENUE || !EXPECTED) throw new Error('sinkProcess: missing environment');

const log = createLogger('warn');
const store = await openStore({ MDS_DATA_DIR: DATA_DIR ?? '', CLICKHOUSE_DATABASE: 'mds', CLICKHOUSE_URL: STORE_URL });
await migrate(store);
// A short session: the restarted sink takes over the partitions of the killed one sooner.
const kafka = await createKafkaBus({ brokers: BROKERS.split(','), log, sessionTimeoutMs: 6_000 });

const countTrades = async () =>
  (await store.rows<{ n: number }>('SELECT count() AS n FROM trades WHERE venue = {venue:String}', { venue: VENUE }))[0]?.n ?? 0;

// Fault injection around the real Kafka bus: only the commit is intercepted.
const bus: Bus = CRASH_AT_COMMIT
  ? {
      description: kafka.description,
      membersAcrossProcesses: kafka.membersAcrossProcesses,
      onRefused: (listener) => kafka.onRefused(listener),
      publish: (e) => kafka.publish(e),
      flush: () => kafka.flush(),
      stats: () => kafka.stats(),
      close: () => kafka.close(),
      subscribe: async (options) => {
        const sub = await kafka.subscribe(options);
        return {
          stop: () => sub.stop(),
          commit: async (positions) => {
            const inserted = await countTrades();
            // The topic is shared with other tests: a batch that held none of ours commits as usual.
            if (inserted === 0) return sub.commit(positions);
            // Synchronous: an asynchronous pipe write would die with the process.
            writeSync(1, JSON.stringify({ insertedBeforeCrash: inserted }) + '\n');
            process.kill(process.pid, 'SIGKILL');
          },
        };
      },
    }
  : kafka;

const sink = await startTradeSink({ bus, store, log, batchRows: Number(BATCH_ROWS), batchMs: Number(BATCH_MS), group: GROUP });
writeSync(1, JSON.stringify({ subscribed: true }) + '\n');

const deadline = Date.now() + 45_000;
while ((await countTrades()) < Number(EXPECTED) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
// Give any wrongly replayed batch time to land before counting.
await new Promise((r) => setTimeout(r, 1_000));
await sink.stop();
const [counts] = await store.rows<Record<string, number>>(
  `SELECT
     (SELECT count() FROM trades WHERE venue = {venue:String}) AS raw,
     (SELECT uniqExact(venue, market, trade_id) FROM trades WHERE venue = {venue:String}) AS distinctTrades,
     (SELECT sum(trade_count) FROM candles_1m WHERE venue = {venue:String}) AS candles1m,
     (SELECT sum(trade_count) FROM candles_1w WHERE venue = {venue:String}) AS candles1w,
     (SELECT sum(trade_count) FROM market_seconds WHERE asset = {venue:String}) AS marketSecondTrades`,
  { venue: VENUE },
);
process.stdout.write(JSON.stringify({ ...counts, duplicates: sink.stats().duplicates, repeatedInserts: sink.stats().repeatedInserts }) + '\n');
await kafka.close();
await store.close();
process.exit(0);
