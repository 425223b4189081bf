import { startApi } from '../../api/server.ts';
import { observeRequests, opsRouter, startOpsServer, withinMs } from '../health.ts';
import type { RoleContext } from './context.ts';
import { storeFaultRoute, type RoleStore } from './store.ts';

/**
 * The API on PORT, with /health, /ready and /metrics beside it; a role without the API serves only
 * those three, on the same port. An API replica without the aggregator sees the pipeline through
 * the store: its readiness checks the newest second of the index.
 */
export async function startHttp(ctx: RoleContext, opened: RoleStore | undefined, options: { api: boolean; aggregatorHere: boolean }): Promise<void> {
  const { config, log, life, metrics, checks } = ctx;
  const store = opened?.store;
  if (options.api && store && !options.aggregatorHere) {
    checks.push({
      name: 'index',
      check: async () => {
        const [row] = await store.rows<{ latest: number }>(
          'SELECT toUnixTimestamp(max(second)) AS latest, count() AS n FROM index_ticks WHERE second > now() - INTERVAL 1 HOUR HAVING n > 0',
        );
        return row ? withinMs('lagMs', Date.now() - (row.latest + 1) * 1000, config.READY_MAX_INDEX_LAG_MS, 'the index is behind by') : { ok: false, reason: 'no index second in the last hour' };
      },
    });
  }
  const ops = opsRouter({ metrics, checks: () => checks, access: { token: config.METRICS_TOKEN } });
  if (opened?.faults) ops.use(storeFaultRoute(opened.faults, log));
  if (options.api && store) {
    const api = await startApi({ store, config, log: log.child({ part: 'api' }), ops: { observe: observeRequests(metrics, { log: log.child({ part: 'access' }), level: config.ACCESS_LOG_LEVEL }), router: ops } });
    life.add('api', () => api.close());
    log.info({ url: api.url }, 'api listening');
  } else {
    const server = await startOpsServer(config.PORT, ops);
    life.add('ops', () => server.close());
    log.info({ url: server.url }, 'health and metrics listening');
  }
}
