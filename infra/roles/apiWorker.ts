// The API of a process that also collects and aggregates (roles all and demo), in a worker thread
// of its own (startApiThread, apiThread.ts): this event loop answers requests and nothing else, so
// the sinks' inserts and the index runner never hold a response back. The store, the process's
// metrics and readiness, and the bus's trades stay in the main thread, asked for by message.
// Nothing here may load chDB: it binds one data directory per process, and a worker thread that
// loaded it brings the whole process down when it exits.
import { parentPort, workerData } from 'node:worker_threads';
import { collectDefaultMetrics, Registry, type MetricValue } from 'prom-client';
import { startApi } from '../../api/server.ts';
import type { TradeSource } from '../../api/stream/tradeFeed.ts';
import type { Config } from '../config.ts';
import type { TradeEvent } from '../events.ts';
import { observeRequests, opsRouter, type ProcessView, type Readiness } from '../health.ts';
import { createLogger } from '../log.ts';
import type { StoreCalls } from '../store.ts';
import type { StoreFault } from '../storeFaults.ts';
import { startAdminChannel } from './admin.ts';
import { Lifecycle } from './lifecycle.ts';
import { storeFaultRoute } from './storeFaultRoute.ts';
import { operatorHostsOf } from '../operatorAccess.ts';
import { answerParent, type WorkerLifeMessage } from './workerThread.ts';

export interface ApiWorkerData {
  config: Config;
  role: string;
  /** API_KEY_SECRET, or the one kept in the data directory (api/keySecret.ts). */
  keySecret: string;
  /** Readable log lines: the parent's stdout is a terminal (a worker's stdout never is). */
  prettyLog: boolean;
}

/** What the API's thread asks of the main thread. */
export type ApiRequest =
  | { call: 'rows'; query: string; params: Record<string, unknown> }
  | { call: 'insert'; table: string; rows: readonly object[]; dedupToken: string | undefined }
  | { call: 'metricsText' }
  | { call: 'metricValues'; name: string }
  | { call: 'readiness' };

/** The answer to each request, by its call. */
export interface ApiAnswers {
  rows: unknown[];
  insert: void;
  metricsText: string;
  metricValues: MetricValue<string>[] | undefined;
  readiness: Readiness;
}

/** What the worker tells its parent, beside its life (workerThread.ts). */
export type ApiWorkerMessage =
  | { type: 'ask'; id: number; request: ApiRequest }
  | { type: 'listening'; url: string }
  /** The assets whose trades the stream's subscribers want now (none at first). */
  | { type: 'trades'; assets: string[] }
  | { type: 'fault'; fault: StoreFault };

/** What the parent tells the worker, beside 'stop'. */
export type ApiParentMessage =
  | { type: 'reply'; id: number; value: unknown }
  | { type: 'reply'; id: number; error: { name: string; message: string } }
  | { type: 'trades'; events: TradeEvent[] };

const port = parentPort!;
const post = (message: ApiWorkerMessage | WorkerLifeMessage) => port.postMessage(message);
const data = workerData as ApiWorkerData;
const { config } = data;
const log = createLogger(config.LOG_LEVEL, { role: data.role, thread: 'api' }, data.prettyLog);
const life = new Lifecycle(log, config.SHUTDOWN_DEADLINE_MS);
answerParent(port, life);

const waiting = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
let nextId = 0;
let publishTrades: ((events: readonly TradeEvent[]) => void) | undefined;
port.on('message', (message: ApiParentMessage) => {
  if (message.type === 'trades') return publishTrades?.(message.events);
  if (message.type !== 'reply') return;
  const call = waiting.get(message.id);
  waiting.delete(message.id);
  if ('error' in message) call?.reject(Object.assign(new Error(message.error.message), { name: message.error.name }));
  else call?.resolve(message.value);
});

function ask<C extends ApiRequest['call']>(request: Extract<ApiRequest, { call: C }>): Promise<ApiAnswers[C]> {
  const id = nextId++;
  const answer = new Promise<ApiAnswers[C]>((resolve, reject) => waiting.set(id, { resolve: resolve as (value: unknown) => void, reject }));
  post({ type: 'ask', id, request });
  return answer;
}

// The main thread's store keeps its deadlines: a call past one is rejected there, and so here.
const store: StoreCalls = {
  rows: <T>(query: string, params: Record<string, unknown> = {}) => ask({ call: 'rows', query, params }) as Promise<T[]>,
  insert: (table, rows, dedupToken) => ask({ call: 'insert', table, rows, dedupToken }),
};

// This thread's own metrics: the requests, and its event loop, heap and GC under a prefix of their
// own (the unprefixed defaults are the main thread's).
const metrics = { registry: new Registry() };
collectDefaultMetrics({ register: metrics.registry, prefix: 'mds_api_thread_', eventLoopMonitoringPrecision: 20 });
const view: ProcessView = {
  metricsText: async () => `${await ask({ call: 'metricsText' })}\n${await metrics.registry.metrics()}`,
  metricValues: (name) => ask({ call: 'metricValues', name }),
  readiness: () => ask({ call: 'readiness' }),
};
const router = opsRouter({ view, access: { token: config.METRICS_TOKEN, hosts: operatorHostsOf(config) } });
if (config.MDS_FAULT_INJECTION) router.use(storeFaultRoute({ set: (fault) => post({ type: 'fault', fault }) }, log));

/** How often the stream's trade subscriptions are compared with those the main thread was told of. */
const tradeWatchMs = 200;
// Only the trades someone subscribed to cross from the main thread: all of them would cost both
// threads a copy of every trade.
const trades: TradeSource = async (publish, subscribed) => {
  publishTrades = publish;
  let told = '';
  const watch = setInterval(() => {
    const assets = [...subscribed()].sort();
    if (assets.join() === told) return;
    told = assets.join();
    post({ type: 'trades', assets });
  }, tradeWatchMs);
  return {
    stop: async () => {
      clearInterval(watch);
      publishTrades = undefined;
    },
  };
};

const observe = observeRequests(metrics, { log: log.child({ part: 'access' }), level: config.ACCESS_LOG_LEVEL });
const api = await startApi({ store, config, trades, log: log.child({ part: 'api' }), ops: { observe, router, status: view }, metrics, keyStore: { secret: data.keySecret } });
life.add('api', 'front', () => api.close());
log.info({ url: api.url }, 'api listening');
post({ type: 'listening', url: api.url });
await startAdminChannel({ config, log, life }, api.keys);
post({ type: 'started' });
