import { parseArgs } from 'node:util';
import { answerHelpAndVersion } from '../cli.ts';
import type { RoleContext } from './context.ts';
import type { IngestSelection } from './ingest.ts';

// The composition root: the only code that imports every layer. Each role is the parts below, in
// this order; each part registers its stop, its metrics and its readiness checks in the context.
// A part's modules are imported when its role runs it, never before: --help and --version load
// nothing, the api, aggregate and jobs roles load neither the collectors nor ccxt, and only the demo
// loads the simulator, so a deployment ships without test/ and simulator/ (test/layers.test.ts,
// infra/__tests__/productionTree.system.test.ts). Type-only imports are erased: they load nothing.
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

/** The parts a role runs. */
interface Parts {
  /** all and demo: every part, in one process, the store migrated first. */
  whole: boolean;
  ingest: boolean;
  aggregate: boolean;
  api: boolean;
  jobs: boolean;
}

function partsOf(role: Role): Parts {
  const whole = role === 'all' || role === 'demo';
  return { whole, ingest: whole || role === 'ingest', aggregate: whole || role === 'aggregate', api: whole || role === 'api', jobs: whole || role === 'jobs' };
}

interface Options {
  venues?: string;
  assets?: string;
}

/** Process-wide: what stops the process, and what a stray error does. */
async function startProcess(role: Role): Promise<RoleContext> {
  const [{ loadConfig }, { createLogger }, { Lifecycle }, { createMetrics, sampledCounter }] = await Promise.all([import('../config.ts'), import('../log.ts'), import('./lifecycle.ts'), import('../metrics.ts')]);
  const config = loadConfig();
  const log = createLogger(config.LOG_LEVEL, { role });
  const life = new Lifecycle(log, config.SHUTDOWN_DEADLINE_MS);
  const { boundMainHeap, limitHeapGrowth } = await import('./mainHeap.ts');
  limitHeapGrowth(config.HEAP_GROWING_PERCENT);
  boundMainHeap({ config, log, life });
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

/** The venues and assets the collectors follow; --venues and --assets belong to the roles that collect. */
async function readSelection(role: Role, parts: Parts, options: Options): Promise<Omit<IngestSelection, 'endpointsOf'> | undefined> {
  if (!parts.ingest) {
    const given = (['venues', 'assets'] as const).find((name) => options[name] !== undefined);
    if (given === undefined) return undefined;
    const { ConfigError } = await import('../config.ts');
    throw new ConfigError(`--${given} is an option of the roles that collect (ingest, all, demo), not of ${role}`);
  }
  const [{ selectCcxtVenues, selectVenues }, { selectAssets }] = await Promise.all([import('../../ingest/venues/registry.ts'), import('../../ingest/assetSelection.ts')]);
  return { venues: selectVenues(options.venues), ccxtVenues: selectCcxtVenues(options.venues), assets: selectAssets(options.assets) };
}

async function run(role: Role, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { venues: { type: 'string' }, assets: { type: 'string' }, 'list-venues': { type: 'boolean' } }, allowPositionals: false });
  if (values['list-venues']) {
    const { venueTable } = await import('../../ingest/venues/registry.ts');
    process.stdout.write(`${venueTable()}\n`);
    return;
  }
  const parts = partsOf(role);
  const selection = await readSelection(role, parts, values);
  if (role === 'migrate') {
    const [{ loadConfig }, { createLogger }, { migrateStore }] = await Promise.all([import('../config.ts'), import('../log.ts'), import('./store.ts')]);
    const config = loadConfig();
    await migrateStore({ config, log: createLogger(config.LOG_LEVEL, { role }) });
    return;
  }
  const ctx = await startProcess(role);
  // Before anything starts: with CLICKHOUSE_URL and no API_KEY_SECRET, a ConfigError says what to set.
  const keySecret = parts.api ? (await import('../../api/keySecret.ts')).loadApiKeySecret(ctx.config) : undefined;
  try {
    await startParts(role, parts, ctx, { selection, keySecret });
  } catch (err) {
    ctx.log.fatal({ err }, 'failed to start');
    await ctx.life.shutdown('start failure');
    process.exit(1);
  }
}

/**
 * The ingest role alone holds no store; given a ClickHouse server it reads where its recoveries
 * start from it (the embedded store belongs to the aggregator's process).
 */
async function storeToRead(ctx: RoleContext): Promise<import('../store.ts').StoreCalls | undefined> {
  if (!ctx.config.CLICKHOUSE_URL) return undefined;
  const { openStore } = await import('../store.ts');
  try {
    const store = await openStore(ctx.config);
    ctx.life.add('store (last trades)', 'base', () => store.close());
    return store;
  } catch (err) {
    ctx.log.warn({ err }, 'the store could not be opened to read the last stored trades');
    return undefined;
  }
}

