import { migrate, pendingMigrations, SchemaBehindError } from '../migrate.ts';
import { observeStore, type StoreActivity } from '../metrics.ts';
import { openStore, type Store } from '../store.ts';
import { withStoreFaults, type StoreFaults } from '../storeFaults.ts';
import type { RoleContext } from './context.ts';

export interface RoleStore {
  store: Store;
  activity: StoreActivity;
  /** Set with MDS_FAULT_INJECTION: the store can be made to fail (soak runs). */
  faults?: StoreFaults;
}

/**
 * The store, measured, with its readiness check; wrapped for fault injection in soak runs. With
 * `migrate` (the all and demo roles) it is migrated first; without, a schema that is behind this
 * version stops the role with SchemaBehindError (the operator runs `npm run migrate` as its own step).
 */
export async function openRoleStore({ config, log, life, metrics, checks }: RoleContext, options: { migrate: boolean }): Promise<RoleStore> {
  const timeouts = { queryTimeoutMs: config.STORE_QUERY_TIMEOUT_MS, insertTimeoutMs: config.STORE_INSERT_TIMEOUT_MS };
  const opened = await openStore(config, timeouts);
  let applied: string[] = [];
  try {
    if (options.migrate) applied = await migrate(opened, { log });
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
  const { store, activity } = observeStore(metrics, faults?.store ?? opened);
  life.add('store', () => store.close());
  checks.push({ name: 'store', check: async () => (await store.rows('SELECT 1 AS ok'), { ok: true }) });
  return { store, activity, faults };
}

/** The migrate role (`npm run migrate`): applies what is pending, under the migration lock, and returns. */
export async function migrateStore({ config, log }: Pick<RoleContext, 'config' | 'log'>): Promise<void> {
  const store = await openStore(config, { queryTimeoutMs: config.STORE_QUERY_TIMEOUT_MS, insertTimeoutMs: config.STORE_INSERT_TIMEOUT_MS });
  try {
    const applied = await migrate(store, { log });
    log.info({ store: store.description, applied }, applied.length === 0 ? 'schema up to date: nothing to migrate' : `applied ${applied.length} migration${applied.length === 1 ? '' : 's'}`);
  } finally {
    await store.close();
  }
}
