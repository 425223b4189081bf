import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { loadConfig, ConfigError, type Config } from './config.ts';
import { createLogger, type Logger } from './log.ts';
import { openStore, type Store } from './store.ts';
import { migrate } from './migrate.ts';
import type { Bus } from './bus/bus.ts';
import { createMemoryBus } from './bus/memoryBus.ts';
import { createKafkaBus } from './bus/kafkaBus.ts';
import { startCollector } from '../ingest/collector.ts';
import { startCcxtCollector } from '../ingest/ccxtCollector.ts';
import { seedDemoHistory } from '../ingest/simulator/history.ts';
import { isSimulatedVenue, startSimulator, type Simulator } from '../ingest/simulator/simulator.ts';
import { venueEndpoints } from '../ingest/venue.ts';
import { selectCcxtVenues, selectVenues, venueTable } from '../ingest/venues/registry.ts';
import { selectAssets } from '../ingest/assetSelection.ts';
import { startDemoChain } from '../ingest/simulator/evmChain.ts';
import { startTradeSink } from '../aggregate/tradeSink.ts';
import { indexSettingsFromConfig, startIndexRunner } from '../aggregate/indexRunner.ts';
import { startBookSink } from '../aggregate/bookSink.ts';
import { startLiquidationSink } from '../aggregate/liquidationSink.ts';
import { fxDemoSnapshotFile } from '../aggregate/fxReference.ts';
import { etfFlowsDemoDir } from '../aggregate/etfFlows.ts';
import { startApi } from '../api/server.ts';
import { KeyStore } from '../api/keys.ts';
import { startJobs } from './jobs.ts';
import { serviceJobs } from './jobList.ts';

const usage = `usage: node infra/main.ts <role> [options]
roles:
  all                     collectors, bus, aggregator, store and API in one process (npm start)
  demo                    the same against the local market simulator (npm run demo)
  ingest [--venues list]  collectors only, publishing to the bus (needs KAFKA_BROKERS to be useful);
                          --venues binance,okx (default: every native venue), --list-venues prints them;
                          ccxt venues run when named (--venues bitget,woo-swap), or all with --venues ccxt;
                          --assets top100 (the catalog's first 100) or --assets bitcoin,ethereum
  aggregate               bus consumer writing to ClickHouse
  api                     the HTTP API over ClickHouse
  jobs                    scheduled reference and indicator jobs (bullmq workers when REDIS_URL is set)`;

/** Stops registered parts in reverse order of start, once, on SIGINT/SIGTERM or a fatal error. */
class Lifecycle {
  private stops: { name: string; stop: () => Promise<unknown> }[] = [];
  private stopping: Promise<void> | undefined;
  private readonly log: Logger;
  constructor(log: Logger) {
    this.log = log;
  }
  add(name: string, stop: () => Promise<unknown>): void {
    this.stops.push({ name, stop });
  }
  shutdown(reason: string): Promise<void> {
    this.stopping ??= (async () => {
      this.log.info({ reason }, 'shutting down');
      for (const { name, stop } of this.stops.reverse()) {
        try {
          await stop();
        } catch (err) {
          this.log.error({ err, part: name }, 'error while stopping');
        }
      }
      this.log.info('stopped');
    })();
    return this.stopping;
  }
}

async function openBus(config: Config, log: Logger): Promise<Bus> {
  return config.KAFKA_BROKERS
    ? createKafkaBus({ brokers: config.KAFKA_BROKERS, log: log.child({ part: 'bus' }) })
    : createMemoryBus({ log: log.child({ part: 'bus' }) });
}

async function openMigratedStore(config: Config, log: Logger): Promise<Store> {
  const store = await openStore(config);
  const applied = await migrate(store);
  log.info({ store: store.description, applied: applied.length }, 'store ready');
  return store;
}