/** The role's parts, each imported as it starts. */
async function startParts(role: Role, parts: Parts, ctx: RoleContext, { selection, keySecret }: { selection?: Omit<IngestSelection, 'endpointsOf'>; keySecret?: string }): Promise<void> {
  const demoRole = role === 'demo' ? await import('./demo.ts') : undefined;
  const demo = demoRole && (await demoRole.startDemoWorld(ctx));
  // The demo serves SQL on a port of its choosing unless one was asked for.
  const sqlPortOptional = demo !== undefined && ctx.config.SQL_PORT === undefined;
  if (demo) ctx.config = demo.config;
  const opened = parts.aggregate || parts.api || parts.jobs ? await (await import('./store.ts')).openRoleStore(ctx, { migrate: parts.whole }) : undefined;
  if (demo && opened) await demo.importHistory(opened.store);
  // An API replica reads the trades of the bus for its stream; alone on the in-process bus it would read nothing.
  const bus = parts.ingest || parts.aggregate || (parts.api && ctx.config.KAFKA_BROKERS) ? await (await import('./bus.ts')).openRoleBus(ctx, !parts.whole) : undefined;
  const aggregate = parts.aggregate && opened && bus ? await (await import('./aggregate.ts')).startAggregate(ctx, opened, bus) : undefined;
  // Whatever the role, the process that holds the embedded store serves it to `npm run import`.
  if (opened) await (await import('./storeChannel.ts')).startStoreChannel(ctx, opened, aggregate?.index);
  // And its read-only SQL endpoint, when SQL_PORT asks for it.
  const sql = opened ? await (await import('./sql.ts')).startSql(ctx, { portOptional: sqlPortOptional }) : undefined;
  if (parts.ingest && bus && selection) {
    const { readLastStored, startIngest, startIngestWorker, startLateGaps } = await import('./ingest.ts');
    const store = opened?.store ?? (await storeToRead(ctx));
    const { readAt, ...where } = await readLastStored(ctx, store, selection);
    // Beside the API, the collectors get a thread of their own: their frames must not hold its event loop.
    const ingest = await (parts.api ? startIngestWorker : startIngest)(ctx, bus, { ...selection, endpointsOf: demo?.endpointsOf, ...where });
    if (store && readAt !== undefined) startLateGaps(ctx, store, { ...selection, ...where }, readAt, ingest);
  }
  if (parts.jobs && opened) {
    const [{ startJobs }, { serviceJobs }] = await Promise.all([import('../jobs.ts'), import('./jobList.ts')]);
    const jobs = await startJobs(serviceJobs(ctx.config), { store: opened.store, log: ctx.log.child({ part: 'jobs' }), redisUrl: ctx.config.REDIS_URL });
    ctx.life.add('jobs', 'consumers', () => jobs.stop());
  }
  if (demoRole && opened && keySecret) await demoRole.provisionDemoKey(ctx, opened.store, keySecret);
  if (demoRole && sql) demoRole.showSqlAccess(sql);
  if (parts.whole && opened && keySecret) {
    // Beside the sinks and the index runner, the API too gets a thread of its own.
    await (await import('./apiThread.ts')).startApiThread(ctx, opened, { role, bus, keySecret });
  } else if (parts.api) {
    const http = await (await import('./api.ts')).startHttp(ctx, opened, { api: true, aggregatorHere: parts.aggregate, bus, keySecret });
    if (http.keys) await (await import('./admin.ts')).startAdminChannel(ctx, http.keys);
  } else {
    await (await import('./ops.ts')).startOpsHttp(ctx, opened);
  }
}

/** How a role that could not start exits: 2 for a usage or configuration error, 1 otherwise, its message without credentials. */
async function exitWith(err: unknown): Promise<never> {
  if ((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    console.error(`${(err as Error).message}\n${usage}`);
    process.exit(2);
  }
  const [{ ConfigError }, { redactCredentials }] = await Promise.all([import('../config.ts'), import('../redact.ts')]);
  console.error(err instanceof ConfigError ? err.message : redactCredentials(err instanceof Error ? (err.stack ?? err.message) : String(err)));
  process.exit(err instanceof ConfigError ? 2 : 1);
}

const [role, ...rest] = process.argv.slice(2);
answerHelpAndVersion(process.argv.slice(2), usage);
if (!roles.includes(role as Role)) {
  console.error(usage);
  process.exit(2);
}
run(role as Role, rest).catch(exitWith);
