import { Gauge } from 'prom-client';
import { minFreeBytes, watchDiskSpace } from '../diskSpace.ts';
import type { Logger } from '../log.ts';
import { migrate, pendingMigrations, SchemaBehindError } from '../migrate.ts';
import { observeStore, type StoreActivity } from '../metrics.ts';
import { applyRetention } from '../retention.ts';
import { openStore, type Store } from '../store.ts';
import { laneStore } from '../storeLane.ts';
import { watchStoreMemory } from '../storeMemory.ts';
import { withStoreFaults, type StoreFaults } from '../storeFaults.ts';
import type { RoleContext } from './context.ts';

/**
 * The pipeline's queries in chDB's queue at once. Two keep the engine busy while the event loop
 * sends the next one; an API query then waits for at most two of them.
 */
const backgroundQueriesInFlight = 2;

/** mds_store_queries_waiting, set by the lane. */
function waitingGauge(metrics: RoleContext['metrics']): (waiting: number) => void {
  const gauge = new Gauge({
    name: 'mds_store_queries_waiting',
    help: "The pipeline's queries waiting for a place in the embedded store's queue (two at a time go in; the API's go straight). Growing without end: the store cannot keep up.",
    registers: [metrics.registry],
  });
  return (waiting) => gauge.set(waiting);
}

export interface RoleStore {
  /** The store for the pipeline, the jobs and maintenance: embedded, its queries share a lane (storeLane.ts). */
  store: Store;
  /** The same store with its queries sent straight, ahead of those waiting in the lane: the API's. */
  foreground: Store;
  activity: StoreActivity;
  /** Set with MDS_FAULT_INJECTION: the store can be made to fail (soak runs). */
  faults?: StoreFaults;
}

/** Applies the pending migrations, then each table's retention (STORE_RETENTION_DAYS); returns the migrations applied. */
async function migrateWithRetention(store: Store, config: RoleContext['config'], log: Logger): Promise<string[]> {
  const applied = await migrate(store, { log });
  await applyRetention(store, config.STORE_RETENTION_DAYS, log);
  return applied;
}

/**
 * The store, measured, with its readiness checks (`store`, `disk`) and its disk's gauges; wrapped
 * for fault injection in soak runs. With `migrate` (the all and demo roles) it is migrated first,
 * its tables' retention applied; without, a schema that is behind this version stops the role with
 * SchemaBehindError (the operator runs `npm run migrate` as its own step).
 */
export async function openRoleStore({ config, log, life, metrics, checks }: RoleContext, options: { migrate: boolean }): Promise<RoleStore> {
  const timeouts = { queryTimeoutMs: config.STORE_QUERY_TIMEOUT_MS, insertTimeoutMs: config.STORE_INSERT_TIMEOUT_MS };
  const opened = await openStore(config, timeouts);
  let applied: string[] = [];
  try {
    if (options.migrate) applied = await migrateWithRetention(opened, config, log);
    else {
      const pending = await pendingMigrations(opened);
      if (pending.length > 0) throw new SchemaBehindError(pending);
    }
  } catch (err) {
    await opened.close();
    throw err;
  }
  log.info({ store: opened.description, applied: applied.length }, 'store ready');
  let faults: StoreFaults | undefined;
  if (config.MDS_FAULT_INJECTION) {
    log.warn('MDS_FAULT_INJECTION is set: POST /__faults/store can make the store fail (soak runs only)');
    faults = withStoreFaults(opened, timeouts);
  }
  const { store: foreground, activity } = observeStore(metrics, faults?.store ?? opened);
  // A ClickHouse server runs queries side by side: no lane there.
  const store = config.CLICKHOUSE_URL ? foreground : laneStore(foreground, { inFlight: backgroundQueriesInFlight, waitMs: timeouts.queryTimeoutMs, onWaiting: waitingGauge(metrics) });
  life.add('store', 'base', () => store.close());
  checks.push({ name: 'store', check: async () => (await foreground.rows('SELECT 1 AS ok'), { ok: true }) });
  watchDiskSpace({ store, metrics, checks, minFreeBytes: minFreeBytes(config) });
  watchStoreMemory({ store, metrics });
  return { store, foreground, activity, faults };
}

/** The migrate role (`npm run migrate`): applies what is pending, under the migration lock, and the tables' retention, and returns. */
export async function migrateStore({ config, log }: Pick<RoleContext, 'config' | 'log'>): Promise<void> {
  const store = await openStore(config, { queryTimeoutMs: config.STORE_QUERY_TIMEOUT_MS, insertTimeoutMs: config.STORE_INSERT_TIMEOUT_MS });
  try {
    const applied = await migrateWithRetention(store, config, log);
    log.info({ store: store.description, applied }, applied.length === 0 ? 'schema up to date: nothing to migrate' : `applied ${applied.length} migration${applied.length === 1 ? '' : 's'}`);
  } finally {
    await store.close();
  }
}