async function run(role: string, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { venues: { type: 'string' }, assets: { type: 'string' }, 'list-venues': { type: 'boolean' } }, allowPositionals: false });
  if (values['list-venues']) {
    process.stdout.write(`${venueTable()}\n`);
    return;
  }
  const selectedVenues = selectVenues(values.venues);
  const selectedCcxtVenues = selectCcxtVenues(values.venues);
  const assets = selectAssets(values.assets);
  let config = loadConfig();
  const log = createLogger(config.LOG_LEVEL, { role });
  const life = new Lifecycle(log);
  const onSignal = (signal: string) => void life.shutdown(signal).then(() => process.exit(0));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    const withIngest = role === 'all' || role === 'demo' || role === 'ingest';
    const withAggregate = role === 'all' || role === 'demo' || role === 'aggregate';
    const withApi = role === 'all' || role === 'demo' || role === 'api';
    const withJobs = role === 'all' || role === 'demo' || role === 'jobs';

    let sim: Simulator | undefined;
    if (role === 'demo') {
      // Every native venue's protocol on loopback, from one SIMULATED market.
      // Books move every 250 ms (the venues' fastest streams are 100 ms) and each market trades about
      // once a second: 15 venues, the aggregator and the API share a laptop's cores in one process.
      const simulator = await startSimulator({ seed: Date.now(), tickMs: 250, tradesPerSecondPerMarket: 1 });
      sim = simulator;
      life.add('simulator', () => simulator.close());
      config = { ...config, MDS_SIMULATED: true };
      // The index runner backfills the seeded history's last day (enough for the 24 h changes), not a
      // week of it, and in one step: the history is sparse, and live prices wait until it is done.
      if (process.env.INDEX_BACKFILL_HOURS === undefined) config = { ...config, INDEX_BACKFILL_HOURS: 26 };
      if (process.env.INDEX_MAX_SECONDS_PER_TICK === undefined) config = { ...config, INDEX_MAX_SECONDS_PER_TICK: 26 * 3_600 };
      // Approximate rates, marked demo-snapshot in every response that uses them, so vs=eur etc. answer offline.
      config = { ...config, FX_REFERENCE_FILE: config.FX_REFERENCE_FILE ?? fxDemoSnapshotFile };
      // SIMULATED fund flows; the files say so, and so does every response built from them.
      config = { ...config, ETF_FLOWS_DIR: config.ETF_FLOWS_DIR ?? etfFlowsDemoDir };
      // One SIMULATED EVM chain (named so in /v1/chains), indexed by the chain indexer job over JSON-RPC.
      const chain = await startDemoChain();
      life.add('chain-simulator', () => chain.close());
      config = { ...config, CHAINS_CONFIG: config.CHAINS_CONFIG ?? JSON.stringify({ chains: [chain.config] }) };
      log.info({ venues: Object.fromEntries(sim.venues.map((id) => [id, simulator.endpoints(id).ws])) }, 'market simulator started: all demo data is SIMULATED');
    }

    const store = withAggregate || withApi || withJobs ? await openMigratedStore(config, log) : undefined;
    if (store) life.add('store', () => store.close());
    if (sim && store) {
      const simulator = sim;
      // A fresh demo gets 45 days of SIMULATED history, so indicators that need days of data have some
      // (fear & greed needs 13 days before its first reading, and a reading 30 days back for lastMonth).
      const seeded = await seedDemoHistory(store, { days: 45, stepMs: 900_000, now: Date.now(), seed: Date.now(), priceOf: (t) => simulator.reference(t, 'USD') });
      if (seeded > 0) log.info({ trades: seeded, days: 45 }, 'demo store seeded with SIMULATED history');
    }

    const bus = withIngest || withAggregate ? await openBus(config, log) : undefined;
    if (bus) {
      log.info({ bus: bus.description }, 'bus ready');
      if ((role === 'ingest' || role === 'aggregate') && !config.KAFKA_BROKERS)
        log.warn('KAFKA_BROKERS is unset: the in-process bus reaches nothing outside this process');
      life.add('bus', () => bus.close());
    }

    if (withAggregate && store && bus) {
      const sink = await startTradeSink({
        bus,
        store,
        log: log.child({ part: 'trade-sink' }),
        batchRows: config.AGGREGATE_BATCH_ROWS,
        batchMs: config.AGGREGATE_BATCH_MS,
      });
      life.add('trade-sink', () => sink.stop());
      const index = startIndexRunner({ store, log: log.child({ part: 'index' }), ...indexSettingsFromConfig(config) });
      life.add('index', () => index.stop());
      const liquidations = await startLiquidationSink({
        bus,
        store,
        log: log.child({ part: 'liquidation-sink' }),
        batchRows: config.AGGREGATE_BATCH_ROWS,
        batchMs: config.AGGREGATE_BATCH_MS,
      });
      life.add('liquidation-sink', () => liquidations.stop());
      const books = await startBookSink({ bus, store, log: log.child({ part: 'book-sink' }), everyMs: 5_000 });
      life.add('book-sink', () => books.stop());
    }

    if (withIngest && bus) {
      for (const venue of selectedVenues) {
        const endpoints = sim && isSimulatedVenue(venue.id) ? sim.endpoints(venue.id) : venueEndpoints(venue);
        const collector = await startCollector({ venue, endpoints, bus, log, assets, tuning: { marketsRefreshMs: config.INGEST_MARKETS_REFRESH_MIN * 60_000 } });
        life.add(`collector:${venue.id}`, async () => {
          await collector.stop();
          await bus.flush();
        });
      }
      for (const venue of selectedCcxtVenues) {
        const collector = await startCcxtCollector({ venue, bus, log: log.child({ venue: venue.id }), assets });
        life.add(`collector:${venue.id}`, async () => {
          await collector.stop();
          await bus.flush();
        });
      }
    }

    if (withJobs && store) {
      const jobs = await startJobs(serviceJobs(config), { store, log: log.child({ part: 'jobs' }), redisUrl: config.REDIS_URL });
      life.add('jobs', () => jobs.stop());
    }

    if (withApi && store) {
      if (role === 'demo') {
        const key = config.DEMO_API_KEY ?? `mds_demo_${randomBytes(16).toString('hex')}`;
        await new KeyStore(store).ensure(key, 'demo');
        // Printed once so the person running the demo can use it; it never goes to the log stream.
        process.stdout.write(`\nDemo API key: ${key}\nTry: curl -H 'x-api-key: ${key}' 'http://127.0.0.1:${config.PORT}/v1/prices?ids=bitcoin'\n\n`);
      }
      const api = await startApi({ store, config, log: log.child({ part: 'api' }) });
      life.add('api', () => api.close());
      log.info({ url: api.url }, 'api listening');
    }
  } catch (err) {
    log.fatal({ err }, 'failed to start');
    await life.shutdown('start failure');
    process.exit(1);
  }
}

const [role, ...rest] = process.argv.slice(2);
if (!role || !['all', 'demo', 'ingest', 'aggregate', 'api', 'jobs'].includes(role)) {
  console.error(usage);
  process.exit(2);
}
run(role, rest).catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(err instanceof ConfigError ? 2 : 1);
});
