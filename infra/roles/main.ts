import { parseArgs } from 'node:util';
import express from 'express';
import { z } from 'zod';
import { randomBytes } from 'node:crypto';
import { loadConfig, ConfigError, type Config } from '../config.ts';
import { createLogger, type Logger } from '../log.ts';
import { openStore, type Store } from '../store.ts';
import { withStoreFaults, type StoreFaults } from '../storeFaults.ts';
import { migrate } from '../migrate.ts';
import type { Bus } from '../bus/bus.ts';
import { createMemoryBus } from '../bus/memoryBus.ts';
import { createKafkaBus } from '../bus/kafkaBus.ts';
import { startCollector } from '../../ingest/collector.ts';
import { startCcxtCollector } from '../../ingest/ccxtCollector.ts';
import { seedDemoHistory } from '../../test/simulator/history.ts';
import { isSimulatedVenue, startSimulator, type Simulator } from '../../test/simulator/simulator.ts';
import { venueEndpoints } from '../../ingest/venue.ts';
import { selectCcxtVenues, selectVenues, venueTable } from '../../ingest/venues/registry.ts';
import { selectAssets } from '../../ingest/assetSelection.ts';
import { startDemoChain } from '../../test/simulator/evmChain.ts';
import { startTradeSink } from '../../aggregate/tradeSink.ts';
import { indexSettingsFromConfig, startIndexRunner } from '../../aggregate/indexRunner.ts';
import { startBookSink } from '../../aggregate/bookSink.ts';
import { startLiquidationSink } from '../../aggregate/liquidationSink.ts';
import { startStatusSink } from '../../aggregate/statusSink.ts';
import { fxDemoSnapshotFile } from '../../aggregate/jobs/fxReference.ts';
import { etfFlowsDemoDir } from '../../aggregate/jobs/etfFlows.ts';
import { startApi } from '../../api/server.ts';
import { KeyStore } from '../../api/keys.ts';
import { startJobs } from '../jobs.ts';
import { serviceJobs } from './jobList.ts';
import { createMetrics, observeBus, observeStore, sampledCounter, sampledGauge, type Metrics, type StoreActivity } from '../metrics.ts';
import { observeRequests, opsRouter, startOpsServer, type ReadinessCheck } from '../health.ts';
import type { CollectorMetrics } from '../../ingest/collector.ts';

