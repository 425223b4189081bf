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
import { startBinanceSimulator } from '../ingest/simulator/binanceServer.ts';
import { startTradeSink } from '../aggregate/tradeSink.ts';
import { startBookSink } from '../aggregate/bookSink.ts';
import { startApi } from '../api/server.ts';
import { KeyStore } from '../api/keys.ts';

const usage = `usage: node infra/main.ts <role> [options]
roles:
  all                     collectors, bus, aggregator, store and API in one process (npm start)
  demo                    the same against the local market simulator (npm run demo)
  ingest [--venues list]  collectors only, publishing to the bus (needs KAFKA_BROKERS to be useful)
  aggregate               bus consumer writing to ClickHouse
  api                     the HTTP API over ClickHouse`;

const venues = ['binance'] as const;
type Venue = (typeof venues)[number];

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

function parseVenues(list: string | undefined): Venue[] {
  if (!list) return [...venues];
  return list.split(',').map((v) => {
    const venue = venues.find((known) => known === v.trim());
    if (!venue) throw new ConfigError(`--venues: unknown venue "${v}"; supported: ${venues.join(', ')}`);
    return venue;
  });
}

async function run(role: string, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { venues: { type: 'string' } }, allowPositionals: false });
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

    if (role === 'demo') {
      const sim = await startBinanceSimulator({ port: 0, seed: Date.now() });
      life.add('simulator', () => sim.close());
      config = { ...config, VENUE_BINANCE_WS_URL: sim.wsUrl, VENUE_BINANCE_REST_URL: sim.restUrl, MDS_SIMULATED: true };
      log.info({ ws: sim.wsUrl, rest: sim.restUrl }, 'market simulator started: all demo data is SIMULATED');
    }

    const store = withAggregate || withApi ? await openMigratedStore(config, log) : undefined;
    if (store) life.add('store', () => store.close());

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
      const books = await startBookSink({ bus, store, log: log.child({ part: 'book-sink' }), everyMs: 5_000 });
      life.add('book-sink', () => books.stop());
    }

    if (withIngest && bus) {
      for (const venue of parseVenues(values.venues)) {
        const collector = await startCollector({ venue, config, bus, log: log.child({ venue }) });
        life.add(`collector:${venue}`, async () => {
          await collector.stop();
          await bus.flush();
        });
      }
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
if (!role || !['all', 'demo', 'ingest', 'aggregate', 'api'].includes(role)) {
  console.error(usage);
  process.exit(2);
}
run(role, rest).catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(err instanceof ConfigError ? 2 : 1);
});
