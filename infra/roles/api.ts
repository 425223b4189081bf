import type { KeyStore } from '../../api/keys.ts';
import { startApi } from '../../api/server.ts';
import type { Bus } from '../bus/bus.ts';
import { loadIndexLagMs } from '../../api/status/statusData.ts';
import { busTrades } from '../../api/stream/tradeFeed.ts';
import { observeRequests, withinMs } from '../health.ts';
import type { RoleContext } from './context.ts';
import { roleOpsRouter, startOpsHttp } from './ops.ts';
import type { RoleStore } from './store.ts';

/**
 * The API on PORT, with /health, /ready and /metrics beside it; a role without the API serves only
 * those three, on the same port (ops.ts). An API replica without the aggregator sees the pipeline
 * through the store: its readiness checks the newest second of the index.
 */
export async function startHttp(ctx: RoleContext, opened: RoleStore | undefined, options: { api: boolean; aggregatorHere: boolean; bus?: Bus; keySecret?: string }): Promise<{ url: string; keys?: KeyStore }> {
  const { config, log, life, metrics, checks } = ctx;
  // Ahead of the pipeline's queries when the aggregator runs here too (storeLane.ts).
  const store = opened?.foreground;
  if (!options.api || !store) return startOpsHttp(ctx, opened);
  if (!options.aggregatorHere) {
    checks.push({
      name: 'index',
      check: async () => {
        const lagMs = await loadIndexLagMs(store, Date.now());
        return lagMs === undefined ? { ok: false, reason: 'no index second in the last hour' } : withinMs('lagMs', lagMs, config.READY_MAX_INDEX_LAG_MS, 'the index is behind by');
      },
    });
  }
  const ops = roleOpsRouter(ctx, opened);
  const observe = observeRequests(metrics, { log: log.child({ part: 'access' }), level: config.ACCESS_LOG_LEVEL });
  const api = await startApi({ store, config, trades: options.bus && busTrades(options.bus), log: log.child({ part: 'api' }), ops: { observe, router: ops.router, status: ops.view }, metrics, keyStore: { secret: options.keySecret } });
  life.add('api', 'front', () => api.close());
  log.info({ url: api.url }, 'api listening');
  return { url: api.url, keys: api.keys };
}
