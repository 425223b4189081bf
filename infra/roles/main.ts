import { parseArgs } from 'node:util';
import { loadApiKeySecret } from '../../api/keySecret.ts';
import { selectAssets } from '../../ingest/assetSelection.ts';
import { selectCcxtVenues, selectVenues, venueTable } from '../../ingest/venues/registry.ts';
import { isSimulatedVenue, type Simulator } from '../../simulator/simulator.ts';
import { answerHelpAndVersion } from '../cli.ts';
import { loadConfig, ConfigError } from '../config.ts';
import { startJobs } from '../jobs.ts';
import { createLogger } from '../log.ts';
import { createMetrics, sampledCounter } from '../metrics.ts';
import { redactCredentials } from '../redact.ts';
import { startAdminChannel } from './admin.ts';
import { startAggregate } from './aggregate.ts';
import { startHttp } from './api.ts';
import { startApiThread } from './apiThread.ts';
import { openRoleBus } from './bus.ts';
import type { RoleContext } from './context.ts';
import { provisionDemoKey, seedDemo, startDemoWorld } from './demo.ts';
import { startIngest, startIngestWorker } from './ingest.ts';
import { serviceJobs } from './jobList.ts';
import { Lifecycle } from './lifecycle.ts';
import { migrateStore, openRoleStore, type RoleStore } from './store.ts';

// The composition root: the only code that imports every layer. Each role is the parts below, in
// this order; each part registers its stop, its metrics and its readiness checks in the context.
const usage = `usage: node infra/roles/main.ts <role> [options]   (npm run <role> -- [options])
roles:
  all                     collectors, bus, aggregator, store and API in one process (npm start); migrates the store first
  demo                    the same against the local market simulator (npm run demo)
  migrate                 applies the store's pending migrations and exits (npm run migrate); the roles
                          below refuse to start on a store that needs it
  ingest [--venues list]  collectors only, publishing to the bus (needs KAFKA_BROKERS to be useful);
                          --venues binance,okx (default: every native venue), --list-venues prints them;
                          ccxt venues run when named (--venues bitget,woo-swap), or all with --venues ccxt;
                          --assets top100 (the catalog's first 100) or --assets bitcoin,ethereum
  aggregate               bus consumer writing to ClickHouse
  api                     the HTTP API over ClickHouse
  jobs                    scheduled reference and indicator jobs (bullmq workers when REDIS_URL is set)
options of every role:
  --help, -h              this text
  --version               the service's version
configuration: environment variables, listed in the README and infra/config.ts`;


const roles = ['all', 'demo', 'migrate', 'ingest', 'aggregate', 'api', 'jobs'] as const;
type Role = (typeof roles)[number];

/** Process-wide: what stops the process, and what a stray error does. */
function startProcess(role: Role): RoleContext {
  const config = loadConfig();
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
  return { config, log, life, metrics, checks: [] };
}

async function run(role: Role, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { venues: { type: 'string' }, assets: { type: 'string' }, 'list-venues': { type: 'boolean' } }, allowPositionals: false });
  if (values['list-venues']) {
    process.stdout.write(`${venueTable()}\n`);
    return;
  }
  const selection = { venues: selectVenues(values.venues), ccxtVenues: selectCcxtVenues(values.venues), assets: selectAssets(values.assets) };
  if (role === 'migrate') {
    const config = loadConfig();
    await migrateStore({ config, log: createLogger(config.LOG_LEVEL, { role }) });
    return;
  }
  const ctx = startProcess(role);
  const whole = role === 'all' || role === 'demo';
  const withIngest = whole || role === 'ingest';
  const withAggregate = whole || role === 'aggregate';
  const withApi = whole || role === 'api';
  const withJobs = whole || role === 'jobs';
  // Before anything starts: with CLICKHOUSE_URL and no API_KEY_SECRET, a ConfigError says what to set.
  const keySecret = withApi ? loadApiKeySecret(ctx.config) : undefined;
  try {
    let simulator: Simulator | undefined;
    if (role === 'demo') ({ simulator, config: ctx.config } = await startDemoWorld(ctx));
    let opened: RoleStore | undefined;
    if (withAggregate || withApi || withJobs) opened = await openRoleStore(ctx, { migrate: whole });
    if (simulator && opened) await seedDemo(ctx, opened.store, simulator);
    // An API replica reads the trades of the bus for its stream; alone on the in-process bus it would read nothing.
    const bus = withIngest || withAggregate || (withApi && ctx.config.KAFKA_BROKERS) ? await openRoleBus(ctx, !whole) : undefined;
    if (withAggregate && opened && bus) await startAggregate(ctx, opened, bus);
    if (withIngest && bus) {
      const sim = simulator;
      // Beside the API, the collectors get a thread of their own: their frames must not hold its event loop.
      await (withApi ? startIngestWorker : startIngest)(ctx, bus, { ...selection, endpointsOf: (venue) => (sim && isSimulatedVenue(venue.id) ? sim.endpoints(venue.id) : undefined) });
    }
    if (withJobs && opened) {
      const jobs = await startJobs(serviceJobs(ctx.config), { store: opened.store, log: ctx.log.child({ part: 'jobs' }), redisUrl: ctx.config.REDIS_URL });
      ctx.life.add('jobs', () => jobs.stop());
    }
    if (role === 'demo' && opened && keySecret) await provisionDemoKey(ctx, opened.store, keySecret);
    if (whole && opened && keySecret) {
      // Beside the sinks and the index runner, the API too gets a thread of its own.
      await startApiThread(ctx, opened, { role, bus, keySecret });
    } else {
      const http = await startHttp(ctx, opened, { api: withApi, aggregatorHere: withAggregate, bus, keySecret });
      if (http.keys) await startAdminChannel(ctx, http.keys);
    }
  } catch (err) {
    ctx.log.fatal({ err }, 'failed to start');
    await ctx.life.shutdown('start failure');
    process.exit(1);
  }
}

const [role, ...rest] = process.argv.slice(2);
answerHelpAndVersion(process.argv.slice(2), usage);
if (!roles.includes(role as Role)) {
  console.error(usage);
  process.exit(2);
}
run(role as Role, rest).catch((err: unknown) => {
  if ((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    console.error(`${(err as Error).message}\n${usage}`);
    process.exit(2);
  }
  console.error(err instanceof ConfigError ? err.message : redactCredentials(err instanceof Error ? (err.stack ?? err.message) : String(err)));
  process.exit(err instanceof ConfigError ? 2 : 1);
});
