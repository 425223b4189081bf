import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type RequestHandler, type Router } from 'express';
import { Counter, Histogram, Registry, type MetricValue } from 'prom-client';
import type { LevelWithSilent } from 'pino';
import { httpServerOptions, limitConnections, type HttpLimitsConfig } from './connectionLimits.ts';
import type { Logger } from './log.ts';
import type { Metrics } from './metrics.ts';
import { isLoopback, operatorOnly, sameSecret, type OperatorHosts } from './operatorAccess.ts';

/** One condition of readiness: `ok` false makes /ready answer 503, with `reason` saying why. */
export interface CheckResult {
  ok: boolean;
  reason?: string;
  /** Figures an operator reads next to the verdict (ages, lags, counts). */
  [detail: string]: unknown;
}

export interface ReadinessCheck {
  name: string;
  check(): Promise<CheckResult> | CheckResult;
}

/** A check on an age or a lag: ok up to `maxMs`, else the reason says how far behind it is. */
export function withinMs(field: string, valueMs: number, maxMs: number, what: string): CheckResult {
  const result: CheckResult = { ok: valueMs <= maxMs, [field]: valueMs };
  if (!result.ok) result.reason = `${what} ${Math.round(valueMs / 1000)} s`;
  return result;
}

/** A check that does not answer within this time has failed. */
const checkTimeoutMs = 3_000;

async function run(check: ReadinessCheck): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, reason: `no answer within ${checkTimeoutMs} ms` }), checkTimeoutMs);
  });
  try {
    return await Promise.race([Promise.resolve().then(() => check.check()), timeout]);
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, CheckResult>;
}

/** Every check, run together: ready when all pass. */
export async function readiness(checks: readonly ReadinessCheck[]): Promise<Readiness> {
  const results = await Promise.all(checks.map(run));
  return { ready: results.every((r) => r.ok), checks: Object.fromEntries(checks.map((c, i) => [c.name, results[i]!])) };
}

/**
 * What a process tells its operator of itself: its metrics and its readiness. Read where they are
 * kept (`localView`), or from another thread (the API's thread asks the main one: infra/roles/apiThread.ts).
 */
export interface ProcessView {
  /** Every metric, as Prometheus text. */
  metricsText(): Promise<string>;
  /** The samples of one metric; undefined where the process has no such metric. */
  metricValues(name: string): Promise<MetricValue<string>[] | undefined>;
  readiness(): Promise<Readiness>;
}

/** The view of this thread's own registry and checks. */
export function localView(metrics: Metrics, checks: () => readonly ReadinessCheck[]): ProcessView {
  return {
    metricsText: () => metrics.registry.metrics(),
    async metricValues(name) {
      const metric = metrics.registry.getSingleMetric(name);
      return metric && (await metric.get()).values;
    },
    readiness: () => readiness(checks()),
  };
}

export interface MetricsAccess {
  /** Bearer token that /metrics requires from any address; unset = loopback clients only. */
  token?: string;
  /** The hosts the operator endpoints answer to (operatorAccess.ts). */
  hosts: OperatorHosts;
}

/** The Prometheus text format (prom-client's Registry.PROMETHEUS_CONTENT_TYPE). */
const prometheusContentType = Registry.PROMETHEUS_CONTENT_TYPE;

/**
 * The operator's endpoints, without a key: `/health` (the process answers), `/ready` (200 when
 * every check passes, else 503 with the failing checks) and `/metrics` (Prometheus text; loopback
 * only unless a token is configured, since it names venues, tables and volumes).
 */
export function opsRouter(options: { view: ProcessView; access: MetricsAccess }): Router {
  const router = express.Router();
  const started = Date.now();
  // Not for web pages: no foreign Origin, no Host we were not told of (operatorAccess.ts); the fault route added later too.
  router.use(['/health', '/ready', '/metrics', '/__faults'], operatorOnly(options.access.hosts));
  router.get('/health', (_req, res) => void res.json({ status: 'ok', uptimeSeconds: Math.round((Date.now() - started) / 1000) }));
  router.get('/ready', async (_req, res) => {
    const { ready, checks } = await options.view.readiness();
    res.status(ready ? 200 : 503).setHeader('Cache-Control', 'no-store').json({ status: ready ? 'ready' : 'not_ready', checks });
  });
  router.get('/metrics', async (req, res) => {
    const { token } = options.access;
    const allowed = token ? sameSecret(req.get('authorization') ?? '', `Bearer ${token}`) : isLoopback(req.socket.remoteAddress);
    if (!allowed) {
      res.status(403).json({ error: { code: 'forbidden', message: token ? 'send the metrics token as Authorization: Bearer <token>' : '/metrics answers loopback clients only (set METRICS_TOKEN to allow others)', status: 403 } });
      return;
    }
    res.setHeader('Content-Type', prometheusContentType);
    res.send(await options.view.metricsText());
  });
  return router;
}

/** The access log: one line per request at `level`; a 5xx answer at warn or above, whatever `level` says (silent: none). */
export interface AccessLog {
  log: Logger;
  level: LevelWithSilent;
}

const levelRank: Record<LevelWithSilent, number> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4, fatal: 5, silent: 6 };

/**
 * Counts every HTTP request by route template (not the raw path, which would make one series per
 * id) and status, and times it; with `access`, logs it (request id, method, route, status, ms).
 * Mounted first, so 401s and 429s are counted too.
 */
export function observeRequests(metrics: Metrics, access?: AccessLog): RequestHandler {
  const registers = [metrics.registry];
  const requests = new Counter({ name: 'mds_http_requests_total', help: 'HTTP requests by route and status.', labelNames: ['route', 'status'], registers });
  const seconds = new Histogram({
    name: 'mds_http_request_duration_seconds',
    help: 'HTTP request latency by route.',
    labelNames: ['route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers,
  });
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    res.once('finish', () => {
      // The API's endpoints name their template in res.locals.route (api/keyedRoutes.ts); Express routes in req.route.
      const route = (res.locals.route as string | undefined) ?? (req.route?.path as string | undefined) ?? 'unmatched';
      const elapsedS = Number(process.hrtime.bigint() - start) / 1e9;
      requests.inc({ route, status: String(res.statusCode) });
      seconds.observe({ route }, elapsedS);
      if (!access || access.level === 'silent') return;
      const level = res.statusCode >= 500 && levelRank[access.level] < levelRank.warn ? 'warn' : access.level;
      // requestId is set by the API's first middleware (api/requestId.ts), which runs after this one.
      access.log[level]({ requestId: res.locals.requestId as string | undefined, method: req.method, route, status: res.statusCode, ms: Math.round(elapsedS * 10_000) / 10 }, 'request');
    });
    next();
  };
}

/** For roles without the API (ingest, aggregate, jobs): the same endpoints on their own port. */
export async function startOpsServer(port: number, router: Router, limits: { config: HttpLimitsConfig; log: Logger; metrics: Metrics }): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.disable('x-powered-by');
  app.use(router);
  // The same timeouts and caps as the API's port: idle sockets must not take the process's file descriptors.
  const server = createServer(httpServerOptions(limits.config), app);
  limitConnections(server, limits.config, limits.log, limits.metrics);
  server.listen(port, '0.0.0.0');
  await once(server, 'listening');
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
