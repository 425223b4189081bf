import type { Router } from 'express';
import { localView, opsRouter, startOpsServer, type ProcessView } from '../health.ts';
import type { RoleContext } from './context.ts';
import type { RoleStore } from './store.ts';
import { storeFaultRoute } from './storeFaultRoute.ts';
import { operatorHostsOf } from '../operatorAccess.ts';

/**
 * /health, /ready and /metrics over this process's metrics and readiness checks, with the store's
 * fault route in soak runs: the operator endpoints every role serves, beside the API or alone.
 */
export function roleOpsRouter({ log, metrics, checks, config }: RoleContext, opened: RoleStore | undefined): { view: ProcessView; router: Router } {
  const view = localView(metrics, () => checks);
  const router = opsRouter({ view, access: { token: config.METRICS_TOKEN, hosts: operatorHostsOf(config) } });
  if (opened?.faults) router.use(storeFaultRoute(opened.faults, log));
  return { view, router };
}

/** A role without the API (ingest, aggregate, jobs) serves only the operator endpoints, on PORT. */
export async function startOpsHttp(ctx: RoleContext, opened: RoleStore | undefined): Promise<{ url: string }> {
  const server = await startOpsServer(ctx.config.PORT, roleOpsRouter(ctx, opened).router, ctx);
  ctx.life.add('ops', 'front', () => server.close());
  ctx.log.info({ url: server.url }, 'health and metrics listening');
  return { url: server.url };
}