const usage = `usage: node infra/roles/main.ts <role> [options]
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

/** How long one part may take to stop before the next one is stopped anyway. */
const stopDeadlineMs = 15_000;

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
        let timer: NodeJS.Timeout | undefined;
        // A part that hangs (a store call that never returns) must not keep the process from stopping.
        const deadline = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), stopDeadlineMs)));
        try {
          if ((await Promise.race([stop(), deadline])) === 'late') this.log.error({ part: name, ms: stopDeadlineMs }, 'part did not stop in time; going on');
        } catch (err) {
          this.log.error({ err, part: name }, 'error while stopping');
        } finally {
          clearTimeout(timer);
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
    : createMemoryBus({
        log: log.child({ part: 'bus' }),
        maxRecordsPerTopic: config.BUS_MAX_RECORDS_PER_TOPIC,
        maxBytesPerTopic: config.BUS_MAX_MB_PER_TOPIC * 1024 * 1024,
      });
}

async function openMigratedStore(config: Config, log: Logger, metrics: Metrics): Promise<{ store: Store; activity: StoreActivity; faults?: StoreFaults }> {
  const timeouts = { queryTimeoutMs: config.STORE_QUERY_TIMEOUT_MS, insertTimeoutMs: config.STORE_INSERT_TIMEOUT_MS };
  const store = await openStore(config, timeouts);
  const applied = await migrate(store);
  log.info({ store: store.description, applied: applied.length }, 'store ready');
  if (!config.MDS_FAULT_INJECTION) return observeStore(metrics, store);
  log.warn('MDS_FAULT_INJECTION is set: POST /__faults/store can make the store fail (soak runs only)');
  const faults = withStoreFaults(store, timeouts);
  return { ...observeStore(metrics, faults.store), faults };
}

/** Soak runs: `POST /__faults/store {"fault": "fail", "ms": 60000}` from loopback fails the store for a while. */
function storeFaultRoute(faults: StoreFaults, log: Logger): express.Router {
  const body = z.object({ fault: z.enum(['ok', 'fail', 'failquery', 'failinsert', 'hang']), ms: z.number().int().positive().optional() });
  const router = express.Router();
  let timer: NodeJS.Timeout | undefined;
  router.post('/__faults/store', express.json(), (req, res) => {
    const parsed = body.safeParse(req.body);
    if (!['127.0.0.1', '::1', '::ffff:127.0.0.1'].includes(req.socket.remoteAddress ?? '') || !parsed.success) {
      res.status(400).json({ error: { code: 'bad_request', message: 'expected {"fault": "ok"|"fail"|"failquery"|"failinsert"|"hang", "ms"?} from loopback', status: 400 } });
      return;
    }
    clearTimeout(timer);
    faults.set(parsed.data.fault);
    if (parsed.data.ms) timer = setTimeout(() => faults.set('ok'), parsed.data.ms);
    log.warn({ fault: parsed.data.fault, ms: parsed.data.ms }, 'store fault injected');
    res.json({ fault: parsed.data.fault, ms: parsed.data.ms ?? null });
  });
  return router;
}

/** Per venue, what its collector says of itself, read at every scrape. */
function observeCollectors(metrics: Metrics, collectors: readonly { metrics(): CollectorMetrics }[]): void {
  const per = (read: (m: CollectorMetrics) => number | undefined) => () =>
    collectors.flatMap((c) => {
      const m = c.metrics();
      const value = read(m);
      return value === undefined ? [] : [{ labels: { venue: m.venue }, value }];
    });
  const venue = ['venue'] as const;
  sampledGauge(metrics, { name: 'mds_venue_connected', help: '1 while every socket of the venue is connected.', labelNames: venue, read: per((m) => (m.connected ? 1 : 0)) });
  sampledGauge(metrics, { name: 'mds_venue_markets', help: 'Markets followed.', labelNames: venue, read: per((m) => m.markets) });
  sampledCounter(metrics, { name: 'mds_venue_messages_total', help: 'Messages received.', labelNames: venue, read: per((m) => m.messages) });
  sampledCounter(metrics, { name: 'mds_venue_trades_total', help: 'Trades published.', labelNames: venue, read: per((m) => m.trades) });
  sampledCounter(metrics, { name: 'mds_venue_liquidations_total', help: 'Liquidations published.', labelNames: venue, read: per((m) => m.liquidations) });
  sampledCounter(metrics, { name: 'mds_venue_reconnects_total', help: 'Reconnections after a drop, a stall or a failure.', labelNames: venue, read: per((m) => m.reconnects) });
  sampledCounter(metrics, { name: 'mds_venue_resyncs_total', help: 'Books dropped and fetched again after a gap or a bad checksum.', labelNames: venue, read: per((m) => m.resyncs) });
  sampledCounter(metrics, { name: 'mds_venue_unknown_messages_total', help: 'Messages no parser rule recognised.', labelNames: venue, read: per((m) => m.unknownMessages) });
  sampledGauge(metrics, { name: 'mds_venue_last_message_age_seconds', help: 'Seconds since the venue last sent anything.', labelNames: venue, read: per((m) => (m.lastMessageAgeMs === undefined ? undefined : m.lastMessageAgeMs / 1000)) });
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
  const metrics = createMetrics();
  // A stray rejection is a bug to fix, not a reason to lose what the in-process bus holds: log it and go on.
  let unhandled = 0;
  sampledCounter(metrics, { name: 'mds_unhandled_rejections_total', help: 'Promise rejections nothing handled (each is logged). Alert on any.', labelNames: [], read: () => [{ labels: {}, value: unhandled }] });
  process.on('unhandledRejection', (reason) => {
    unhandled += 1;
    log.error({ err: reason }, 'unhandled promise rejection');
  });
  process.once('uncaughtException', (err) => {
    log.fatal({ err }, 'uncaught exception: stopping');
    void life.shutdown('uncaught exception').then(() => process.exit(1));
  });
  const checks: ReadinessCheck[] = [];

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

    const opened = withAggregate || withApi || withJobs ? await openMigratedStore(config, log, metrics) : undefined;
    const store = opened?.store;
    if (store) {
      life.add('store', () => store.close());
      checks.push({ name: 'store', check: async () => (await store.rows('SELECT 1 AS ok'), { ok: true }) });
    }
    if (sim && store) {
      const simulator = sim;
      // A fresh demo gets 45 days of SIMULATED history, so indicators that need days of data have some
      // (fear & greed needs 13 days before its first reading, and a reading 30 days back for lastMonth).
      const seeded = await seedDemoHistory(store, { log: log.child({ part: 'demo-history' }), days: 45, stepMs: 900_000, now: Date.now(), seed: Date.now(), priceOf: (t) => simulator.reference(t, 'USD') });
      if (seeded > 0) log.info({ trades: seeded, days: 45 }, 'demo store seeded with SIMULATED history');
    }

    const bus = withIngest || withAggregate ? await openBus(config, log) : undefined;
    if (bus) {
      log.info({ bus: bus.description }, 'bus ready');
      observeBus(metrics, bus);
      let lastDropped = { count: bus.stats().dropped, at: 0 };
      checks.push({
        name: 'bus',
        check: () => {
          const stats = bus.stats();
          if (stats.dropped > lastDropped.count) lastDropped = { count: stats.dropped, at: Date.now() };
          const droppedRecently = Date.now() - lastDropped.at < 60_000;
          const lag = Object.fromEntries(stats.lags.map((l) => [`${l.group}/${l.topic}`, l.records]));
          return { ok: !droppedRecently, ...(droppedRecently ? { reason: 'the bus refused events in the last minute' } : {}), dropped: stats.dropped, lag };
        },
      });
      if ((role === 'ingest' || role === 'aggregate') && !config.KAFKA_BROKERS)
        log.warn('KAFKA_BROKERS is unset: the in-process bus reaches nothing outside this process');
      life.add('bus', () => bus.close());
    }

    if (withAggregate && store && bus) {
      const index = startIndexRunner({ store, log: log.child({ part: 'index' }), ...indexSettingsFromConfig(config) });
      life.add('index', () => index.stop());
      // Rows a sink stores for seconds the index has already passed (a backlog after a store outage) are computed again.
      const sinkOptions = {
        bus,
        store,
        batchRows: config.AGGREGATE_BATCH_ROWS,
        batchMs: config.AGGREGATE_BATCH_MS,
        onInserted: (r: { minTs: number }) => index.noteInserted(r.minTs),
      };
      const sink = await startTradeSink({ ...sinkOptions, log: log.child({ part: 'trade-sink' }) });
      life.add('trade-sink', () => sink.stop());
      const statuses = await startStatusSink({ ...sinkOptions, log: log.child({ part: 'status-sink' }) });
      life.add('status-sink', () => statuses.stop());
      const liquidations = await startLiquidationSink({ ...sinkOptions, log: log.child({ part: 'liquidation-sink' }), onInserted: undefined });
      life.add('liquidation-sink', () => liquidations.stop());
      const books = await startBookSink({ bus, store, log: log.child({ part: 'book-sink' }), everyMs: 5_000 });
      life.add('book-sink', () => books.stop());
      const indexLagMs = () => {
        const last = index.stats().lastComputed;
        return last === undefined ? undefined : Date.now() - (last + 1) * 1000;
      };
      sampledGauge(metrics, { name: 'mds_index_lag_seconds', help: 'How far the index is behind now (the end of the last second computed).', labelNames: [], read: () => { const lag = indexLagMs(); return lag === undefined ? [] : [{ labels: {}, value: lag / 1000 }]; } });
      sampledCounter(metrics, { name: 'mds_index_rows_total', help: 'Rows the index runner wrote to index_ticks.', labelNames: [], read: () => [{ labels: {}, value: index.stats().rows }] });
      sampledCounter(metrics, { name: 'mds_index_failures_total', help: 'Index steps that failed (retried).', labelNames: [], read: () => [{ labels: {}, value: index.stats().failures }] });
      sampledCounter(metrics, { name: 'mds_sink_duplicates_total', help: 'Events the trade sink dropped because the store already held them.', labelNames: [], read: () => [{ labels: {}, value: sink.stats().duplicates }] });
      checks.push({
        name: 'index',
        check: () => {
          const lag = indexLagMs();
          if (lag === undefined) return { ok: false, reason: 'no second computed yet' };
          return { ok: lag <= config.READY_MAX_INDEX_LAG_MS, ...(lag > config.READY_MAX_INDEX_LAG_MS ? { reason: `the index is ${Math.round(lag / 1000)} s behind` } : {}), lagMs: lag };
        },
      });
      const activity = opened!.activity;
      checks.push({
        name: 'ingestion',
        check: () => {
          const at = activity.lastInsertAt('trades');
          if (at === undefined) return { ok: false, reason: 'no trade inserted yet' };
          const age = Date.now() - at;
          return { ok: age <= config.READY_MAX_INGEST_AGE_MS, ...(age > config.READY_MAX_INGEST_AGE_MS ? { reason: `last trade insert ${Math.round(age / 1000)} s ago` } : {}), lastTradeInsertAgeMs: age };
        },
      });
    }

    if (withIngest && bus) {
      const collectors: { metrics(): CollectorMetrics }[] = [];
      for (const venue of selectedVenues) {
        const endpoints = sim && isSimulatedVenue(venue.id) ? sim.endpoints(venue.id) : venueEndpoints(venue);
        const collector = await startCollector({ venue, endpoints, bus, log, assets, tuning: { marketsRefreshMs: config.INGEST_MARKETS_REFRESH_MIN * 60_000 } });
        collectors.push(collector);
        life.add(`collector:${venue.id}`, async () => {
          await collector.stop();
          await bus.flush();
        });
      }
      for (const venue of selectedCcxtVenues) {
        const collector = await startCcxtCollector({ venue, bus, log: log.child({ venue: venue.id }), assets });
        collectors.push(collector);
        life.add(`collector:${venue.id}`, async () => {
          await collector.stop();
          await bus.flush();
        });
      }
      observeCollectors(metrics, collectors);
      checks.push({
        name: 'collectors',
        check: () => {
          const all = collectors.map((c) => c.metrics());
          const disconnected = all.filter((m) => !m.connected).map((m) => m.venue);
          const connected = all.length - disconnected.length;
          return { ok: connected > 0, ...(connected === 0 ? { reason: 'no venue connected' } : {}), connected, disconnected };
        },
      });
    }

    if (withJobs && store) {
      const jobs = await startJobs(serviceJobs(config), { store, log: log.child({ part: 'jobs' }), redisUrl: config.REDIS_URL });
      life.add('jobs', () => jobs.stop());
    }

    if (withApi && !withAggregate && store) {
      // An API replica sees the pipeline through the store: the newest second of the index.
      checks.push({
        name: 'index',
        check: async () => {
          const [row] = await store.rows<{ latest: number }>(
            `SELECT toUnixTimestamp(max(second)) AS latest, count() AS n FROM index_ticks WHERE second > now() - INTERVAL 1 HOUR HAVING n > 0`,
          );
          if (!row) return { ok: false, reason: 'no index second in the last hour' };
          const lag = Date.now() - (row.latest + 1) * 1000;
          return { ok: lag <= config.READY_MAX_INDEX_LAG_MS, ...(lag > config.READY_MAX_INDEX_LAG_MS ? { reason: `the index is ${Math.round(lag / 1000)} s behind` } : {}), lagMs: lag };
        },
      });
    }
    const ops = opsRouter({ metrics, checks: () => checks, access: { token: config.METRICS_TOKEN } });
    if (opened?.faults) ops.use(storeFaultRoute(opened.faults, log));
    if (withApi && store) {
      if (role === 'demo') {
        const key = config.DEMO_API_KEY ?? `mds_demo_${randomBytes(16).toString('hex')}`;
        await new KeyStore(store).ensure(key, 'demo');
        // Printed once so the person running the demo can use it; it never goes to the log stream.
        process.stdout.write(`\nDemo API key: ${key}\nTry: curl -H 'x-api-key: ${key}' 'http://127.0.0.1:${config.PORT}/v1/prices?ids=bitcoin'\n\n`);
      }
      const api = await startApi({ store, config, log: log.child({ part: 'api' }), ops: { observe: observeRequests(metrics), router: ops } });
      life.add('api', () => api.close());
      log.info({ url: api.url }, 'api listening');
    } else {
      // Roles without the API still answer /health, /ready and /metrics, on PORT.
      const server = await startOpsServer(config.PORT, ops);
      life.add('ops', () => server.close());
      log.info({ url: server.url }, 'health and metrics listening');
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
